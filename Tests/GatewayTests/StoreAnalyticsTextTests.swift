// The pure parts of the store and analytics commands: item matching, ledger amounts, the
// wallet and quote texts, ranges sent to analytics, and how its ratios are shown.
import Contracts
import Foundation
import Testing
import Wire

@testable import Gateway

@Suite("store texts")
struct StoreTextTests {
    let items: [ItemView] = [
        ItemView(id: "pencil", name: "Sharpened Pencil", description: "", priceCents: 500, owned: false, purchasedAt: nil),
        ItemView(id: "notebook", name: "Practice Notebook", description: "", priceCents: 2000, owned: false, purchasedAt: nil),
        ItemView(id: "metronome", name: "Brass Metronome", description: "", priceCents: 5000, owned: true, purchasedAt: nil),
        ItemView(
            id: "masters-toolkit", name: "Master's Toolkit", description: "", priceCents: 200_000, owned: false,
            purchasedAt: nil),
    ]

    @Test("an item is named by id or name, case-insensitively, or by an unambiguous part")
    func match() throws {
        #expect(try StoreText.match("pencil", in: items).id == "pencil")
        #expect(try StoreText.match("PENCIL", in: items).id == "pencil")
        #expect(try StoreText.match("brass metronome", in: items).id == "metronome")
        #expect(try StoreText.match("  Practice Notebook ", in: items).id == "notebook")
        #expect(try StoreText.match("metro", in: items).id == "metronome", "a prefix of the id")
        #expect(try StoreText.match("toolkit", in: items).id == "masters-toolkit", "a part of the name")
    }

