// Analytics at two sizes in one run: loads fill-ups and catches (with their conditions) into
// a fresh analytics database through the projection code a consumer runs (DatabaseEventSink,
// large transactions with the checkpoint), then measures `analytics.fuel.stats` and
// `analytics.suggest` through the dispatcher, the two stores taking turns (timed to the reply
// frame; the benchmark reads the answer after the clock stops). Queries read stored
// aggregates, so their latency should not grow with the number of records.
//   swift run -c release logbook-bench analytics [--small 1000] [--large 1000000] [--quick]
import AnalyticsService
import ArgumentParser
import Foundation
import Logging
import Runtime
import Storage
import TestSupport
import Wire

struct AnalyticsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics", abstract: "Load fill-ups and catches, then time fuel stats and suggestions.")

    @Option(help: "Fill-ups (and catches) in the small run.") var small = 1_000
    @Option(help: "Fill-ups (and catches) in the large run.") var large = 1_000_000
    @Option(help: "Catches per fill-up (1 = as many catches as fill-ups).") var catchRatio = 1.0
    @Option(help: "Users, one vehicle each (fewer when the size is small: at least 10 fill-ups per vehicle).")
    var users = 1_000
    @Option(
        help: """
            Fill-ups and catches per user at every size (users = size / this), so that both sizes \
            query histories of one size and the ratio shows how a query scales with the store \
            alone. Without it, users are min(--users, size / 10).
            """)
    var perUser: Int?
    @Option(help: "Events per transaction while loading.") var batch = 20_000
    @Option(help: "Timed queries per method and size.") var queries = 2_000
    @Option(help: "Keep the databases in this directory instead of a temporary one.") var directory: String?
    @Flag(
        help: """
            Time the queries on the databases an earlier run with the same sizes kept in --directory, \
            without loading them again (a fresh process, the files as the page cache holds them).
            """)
    var queryOnly = false
    @Flag(help: "The sizes and samples of `logbook-bench all --quick`: 1,000 and 50,000, 300 queries per method and size.")
    var quick = false
    @Flag(help: "Write the aggregates after every event (the live path's pattern, and the code before batching) instead of once per batch.")
    var perEvent = false
    @Flag(
        help: """
            Apply each batch as live events (catch counters written per batch) instead of as a \
            catch-up's backlog (counters recounted once per user at the end, as a rebuild does).
            """)
    var liveBatches = false

    func validate() throws {
        if queryOnly, directory == nil {
            throw ValidationError("--query-only times the stores an earlier run kept: give their --directory")
        }
    }

    func run() async throws {
        let root = directory ?? "/tmp/lb-bench-analytics-\(ProcessInfo.processInfo.processIdentifier)"
        if !queryOnly { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: root) } }
        say(
            "logbook-bench analytics\(quick ? " --quick" : ""): \(ProcessInfo.processInfo.activeProcessorCount) cores, batches of \(batch) events\(perEvent ? " (aggregates written per event)" : ""), \(queryCount) queries per method"
        )
        var stores: [Store] = []
        for size in quick ? [1_000, 50_000] : [small, large] {
            stores.append(try await load(size: size, path: "\(root)/analytics-\(size).sqlite"))
        }
        try await query(&stores)
        say("")
        say(table(["size", "what", "count", "p50", "p99", "notes"], stores.flatMap(\.rows)))
    }

    /// `--queries`, or 300 with `--quick`.
    var queryCount: Int { quick ? 300 : queries }

    /// One size's figures: the load rate and each method's p99 in ms.
    struct Figures {
        var eventsPerSecond: Double
        var p99: [String: Double] = [:]
    }

    /// Users (one vehicle each) at `size`: see `--per-user` and `--users`.
    func userCount(size: Int, perUser: Int? = nil) -> Int {
        if let perUser = perUser ?? self.perUser { return max(1, size / max(1, perUser)) }
        return max(1, min(users, size / 10))
    }

    /// A store loaded (or opened, `--query-only`), to be queried: its rows of the table
    /// (the load's, then each method's) and its figures.
    struct Store {
        let service: AnalyticsService
        let label: String
        let userCount: Int
        var rows: [[String]]
        var figures: Figures
    }

    /// Loads `size` fill-ups and catches (users of `perUser` records each, when given) into a
    /// new database at `path`; `label`: the size column of its rows.
    func load(size: Int, path: String, perUser: Int? = nil, label: String? = nil) async throws -> Store {
        // (opening the service makes the database, so look for it first)
        if queryOnly, !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("--query-only: no database at \(path) (run once with the same sizes and --directory first)")
        }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let service = try AnalyticsService(
            database: DatabaseSettings(path: path), sessions: AnalyticsBenchSessions(), logger: logger)
        let userCount = userCount(size: size, perUser: perUser)
        let catches = Int(Double(size) * catchRatio)
        var workload = Workload(users: userCount, fills: size, catches: catches)
        func sink(_ producer: String) -> DatabaseEventSink {
            perEvent
                ? DatabaseEventSink(
                    producer: producer, writer: service.host.database, handler: AnalyticsService.apply(producer))
                : DatabaseEventSink(
                    producer: producer, writer: service.host.database, batch: AnalyticsService.applyBatch(producer),
                    backlog: liveBatches ? nil : AnalyticsService.applyBacklog(producer))
        }
        let records = sink("records")
        let weather = sink("weather-fetcher")

        say("size \(size): \(userCount) users/vehicles, \(size) fill-ups, \(catches) catches")
        let clock = ContinuousClock()
        if queryOnly {
            return Store(
                service: service, label: label ?? "\(size)", userCount: userCount, rows: [],
                figures: Figures(eventsPerSecond: 0))
        }
        let start = clock.now
        var loaded = 0
        var lastReport = start
        // The next batch is generated while the current one is applied (on GRDB's writer
        // queue). Each batch is applied as a catch-up applies a full page; the counters
        // left behind are settled at the end, inside the time, as when a catch-up ends.
        var next = workload.next(batch)
        while let (recordEvents, weatherEvents) = next {
            async let applied: Void = {
                try await records.applyBacklog(recordEvents)
                if !weatherEvents.isEmpty { try await weather.applyBacklog(weatherEvents) }
            }()
            next = workload.next(batch)
            try await applied
            loaded += recordEvents.count + weatherEvents.count
            if clock.now - lastReport > .seconds(15) {
                lastReport = clock.now
                say("  loaded \(loaded) events in \(seconds(clock.now - start)) s")
            }
        }
        let applied = clock.now - start
        try await records.settle()
        try await weather.settle()
        let loadTime = clock.now - start
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        say(
            "  loaded \(loaded) events in \(seconds(loadTime)) s (\(Int(Double(loaded) / max(0.001, seconds(loadTime)))) events/s; every event applied after \(String(format: "%.2f", seconds(applied))) s, then settled), database \(fileSize / 1_000_000) MB"
        )

        return Store(
            service: service, label: label ?? "\(size)", userCount: userCount,
            rows: [
                [
                    label ?? "\(size)", "load", "\(loaded) events", "", "",
                    "\(String(format: "%.1f", seconds(loadTime))) s, \(Int(Double(loaded) / max(0.001, seconds(loadTime)))) ev/s, \(fileSize / 1_000_000) MB",
                ]
            ],
            figures: Figures(eventsPerSecond: Double(loaded) / max(0.001, seconds(loadTime))))
    }

    /// Times `analytics.fuel.stats` and `analytics.suggest` on every store: a row per store and
    /// method, each p99 (ms) into the store's figures. The stores take turns, `block` queries
    /// at a time, so that whatever else the machine does in a stretch of time (on this shared
    /// 2-core machine a p50 moves by half from one stretch of a few tenths of a second to the
    /// next) falls on every store alike, and a ratio of two stores compares the stores, not
    /// two stretches of time (docs/performance.md, "Stores taking turns"). Each store asks
    /// for its users in the same order as when it was timed alone.
    func query(_ stores: inout [Store], block: Int = 50) async throws {
        let clock = ContinuousClock()
        let transports = stores.map { InProcessTransport($0.service.dispatcher) }
        var generators = stores.map { _ in SplitMix(seed: 42) }
        let queries = queryCount
        let total = queries + queries / 10  // the first tenth of each store's warms up
        for method in ["analytics.fuel.stats", "analytics.suggest"] {
            var samples = stores.map { _ in [Double]() }
            var replyBytes = stores.map { _ in 0 }
            var done = stores.map { _ in 0 }
            while done.contains(where: { $0 < total }) {
                for s in stores.indices where done[s] < total {
                    for i in done[s]..<min(total, done[s] + block) {
                        let user = generators[s].next(below: stores[s].userCount)
                        let body: JSONValue =
                            method == "analytics.fuel.stats"
                            ? ["vehicleId": .string("v\(user)")]
                            : (i % 2 == 0
                                ? [:]
                                : ["species": .string(Workload.species[generators[s].next(below: Workload.species.count)])])
                        // Timed: the request through the dispatcher to the reply frame. The
                        // benchmark's own reading of the answer (a generic JSON tree, larger as a
                        // user's data grows) comes after the clock stops.
                        let t0 = clock.now
                        let frame = try await transports[s].replyFrame(
                            method, body, options: CallOptions(token: "token-u\(user)"))
                        let elapsed = clock.now - t0
                        let reply = try WireCoding.decode(Reply.self, from: frame)
                        if let error = reply.error { throw error }
                        guard reply.ok, reply.result != nil else {
                            throw ServiceError(.internal, "\(method) answered without a result")
                        }
                        if i >= queries / 10 {
                            samples[s].append(seconds(elapsed) * 1000)
                            replyBytes[s] += frame.count
                        }
                    }
                    done[s] = min(total, done[s] + block)
                }
            }
            for s in stores.indices {
                let sorted = samples[s].sorted()
                stores[s].figures.p99[method] = sorted[sorted.count * 99 / 100]
                stores[s].rows.append([
                    stores[s].label, method, "\(sorted.count)", ms(sorted[sorted.count / 2]),
                    ms(sorted[sorted.count * 99 / 100]),
                    "answers of \(replyBytes[s] / max(1, sorted.count)) bytes on average",
                ])
            }
        }
    }

    /// Unbuffered, so progress shows when the output goes to a file.
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }

    func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(
                separator: "  ")
        }.joined(separator: "\n")
    }
}

