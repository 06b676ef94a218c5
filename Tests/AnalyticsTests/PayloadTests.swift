// The three payloads a replay is made of are read by field (Payloads.swift): each read type
// must take its fields from what records and the weather-fetcher publish (the Contracts
// types, encoded as they encode them), and a field the projections do not read must not
// make its event unreadable, while one they read still does.
import Contracts
import Foundation
import Testing
import Wire

@testable import AnalyticsService

@Suite struct PayloadTests {
    /// A Contracts value as its producer publishes it: encoded to a frame's JSON and parsed.
    func published(_ value: some Encodable) throws -> JSONValue {
        try JSONValue.parse(WireCoding.encode(value))
    }

    @Test func readTypesTakeTheirFieldsFromThePublishedRecords() throws {
        var fill = Fillup.sample
        fill.odometer = Milli(thousandths: 12_345_678)
        fill.trip = nil
        let readFill = try published(fill).decode(FillupRead.self)
        #expect(
            readFill
                == FillupRead(
                    id: fill.id, vehicleId: fill.vehicleId, date: fill.date, odometer: fill.odometer, trip: nil,
                    volume: fill.volume, totalMinor: fill.totalMinor, currency: fill.currency, full: fill.full,
                    missed: fill.missed))

        let fish = Catch.sample
        let readFish = try published(fish).decode(CatchRead.self)
        #expect(
            readFish
                == CatchRead(
                    id: fish.id, species: fish.species, bait: fish.bait, water: fish.water, latitude: fish.latitude,
                    longitude: fish.longitude, caughtAt: fish.caughtAt))

        for conditions in [Conditions.sample, Self.bare] {
            let ready = ConditionsReady(catchId: "c1", summary: "s", conditions: conditions)
            let read = try published(ready).decode(ConditionsReadyRead.self)
            let c = conditions
            #expect(read.catchId == "c1")
            #expect(
                read.conditions
                    == ConditionsRead(
                        hour: c.hour, latitude: c.latitude, longitude: c.longitude, water: c.water,
                        temperatureBand: c.temperatureBand, pressureBand: c.pressureBand,
                        pressureTrend: c.pressureTrend, beaufort: c.beaufort, windDirection: c.windDirection, sky: c.sky,
                        timeOfDay: c.timeOfDay, moonPhase: c.moonPhase, tidePhase: c.tidePhase,
                        tideHeightBand: c.tideHeightBand))
        }
    }

    /// An answer with only the fields every answer has.
    static let bare = Conditions(
        source: "forecast", hour: Date(timeIntervalSince1970: 1_777_852_800), latitude: 1.5, longitude: -2.25,
        moonPhase: "new moon", moonAgeDays: 0.5, moonIllumination: 0.01, tide: "skipped")

    @Test func aFieldNotReadCannotMakeAnEventUnreadable() async throws {
        let h = try Harness()
        try await h.feed("vehicle.created", vehicle("v1"))
        // records' own fields of a fill-up, a catch and an answer, damaged: still counted
        guard case .object(var fill) = fillup("f1", date: day(1), odometer: 1000, volume: 10, totalMinor: 3000) else {
            Issue.record("not an object")
            return
        }
        fill["createdAt"] = 5
        fill["pricePerUnitMinor"] = "a lot"
        try await h.feed("fillup.created", .object(fill))
        guard case .object(var caught) = fish("c1", species: "pike", bait: "worm") else { return }
        caught["weight"] = "heavy"
        caught["photo"] = 3
        caught["conditions"] = "pending"
        try await h.feed("catch.created", .object(caught))
        guard case .object(var answer) = ready("c1", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa") else {
            return
        }
        answer["summary"] = .null
        if case .object(var conditions) = answer["conditions"] {
            conditions["temperatureC"] = "warm"
            conditions["tide"] = 0
            answer["conditions"] = .object(conditions)
        }
        try await h.weather("conditions.ready", .object(answer))
        let stats = try await h.call("analytics.fuel.stats", ["vehicleId": "v1"])
        #expect(stats["fills"] == 1, "\(stats)")
        var s = try await h.suggest()
        #expect(s["catches"] == 1 && s["ready"] == 1, "\(s)")
        #expect(s.condition("temperatureBand")?["best"]?["bucket"] == "10 to 15 °C")

        // a field the projection reads, damaged: the payload is unreadable, as before (the
        // consumer logs the event and skips it)
        guard case .object(var other) = fish("c2", species: "pike", bait: "worm") else { return }
        other["latitude"] = "north"
        await #expect(throws: DecodingError.self) { try await h.feed("catch.created", .object(other)) }
        s = try await h.suggest()
        #expect(s["catches"] == 1, "\(s)")
    }
}