    @Test("no match is not_found listing the ids; several are invalid_argument listing them")
    func mismatch() {
        #expect {
            try StoreText.match("piano", in: items)
        } throws: { error in
            let error = error as? ServiceError
            return error?.code == .notFound && error?.message.contains("pencil, notebook, metronome") == true
        }
        #expect {
            try StoreText.match("p", in: items)
        } throws: { error in
            let error = error as? ServiceError
            return error?.code == .invalidArgument && error?.message.contains("pencil (Sharpened Pencil)") == true
                && error?.message.contains("notebook (Practice Notebook)") == true
        }
        #expect(throws: ServiceError.self) { try StoreText.match(" ", in: items) }
    }

    @Test("ledger amounts carry their sign; cents read as the hours that earn them")
    func amounts() {
        #expect(StoreText.signed(100) == "+$1.00")
        #expect(StoreText.signed(-5000) == "-$50.00")
        #expect(StoreText.signed(0) == "$0.00")
        #expect(StoreText.signed(123_456) == "+$1,234.56")
        #expect(StoreText.hours(cents: 500) == "5h 0m")
        #expect(StoreText.hours(cents: 2050) == "20h 30m")
    }

    @Test("a ledger row says what it is about")
    func detail() {
        func entry(_ kind: String, durationMs: Int64?, reference: String) -> LedgerEntryView {
            LedgerEntryView(
                id: "l", kind: kind, amountCents: 0, durationMs: durationMs, balanceAfterCents: 0, netWorthAfterCents: 0,
                reference: reference, at: Date(timeIntervalSince1970: 0))
        }
        let earning = entry("earning", durationMs: 3_723_000, reference: "0196…")
        #expect(StoreText.detail(earning) == "1:02:03 tracked")
        let purchase = entry("purchase", durationMs: nil, reference: "pencil")
        #expect(StoreText.detail(purchase, names: ["pencil": "Sharpened Pencil"]) == "bought Sharpened Pencil")
        #expect(StoreText.detail(purchase) == "bought pencil")
    }

    @Test("the wallet explains cash = net worth − spent")
    func wallet() {
        let text = StoreText.wallet(
            WalletView(netWorthCents: 6000, netWorthMs: 216_000_000, spentCents: 5000, cashCents: 1000))
        #expect(text.contains("net worth:  $60.00  (60:00:00 tracked, all time)"), "\(text)")
        #expect(text.contains("spent:      $50.00"), "\(text)")
        #expect(text.contains("cash:       $10.00"), "\(text)")
        #expect(text.contains("cash = net worth − spent"))
        #expect(
            StoreText.wallet(WalletView(netWorthCents: 0, netWorthMs: 0, spentCents: 0, cashCents: 0))
                .contains("cash:       $0.00"))
    }

    @Test("the intro is its text; a quote has its author, the attribution and 'new today' once")
    func quote() {
        #expect(StoreText.quote(QuoteResult(kind: "intro", text: "Welcome to Ten-Grand.")) == "Welcome to Ten-Grand.")
        let quote = QuoteResult(
            kind: "quote", text: "Well begun is half done.", author: "Aristotle",
            attribution: "Inspirational quotes provided by ZenQuotes API (https://zenquotes.io)", isNew: true,
            day: "2026-05-02")
        let text = StoreText.quote(quote)
        #expect(text.hasPrefix("Quote of the day for 2026-05-02 (new today)\n"), "\(text)")
        #expect(text.contains("“Well begun is half done.”\n    — Aristotle"))
        #expect(text.hasSuffix("Inspirational quotes provided by ZenQuotes API (https://zenquotes.io)"))
        var seen = quote
        seen.isNew = false
        #expect(!StoreText.quote(seen).contains("new today"))
    }

    @Test("long text is folded at spaces, paragraphs kept")
    func wrap() {
        #expect(StoreText.wrap("one two three", width: 7) == "one two\nthree")
        #expect(StoreText.wrap("a verylongword b", width: 5) == "a\nverylongword\nb")
        #expect(StoreText.wrap("short\n\nnext", width: 80) == "short\n\nnext")
        let intro = String(repeating: "practice makes ", count: 30)
        #expect(StoreText.quote(QuoteResult(kind: "intro", text: intro)).split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test("the local time zone is sent only when it is a name the service can read")
    func zone() {
        #expect(QuoteCommand.localZone(["TZ": "Europe/Paris"]) == "Europe/Paris")
        #expect(QuoteCommand.localZone(["TZ": ":America/New_York"]) == "America/New_York")
        if let zone = QuoteCommand.localZone(["TZ": "not/a-zone"]) { #expect(TimeZone(identifier: zone) != nil) }
    }
}

@Suite("analytics texts")
struct AnalyticsTextTests {
    @Test("ranges: a plain date stays a UTC day, --to DATE includes that day")
    func range() throws {
        let body = try Analytics.range(from: "2026-05-01", to: "2026-05-31")
        #expect(body.from == "2026-05-01")
        #expect(body.to == "2026-06-01")
        #expect(try Analytics.range(from: nil, to: "2026-12-31").to == "2027-01-01")
        #expect(try Analytics.range(from: nil, to: "2028-02-28").to == "2028-02-29", "leap year")
        #expect(try Analytics.range(from: "2026-05-01T10:00:00+02:00", to: nil).from == "2026-05-01T08:00:00Z")
        #expect(try Analytics.range(from: nil, to: nil) == SummaryRequest())
        #expect(throws: ServiceError.self) { try Analytics.range(from: "May 1st", to: nil) }
        #expect(!Analytics.isDate("2026-02-30"))
        #expect(Analytics.shift("2026-06-01", days: -1) == "2026-05-31")
    }

    @Test("fractional money keeps one more decimal only when it is not zero")
    func money() {
        #expect(Analytics.money(minor: 11.08) == "$0.111")
        #expect(Analytics.money(minor: 300) == "$3.00")
        #expect(Analytics.money(minor: 345.5) == "$3.455")
        #expect(Analytics.money(minor: 177.42, extra: 0) == "$1.77")
        #expect(Analytics.money(minor: 123_456.7, extra: 0) == "$1,234.57")
        #expect(Analytics.money(minor: 1999.5, currency: "EUR", extra: 0) == "20.00 EUR")
        #expect(Analytics.money(minor: 150.4, currency: "JPY", extra: 1) == "150.4 JPY")
        #expect(Analytics.money(minor: 150, currency: "JPY", extra: 1) == "150 JPY")
        #expect(Analytics.money(minor: nil) == "-")
        #expect(Analytics.exponentPlain(1108, decimals: 4) == "0.1108")
        #expect(Analytics.exponentPlain(-5, decimals: 2) == "-0.05")
    }

    @Test("shares as percentages, ratios with 2 decimals, worked time as hours and minutes")
    func numbers() {
        #expect(Analytics.percent(share: Decimal(string: "0.75")!) == "75%")
        #expect(Analytics.percent(share: Decimal(string: "0.667")!) == "66.7%")
        #expect(Analytics.percent(share: Decimal(string: "0.0005")!) == "0.1%")
        #expect(Analytics.percent(share: 1) == "100%")
        #expect(Analytics.percent(share: 0) == "0%")
        #expect(Analytics.number(27.08) == "27.08")
        #expect(Analytics.number(25) == "25.00")
        #expect(Analytics.worked(milliseconds: 30_600_000) == "8h 30m")
        #expect(Analytics.worked(milliseconds: 59_999) == "0h 00m")
        #expect(EconomyUnitsOption.litresPer100km.wire == "l_per_100km")
        #expect(EconomyUnitsOption.mpgUS.wire == "mpg_us")
    }

    @Test("fuel stats: figures when there is an average, the service's reason when not")
    func fuel() throws {
        let stats = try ([
            "vehicleId": "v", "units": "mpg_us", "closedDistance": 650, "closedVolume": 24,
            "unitLabel": "mpg (US)", "distanceUnit": "mi", "volumeUnit": "gal", "fills": 3, "closedSegments": 2,
            "average": 27.08, "last": ["fillId": "b", "date": "2026-05-18T12:00:00Z", "value": 25],
            "best": ["fillId": "a", "date": "2026-05-09T12:00:00Z", "value": 30],
            "worst": ["fillId": "b", "date": "2026-05-18T12:00:00Z", "value": 25],
            "spending": [
                [
                    "currency": "USD", "fills": 3, "totalMinor": 10200, "volume": 34, "averagePricePerUnitMinor": 300,
                    "costPerDistance": ["minor": 11.08, "per": "mi"],
                ]
            ],
        ] as JSONValue).decode(Contracts.FuelStats.self)
        let text = FuelText.stats(stats, car: "Civic")
        #expect(text.hasPrefix("Civic: 3 fill-ups, 2 closed segments; economy in mpg (US)"), "\(text)")
        #expect(text.contains("\naverage:        27.08 mpg (US)\n"), "\(text)")
        #expect(text.contains("best:") && text.contains("30.00 mpg (US)"))
        #expect(text.contains("$102.00 on 3 fill-ups, 34 gal"), "\(text)")
        #expect(text.contains("$3.00/gal"))
        #expect(text.contains("cost per mi:") && text.contains("$0.111"), "\(text)")

        let early = try ([
            "vehicleId": "v", "units": "l_per_100km", "closedDistance": 0, "closedVolume": 0,
            "unitLabel": "L/100 km", "distanceUnit": "km", "volumeUnit": "l", "fills": 1, "closedSegments": 0,
            "reason": "add one more full fill-up to see your average",
            "spending": [["currency": "EUR", "fills": 1, "totalMinor": 6120, "volume": 38.5, "averagePricePerUnitMinor": 158.96]],
        ] as JSONValue).decode(Contracts.FuelStats.self)
        let first = FuelText.stats(early, car: "Van")
        #expect(first.contains("\naverage:            add one more full fill-up to see your average\n"), "\(first)")
        #expect(first.contains("61.20 EUR on 1 fill-up, 38.5 l"), "\(first)")
        #expect(first.contains("1.59 EUR/l"), "\(first)")
        #expect(!first.contains("best:"))
    }

    @Test("expense summary: per currency, the inclusive last day, periods and the largest")
    func expenses() throws {
        let summary = try ([
            "by": "month", "from": "2026-05-01", "to": "2026-06-01", "days": 31, "timeZone": "UTC",
            "currencies": [
                [
                    "currency": "USD", "totalMinor": 5500, "count": 4, "averagePerDayMinor": 177.42,
                    "groups": [["key": "2026-05", "totalMinor": 5500, "count": 4]],
                    "largest": [["id": "x", "name": "Dinner", "amountMinor": 3000, "date": "2026-05-03T12:00:00Z", "category": "food"]],
                ]
            ],
        ] as JSONValue).decode(Contracts.ExpenseSummary.self)
        let text = ExpenseText.summary(summary)
        #expect(text.hasPrefix("USD: $55.00 in 4 expenses, 2026-05-01 to 2026-05-31 (31 days): $1.77 a day on average"), "\(text)")
        #expect(text.contains("MONTH    TOTAL   COUNT\n2026-05  $55.00  4"), "\(text)")
        #expect(text.contains("Dinner   $30.00  2026-05-03  food"), "\(text)")
        #expect(ExpenseText.csv(summary) == "currency,month,total,count\r\nUSD,2026-05,55.00,4\r\n")
        let none = Contracts.ExpenseSummary(by: "month", from: nil, to: nil, days: 0, currencies: [], timeZone: "UTC")
        #expect(ExpenseText.summary(none) == "no expenses in that range")
    }

    @Test("attendance hours: per period, total, open entries named and not counted")
    func hours() throws {
        let hours = try ([
            "by": "day", "groups": [["key": "2026-05-04", "workedMs": 30_600_000, "hours": 8.5]],
            "totalMs": 30_600_000, "totalHours": 8.5, "timeZone": "UTC",
            "open": [["id": "e1", "kind": "arrival", "at": "2026-05-05T08:55:00Z", "reason": "still open: no departure yet"]],
        ] as JSONValue).decode(AttendanceHours.self)
        let text = AttendanceText.hours(hours, week: false)
        #expect(text.contains("DAY         WORKED  HOURS\n2026-05-04  8h 30m  8.50"), "\(text)")
        #expect(text.contains("total 8h 30m (8.50 h)"))
        #expect(text.contains("still open: no departure yet  (id e1)"))
        #expect(text.hasSuffix("last arrival none yet, last departure none yet"))
    }

    @Test("suggestions: each condition's top bucket with count and share, the basis, best baits")
    func suggest() throws {
        let json: JSONValue = [
            "species": "pike", "catches": 6, "ready": 4, "pending": 1, "unavailable": 1, "confidence": "low",
            "basis": "based on 4 catches: low confidence",
            "note": "not counted: 1 still waiting for weather conditions; 1 without conditions (unavailable)",
            "conditions": [
                [
                    "condition": "temperatureBand", "label": "temperature", "catches": 4,
                    "best": ["bucket": "10 to 15 °C", "count": 3, "share": 0.75, "baits": [["bait": "worm", "count": 2, "share": 0.667]]],
                    "buckets": [
                        ["bucket": "10 to 15 °C", "count": 3, "share": 0.75, "baits": []],
                        ["bucket": "5 to 10 °C", "count": 1, "share": 0.25, "baits": []],
                    ],
                    "confidence": "low", "basis": "based on 4 catches: low confidence",
                ],
                ["condition": "tidePhase", "label": "tide", "catches": 0, "buckets": [], "confidence": "none", "basis": "…"],
            ],
            "baits": [["bait": "worm", "count": 5, "share": 0.833], ["bait": "spinner", "count": 1, "share": 0.167]],
        ]
        let suggestions = try json.decode(Suggestions.self)
        let text = SuggestText.summary(suggestions)
        #expect(text.hasPrefix("pike: 6 catches; based on 4 catches: low confidence\nnot counted: 1 still waiting"), "\(text)")
        #expect(text.contains("temperature  10 to 15 °C   3 of 4  75%    worm (2)"), "\(text)")
        #expect(!text.contains("tide"), "a condition without data has no row")
        #expect(text.hasSuffix("best baits: worm 5 (83.3%), spinner 1 (16.7%)"))
        #expect(SuggestText.csv(suggestions).hasPrefix("condition,label,bucket,count,catches,share\r\ntemperatureBand,temperature,10 to 15 °C,3,4,0.75\r\n"))
    }

    @Test("suggestions: a three-way tie is shown as a tie, not one winner")
    func suggestTie() throws {
        let bucket = { (name: String) -> JSONValue in
            ["bucket": .string(name), "count": 2, "share": 0.333, "baits": [["bait": "worm", "count": 1, "share": 0.5]]]
        }
        let json: JSONValue = [
            "catches": 6, "ready": 6, "pending": 0, "unavailable": 0, "confidence": "medium", "basis": "based on 6 catches",
            "baits": [],
            "conditions": [
                [
                    "condition": "timeOfDay", "label": "time of day", "catches": 6, "best": bucket("dawn"),
                    "buckets": [bucket("dawn"), bucket("dusk"), bucket("night")], "confidence": "medium", "basis": "…",
                ]
            ],
        ]
        let text = SuggestText.summary(try json.decode(Suggestions.self))
        #expect(text.contains("dawn = dusk = night (3-way tie)"), "\(text)")
        #expect(text.contains("2 of 6 each"), "\(text)")
    }

    @Test("errors for people use the CLI's words, not wire field names")
    func userWords() {
        let duration = UserWords.rewrite(
            ServiceError.invalid("durationMs", "must be more than 0 and at most 24 hours (86400000) (got 90000000)"))
        #expect(duration.message == "duration: must be more than 0 and at most 24 hours (got 25:00:00)")
        let caught = UserWords.rewrite(ServiceError.invalid("caughtAt", "must not be in the future (got 2099-01-01T00:00:00Z)"))
        #expect(caught.message == "at: must not be in the future (got 2099-01-01T00:00:00Z)")
        let amount = UserWords.rewrite(ServiceError.invalid("amountMinor", "is too large"))
        #expect(amount.message == "amount: is too large")
        #expect(amount.field == "amountMinor", "the field stays the wire's, for --json")
    }

    @Test("--to before --from is refused in the words typed")
    func rangeBackwards() {
        #expect(throws: ServiceError.self) { try Analytics.range(from: "2026-11-02", to: "2026-11-01") }
        do {
            _ = try Analytics.range(from: "2026-11-02", to: "2026-11-01")
        } catch let error as ServiceError {
            #expect(error.message == "to: must not be before --from (got --from 2026-11-02 --to 2026-11-01)")
        } catch {}
        #expect((try? Analytics.range(from: "2026-11-01", to: "2026-11-01"))?.to == "2026-11-02")
    }

    @Test("one rounding rule: what a saved entry earns is what the ledger credits")
    func earned() {
        // 18 s earn nothing alone, a cent once another 18 s were saved before them
        #expect(TimeValue.earned(18_000, totalAfterMs: 18_000) == 0)
        #expect(TimeValue.earned(18_000, totalAfterMs: 36_000) == 1)
        // 0:03:18 (5 cents on its own) after 0:00:18 already saved: the ledger credits 6
        #expect(TimeValue.cents(198_000) == 5)
        #expect(TimeValue.earned(198_000, totalAfterMs: 198_000 + 18_000) == 6)
    }

    @Test("catch show: a reading that rounds to zero has no sign; fill-ups say why there is no economy")
    func signsAndReasons() {
        #expect(Catches.fixed(-0.04, digits: 1) == "0.0")
        #expect(Catches.fixed(-0.06, digits: 1) == "-0.1")
        #expect(Catches.fixed(-0.4, digits: 0) == "0")
        #expect(Fillups.shortReason(.odometerBackwards) == "- (odometer backwards)")
        #expect(Fillups.shortReason(.closed) == nil)
    }
}

@Suite struct CatchShowTextTests {
    /// A catch of the hour still going says when its weather can come; an older pending one
    /// (the fetcher is working on it) does not.
    @Test func aPendingCatchOfThisHourSaysWhenItsWeatherComes() {
        var fish = Catch.sample
        fish.conditions = CatchConditions(status: .pending, reason: nil, summary: nil)
        let now = Date(timeIntervalSince1970: 1_780_000_000)  // 20:26:40 UTC
        fish.caughtAt = now.addingTimeInterval(-600)  // 20:16:40: the hour 20:00
        let waiting = CatchShow.render(fish, weather: nil, now: now)
        #expect(waiting.contains("waiting"), "\(waiting)")
        #expect(waiting.contains(Catches.time(Date(timeIntervalSince1970: 1_779_998_400 + 3600))), "\(waiting)")
        fish.caughtAt = now.addingTimeInterval(-3 * 3600)
        #expect(!CatchShow.render(fish, weather: nil, now: now).contains("waiting"))
        fish.caughtAt = now.addingTimeInterval(-600)
        fish.conditions = .sample  // ready
        #expect(!CatchShow.render(fish, weather: nil, now: now).contains("waiting"))
    }

    /// A cursor belongs to one water's list: the two-section listing refuses it without
    /// --water (it would be sent to both sections, and the other refuses it).
    @Test func aCatchCursorGoesWithItsWater() throws {
        #expect(throws: (any Error).self) { try Logbook.parseAsRoot(["catch", "list", "--cursor", "abc"]) }
        _ = try Logbook.parseAsRoot(["catch", "list", "--water", "salt", "--cursor", "abc"])
        _ = try Logbook.parseAsRoot(["catch", "list"])
    }

    @Test func relativeTimesAreNamed() {
        #expect(!TimeText.isAbsolute("now") && !TimeText.isAbsolute(" Today ") && !TimeText.isAbsolute("yesterday"))
        #expect(TimeText.isAbsolute("2026-05-01") && TimeText.isAbsolute("2026-05-01T10:00:00Z"))
    }
}