struct AnalyticsBenchSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        let user = String(token.dropFirst("token-".count))
        return Principal(userId: user, username: user, sessionId: user)
    }
}

/// The events of the load, generated batch by batch: per user one vehicle with its
/// fill-ups in date order (a full fill-up most of the time, a partial one in five, a missed
/// one in fifty, 2% delivered just after the next one: an out-of-order insert), and
/// catches each followed by its `conditions.ready`.
struct Workload {
    static let species = ["pike", "perch", "trout", "bass", "zander"]
    static let baits = ["worm", "spinner", "jig", "fly", "spoon", "live bait"]
    static let temperatures = ["0 to 5 °C", "5 to 10 °C", "10 to 15 °C", "15 to 20 °C", "20 to 25 °C"]
    static let pressures = ["below 1000 hPa", "1000 to 1010 hPa", "1010 to 1020 hPa", "1020 to 1030 hPa"]
    static let trends = ["steady", "rising slowly", "falling slowly", "rising", "falling"]
    static let directions = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    static let skies = ["clear", "cloudy", "rain", "drizzle", "fog"]
    static let times = ["dawn", "day", "dusk", "night"]
    static let moons = ["new moon", "waxing crescent", "first quarter", "full moon", "last quarter"]

    let users: Int
    let fills: Int
    let catches: Int
    var emittedFills = 0
    var emittedCatches = 0
    var recordsSeq: Int64 = 0
    var weatherSeq: Int64 = 0
    var vehiclesCreated = false
    var random = SplitMix(seed: 7)
    /// Per user: fill-ups so far, odometer, a fill-up held back to be delivered late.
    var odometer: [Int64]
    var count: [Int]
    var heldBack: [JSONValue?]
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    init(users: Int, fills: Int, catches: Int) {
        self.users = users
        self.fills = fills
        self.catches = catches
        odometer = Array(repeating: 10_000_000, count: users)
        count = Array(repeating: 0, count: users)
        heldBack = Array(repeating: nil, count: users)
    }