/// The plain reading of the three payloads (Payloads.swift) against decoding them, over
/// every one-field change of several payloads: wherever the plain reading gives a value,
/// decoding gives the same one; and it gives one for every payload records and the
/// weather-fetcher publish unchanged.
@Suite struct PlainReadingTests {
    static let replacements: [JSONValue?] = [
        nil, .null, true, false, 0, -1, 7, 1.5, 59.33, "12.3456", .number(JSONNumber(text: "1e2")!),
        .number(JSONNumber(text: "0.0001")!), .number(JSONNumber(text: "9223372036854775808")!),
        .number(JSONNumber(text: "-9223372036854775808")!), .number(JSONNumber(text: "1e300")!), "", "x", "fresh",
        "salt", "FRESH", "2026-05-04T06:00:00Z", "2026-05-04T06:00:00.123+02:00", "2026-05-04 06:00", [], [1], [:],
        ["status": "pending"],
    ]

    /// Every payload with one field (of the payload, or of its `conditions` object) replaced
    /// or removed.
    static func variants(_ payload: JSONValue) -> [JSONValue] {
        guard case .object(let object) = payload else { return [payload] }
        var out: [JSONValue] = [payload]
        for key in object.keys.sorted() + ["extra"] {
            for replacement in replacements {
                var changed = object
                changed[key] = replacement
                out.append(.object(changed))
            }
            if case .object = object[key], key == "conditions" {
                for inner in variants(object[key]!) {
                    var changed = object
                    changed[key] = inner
                    out.append(.object(changed))
                }
            }
        }
        return out
    }

    func check<T: PlainPayload & Equatable>(_ type: T.Type, _ published: [JSONValue]) {
        var plain = 0
        var disagree: [String] = []
        for payload in published {
            guard case .object(let object) = payload else { continue }
            #expect(T(plain: object) != nil, "a published \(T.self) is read plainly: \(payload.jsonText)")
        }
        for payload in published.flatMap(Self.variants) {
            guard case .object(let object) = payload, let value = T(plain: object) else { continue }
            plain += 1
            let decoded = try? payload.decode(T.self)
            if decoded != value { disagree.append(payload.jsonText) }
        }
        #expect(disagree.isEmpty, "\(disagree.count) differ, e.g. \(disagree.prefix(3))")
        #expect(plain > published.count)
    }

    func encoded(_ value: some Encodable) -> JSONValue { (try? JSONValue.parse(WireCoding.encode(value))) ?? .null }

    @Test func fillUps() {
        var partial = Fillup.sample
        partial.odometer = nil
        partial.trip = nil
        partial.note = nil
        check(
            FillupRead.self,
            [
                encoded(Fillup.sample), encoded(partial),
                fillup("f1", date: day(1), odometer: 1000.25, volume: 10.5, totalMinor: 3000, full: false, missed: true),
            ])
    }

    @Test func catches() {
        var plain = Catch.sample
        plain.length = nil
        plain.photo = nil
        check(CatchRead.self, [encoded(Catch.sample), encoded(plain), fish("c1", species: "Pike", bait: "worm")])
    }

    @Test func conditions() {
        check(
            ConditionsReadyRead.self,
            [
                encoded(ConditionsReady.sample),
                encoded(ConditionsReady(catchId: "c", summary: "s", conditions: PayloadTests.bare)),
                ready("c1", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa", tide: "rising", water: "salt"),
            ])
    }
}
