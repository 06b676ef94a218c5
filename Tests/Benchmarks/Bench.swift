// logbook-bench: the project's benchmarks, run as a command (never as timed tests).
//   swift run -c release --static-swift-stdlib logbook-bench ping [--count N] [--endpoint ipc://…]
//   swift run -c release --static-swift-stdlib logbook-bench writes [--in-flight 1,64] [--count N]
//   swift run -c release --static-swift-stdlib logbook-bench thumbnail [--count N] [--width W --height H] [--format jpeg]
//   swift run -c release --static-swift-stdlib logbook-bench analytics [--small 1000] [--large 1000000]
//   swift run -c release --static-swift-stdlib logbook-bench login-spray [--budget 60] [--usernames 200] [--clients 3] [--seconds 30]
//   swift run -c release --static-swift-stdlib logbook-bench photo-fairness [--large 4] [--side 7000] [--workers 2]
//   swift run -c release --static-swift-stdlib logbook-bench backup [--records 100000]
//   swift run -c release --static-swift-stdlib logbook-bench stack [--runs 30] [--writes 5000]   (after swift build -c release --static-swift-stdlib)
//   swift run -c release --static-swift-stdlib logbook-bench all [--quick]   (every row of the performance table)
import ArgumentParser

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logbook-bench",
        abstract: "Measure Logbook's hot paths on this machine.",
        discussion: "Build with -c release for meaningful figures: swift run -c release --static-swift-stdlib logbook-bench ping",
        subcommands: [
            PingBenchmark.self, WritesBenchmark.self, ThumbnailBenchmark.self, AnalyticsBenchmark.self, BackupBenchmark.self,
            LoginSprayBenchmark.self, PhotoFairnessBenchmark.self, StackBenchmark.self, AllBenchmark.self,
            HTTPBenchmark.self, ShardsBenchmark.self, ShardMoveBenchmark.self, RebuildBenchmark.self,
        ])
}
