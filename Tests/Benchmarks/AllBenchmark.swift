// `logbook-bench all`: every row of the performance table (docs/operations.md,
// "Performance"), each beside its baseline measured in the same run, with the ratio and
// the goal. `--quick` runs a few seconds per benchmark with smaller sizes (and says so).
//   swift build -c release --static-swift-stdlib && .build/release/logbook-bench all [--quick]
import ArgumentParser
import Foundation
import Storage

struct AllBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all", abstract: "Every row of the performance table, each with its baseline and ratio.")

    @Flag(help: "A few seconds per benchmark: fewer samples and smaller sizes.") var quick = false
    @Option(help: "Directory holding logbook and the service executables (default: beside this benchmark).")
    var bin: String?

    struct Row {
        var measure: String
        var baseline: String
        var measured: String
        var ratio: String
        var goal: String
        var met: Bool?
    }

    func run() async throws {
        let sizes = quick ? (small: 1_000, large: 50_000) : (small: 1_000, large: 1_000_000)
        say("logbook-bench all\(quick ? " --quick (smaller samples and sizes)" : ""): \(ProcessInfo.processInfo.activeProcessorCount) cores")
        var rows: [Row] = []

        say("\n== ping")
        let ping = try PingBenchmark.parse(quick ? ["--count", "3000", "--warmup", "300"] : ["--count", "20000"])
        let (raw, runtime) = try await ping.measureBoth()
        let rawEchoP50 = percentile(raw, 0.5)
        let pingP50 = percentile(runtime, 0.5)
        say(String(format: "raw echo p50 %.1f µs, $srv.ping p50 %.1f µs", rawEchoP50, pingP50))
        rows.append(
            Row(
                measure: "$srv.ping p50 vs raw DEALER/ROUTER echo p50", baseline: us(rawEchoP50), measured: us(pingP50),
                ratio: times(pingP50 / rawEchoP50), goal: "≤ 1.3×", met: pingP50 / rawEchoP50 <= 1.3))

        say("\n== writes (synchronous=FULL)")
        let writes = try WritesBenchmark.parse(["--count", quick ? "1500" : "5000", "--in-flight", "1,64", "--durability", "full"])
        let w = try await writes.measure(.full, levels: [1, 64])
        // Each against the raw loop's blocks run alongside it.
        let at64 = w.levels[64]!, at1 = w.levels[1]!
        let rate64 = at64.rate
        rows.append(
            Row(
                measure: "durable writes/s at 64 in flight vs raw SQLite 1 INSERT/txn (FULL)",
                baseline: String(format: "%.0f/s", at64.rawRate), measured: String(format: "%.0f/s", rate64),
                ratio: times(rate64 / at64.rawRate), goal: "≥ 1.0×", met: rate64 / at64.rawRate >= 1.0))
        let p50One = at1.p50
        let floor = rawEchoP50 + at1.rawP50
        rows.append(
            Row(
                measure: "write p50 at 1 in flight vs raw echo p50 + raw commit p50",
                baseline: String(format: "%@ + %@", us(rawEchoP50), us(at1.rawP50)), measured: us(p50One),
                ratio: times(p50One / floor), goal: "≤ 2×", met: p50One / floor <= 2))

        say("\n== the stack (real processes)")
        var stackArguments = ["--runs", quick ? "10" : "30", "--writes", quick ? "1500" : "5000"]
        if let bin { stackArguments += ["--bin", bin] }
        let stack = try await StackBenchmark.parse(stackArguments).measure()
        let perService = stack.cpuPerService.sorted { $0.key < $1.key }.map { String(format: "%@ %.3f", $0.key, $0.value) }
        say("CPU ms per write by service: " + perService.joined(separator: ", "))
        rows.append(
            Row(
                measure: "whole-stack CPU per records.expense.add (5 services, /proc)", baseline: "(absolute)",
                measured: String(format: "%.3f ms", stack.cpuPerWriteMs), ratio: "", goal: "≤ 0.3 ms",
                met: stack.cpuPerWriteMs <= 0.3))
        for (name, value) in [("logbook whoami", stack.whoamiP50), ("logbook expense list", stack.listP50)] {
            rows.append(
                Row(
                    measure: "\(name) wall p50 vs logbook --version", baseline: ms(stack.versionP50), measured: ms(value),
                    ratio: times(value / stack.versionP50), goal: "≤ 1.5×, --version ≤ 15 ms",
                    met: value / stack.versionP50 <= 1.5 && stack.versionP50 <= 15))
        }
        for (service, kib) in stack.rss.sorted(by: { $0.key < $1.key }) {
            let mib = Double(kib) / 1024
            rows.append(
                Row(
                    measure: "idle RSS \(service)", baseline: "(absolute)", measured: String(format: "%.1f MiB", mib),
                    ratio: "", goal: "≤ 25 MiB", met: mib <= 25))
        }

        say("\n== analytics (\(sizes.small) and \(sizes.large) fill-ups and catches)")
        let analytics = try AnalyticsBenchmark.parse(["--queries", quick ? "300" : "2000"])
        var queryRows: [Row] = []
        let root = "/tmp/lb-bench-all-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // the stores are closed (the services released) before the replay below is timed
        do {
            let small = try await analytics.load(size: sizes.small, path: root + "/small.sqlite")
            let large = try await analytics.load(size: sizes.large, path: root + "/large.sqlite")
            rows.append(
                Row(
                    measure: "analytics rebuild from events (\(sizes.large) run), in memory", baseline: "(absolute)",
                    measured: String(format: "%.0f events/s", large.figures.eventsPerSecond), ratio: "", goal: "≥ 50k events/s",
                    met: large.figures.eventsPerSecond >= 50_000))
            // A suggestion lists every bucket a user's catches fell in, so its answer grows with
            // that user's own history until every bucket is seen; the rows above compare users
            // with 10 catches each (small) against users with more (large). The same store size
            // again with users holding as many records each as the large run's users shows how a
            // query scales with the store alone. At least three users: the workload's vehicles
            // go by kilometres and litres, miles and gallons, miles and gallons, by user, and the
            // stats of a vehicle in miles cost more (its conversions); with one user of 1,000
            // records, every `fuel.stats` asked for the cheaper kind, against a third of them at
            // the large size (p50 0.106 against 0.150 ms).
            let perUser = sizes.large / analytics.userCount(size: sizes.large)
            let sameSize = max(sizes.small, 3 * perUser)
            say("same histories: \(sameSize) fill-ups and catches over users of \(perUser) each")
            let same = try await analytics.load(
                size: sameSize, path: root + "/same.sqlite", perUser: perUser, label: "\(sameSize), \(perUser) per user")
            // the three stores queried taking turns (AnalyticsBenchmark.query), each query's p50
            // beside its p99: a p99 of a few hundred microseconds moves with anything else the
            // machine does, and the p50 shows whether the query itself moved
            var stores = [small, large, same]
            try await analytics.query(&stores)
            say(analytics.table(["size", "what", "count", "p50", "p99", "notes"], stores.flatMap(\.rows)))
            for method in ["analytics.suggest", "analytics.fuel.stats"] {
                for (size, what, base) in [
                    (sizes.small, "", stores[0]), (sameSize, ", users of \(perUser) records at both sizes", stores[2]),
                ] {
                    let a = base.figures.p99[method] ?? 0, b = stores[1].figures.p99[method] ?? 0
                    queryRows.append(
                        Row(
                            measure: "\(method) p99 at \(sizes.large) vs \(size)\(what)", baseline: ms(a),
                            measured: ms(b), ratio: times(b / max(a, 1e-9)), goal: "≤ 1.2×", met: b / max(a, 1e-9) <= 1.2))
                }
            }
        }
        // The same events replayed the way `logbook stack rebuild analytics` replays them:
        // from two producers' outboxes over ZeroMQ, page by page (RebuildBenchmark.swift);
        // after the queries, so the stores' pages are not left idle meanwhile, and once they
        // are closed.
        say("\n== rebuild through events.since (\(sizes.large) fill-ups and catches)")
        let rebuild = try await RebuildBenchmark.measure(size: sizes.large, users: analytics.users)
        let rate = Double(rebuild.events) / rebuild.seconds
        say(
            String(
                format: "replayed %d events in %.2f s (every event applied after %.2f s, then settled)", rebuild.events,
                rebuild.seconds, rebuild.applied))
        rows.append(
            Row(
                measure: "analytics rebuild through events.since (\(sizes.large) run)", baseline: "(absolute)",
                measured: String(format: "%.0f events/s", rate), ratio: "", goal: "≥ 50k events/s", met: rate >= 50_000))
        rows += queryRows

        say("\n== summary\(quick ? " (--quick: smaller samples and sizes)" : "")")
        let table = [["measure", "baseline", "measured", "ratio", "goal", "met"]]
            + rows.map { [$0.measure, $0.baseline, $0.measured, $0.ratio, $0.goal, $0.met.map { $0 ? "yes" : "no" } ?? ""] }
        let widths = (0..<6).map { column in table.map { $0[column].count }.max() ?? 0 }
        for line in table {
            say(line.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
    }

    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    func us(_ value: Double) -> String { String(format: "%.1f µs", value) }
    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
    func times(_ value: Double) -> String { String(format: "%.2f×", value) }
}