    mutating func event(_ type: String, user: Int, _ data: JSONValue) -> Event {
        recordsSeq += 1
        return Event(seq: recordsSeq, type: type, userId: "u\(user)", at: start, data: data)
    }

    /// About `size` events for records and the matching ones for weather-fetcher; nil when done.
    mutating func next(_ size: Int) -> ([Event], [Event])? {
        var records: [Event] = []
        var weather: [Event] = []
        if !vehiclesCreated {
            vehiclesCreated = true
            for user in 0..<users {
                let units: (String, String) = user % 3 == 0 ? ("km", "l") : ("mi", "gal")
                records.append(
                    event(
                        "vehicle.created", user: user,
                        [
                            "id": .string("v\(user)"), "nickname": "Car", "distanceUnit": .string(units.0),
                            "volumeUnit": .string(units.1), "createdAt": .string(WireTime.format(start)),
                            "updatedAt": .string(WireTime.format(start)),
                        ]))
            }
        }
        while records.count < size, emittedFills < fills || emittedCatches < catches {
            let doFill = emittedFills < fills && (emittedCatches >= catches || random.next(below: 2) == 0)
            let user = random.next(below: users)
            if doFill {
                emittedFills += 1
                count[user] += 1
                odometer[user] += Int64(200_000 + random.next(below: 400_000))  // 200–600 units, in thousandths
                let n = count[user]
                let date = JSONValue.string(WireTime.format(start.addingTimeInterval(Double(n) * 86_400)))
                // a fill-up as records publishes it (Contracts' `Fillup`)
                let data: JSONValue = [
                    "id": .string("f\(user)-\(n)"), "vehicleId": .string("v\(user)"), "date": date,
                    "createdAt": date, "updatedAt": date, "pricePerUnitMinor": 300, "derived": "none",
                    "odometer": .number(.init(Milli(thousandths: Int64(odometer[user])))),
                    "volume": .number(.init(Milli(thousandths: Int64(20_000 + random.next(below: 30_000))))),
                    "totalMinor": .number(.init(4_000 + random.next(below: 6_000))), "currency": "USD",
                    "full": .bool(random.next(below: 5) != 0), "missed": .bool(random.next(below: 50) == 0),
                ]
                if let held = heldBack[user] {
                    // the later fill-up first, then the one held back: an insert before the last position
                    records.append(event("fillup.created", user: user, data))
                    records.append(event("fillup.created", user: user, held))
                    heldBack[user] = nil
                } else if random.next(below: 50) == 0 {
                    heldBack[user] = data
                } else {
                    records.append(event("fillup.created", user: user, data))
                }
            } else {
                emittedCatches += 1
                let id = "c\(emittedCatches)"
                let caught = start.addingTimeInterval(Double(random.next(below: 1_000)) * 3_600)
                records.append(
                    event(
                        "catch.created", user: user,
                        [
                            "id": .string(id), "species": .string(Self.species[random.next(below: Self.species.count)]),
                            "bait": .string(Self.baits[random.next(below: Self.baits.count)]),
                            "water": random.next(below: 4) == 0 ? "salt" : "fresh", "latitude": 59.33,
                            "longitude": 18.06,
                            "caughtAt": .string(WireTime.format(caught)),
                            // the rest of the record records publishes (Contracts.Catch)
                            "weight": 1.5, "weightUnit": "kg", "released": false, "photo": .null,
                            "photoPlaceholder": "fish-shadow", "conditions": ["status": "pending"],
                            "createdAt": .string(WireTime.format(caught)), "updatedAt": .string(WireTime.format(caught)),
                        ]))
                weatherSeq += 1
                weather.append(
                    Event(
                        seq: weatherSeq, type: "conditions.ready", userId: "u\(user)", at: start,
                        data: [
                            "catchId": .string(id), "summary": "bench",
                            "conditions": [
                                "hour": .string(WireTime.format(caught)), "latitude": 59.33, "longitude": 18.06,
                                "temperatureBand": .string(pick(Self.temperatures)),
                                "pressureBand": .string(pick(Self.pressures)),
                                "pressureTrend": .string(pick(Self.trends)),
                                "beaufort": .number(.init(random.next(below: 8))),
                                "windDirection": .string(pick(Self.directions)), "sky": .string(pick(Self.skies)),
                                "timeOfDay": .string(pick(Self.times)), "moonPhase": .string(pick(Self.moons)),
                                "source": "archive", "moonAgeDays": 14.2, "moonIllumination": 0.99, "tide": "skipped",
                            ],
                        ]))
            }
        }
        if emittedFills >= fills {
            for user in 0..<users {
                if let held = heldBack[user] {
                    records.append(event("fillup.created", user: user, held))
                    heldBack[user] = nil
                }
            }
        }
        return records.isEmpty && weather.isEmpty ? nil : (records, weather)
    }

    mutating func pick(_ list: [String]) -> String { list[random.next(below: list.count)] }
}
