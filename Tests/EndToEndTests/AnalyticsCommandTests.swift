// Analytics end to end: records' events feed the real analytics process, and `logbook`
// shows fuel statistics, a spending summary, office hours and fishing suggestions.
import Foundation
import Testing

@Suite("analytics end to end", .serialized, .timeLimit(.minutes(3)))
struct AnalyticsCommandTests {
    @Test("fuel stats, expense summary, attendance hours and suggestions from real events")
    func analytics() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("ada")
            // A metric car: 40.125 l over 500 km → 8.03 l/100 km.
            #expect(try await stack.logbook("car", "add", "Golf", "--distance-unit", "km", "--volume-unit", "l").status == 0)
            for arguments in [
                ["--date", "2026-05-01 08:00", "--odometer", "10000", "--volume", "30", "--price-per-unit", "1.80"],
                ["--date", "2026-05-08 08:00", "--odometer", "10500", "--volume", "40.125", "--price-per-unit", "1.80"],
            ] {
                let added = try await stack.logbook(arguments: ["fillup", "add"] + arguments)
                try #require(added.status == 0, "\(added.stderr)")
            }
            var stats: [String: Any] = [:]
            let ready = try await stack.eventually {
                let result = try await stack.logbook("fuel", "stats", "--units", "l-per-100km", "--json")
                stats = result.object
                return result.status == 0 && (result.stdout.contains("8.03") || "\(stats)".contains("8.03"))
            }
            #expect(ready, "fuel stats: \(stats)")
            let human = try await stack.logbook("fuel", "stats", "--units", "l-per-100km")
            #expect(human.stdout.contains("8.03"), "\(human.stdout)")

            // Spending: two categories this month.
            for (name, amount, category) in [("Coffee", "3.50", "food"), ("Lunch", "12.00", "food"), ("Bus", "2.75", "transport")] {
                #expect(try await stack.logbook("expense", "add", name, amount, "--category", category).status == 0)
            }
            var summary = ""
            let summed = try await stack.eventually {
                summary = try await stack.logbook("expense", "summary", "--by", "category").stdout
                return summary.contains("15.50") && summary.contains("2.75")
            }
            #expect(summed, "expense summary:\n\(summary)")

            // Office: in, out; the hours count, an open arrival would be flagged.
            #expect(try await stack.logbook("attend", "in", "--at", "2026-05-04 09:00").status == 0)
            #expect(try await stack.logbook("attend", "out", "--at", "2026-05-04 17:30").status == 0)
            var hours = ""
            let counted = try await stack.eventually {
                hours = try await stack.logbook("attend", "hours", "--from", "2026-05-04", "--to", "2026-05-04").stdout
                return hours.contains("8h 30m") || hours.contains("8:30")
            }
            #expect(counted, "attend hours:\n\(hours)")

            // Suggestions: catches whose weather is not in yet are counted as such.
            for species in ["Pike", "Perch"] {
                let added = try await stack.logbook(
                    "catch", "add", "--species", species, "--weight", "1.5", "--bait", "spoon", "--water", "fresh",
                    "--lat", "59.3", "--lon", "18.1")
                #expect(added.status == 0, "\(added.stderr)")
            }
            // The harness gives the weather-fetcher no provider, so both wait for conditions.
            var suggestion: [String: Any] = [:]
            let suggested = try await stack.eventually {
                suggestion = try await stack.object("suggest", "--water", "fresh")
                return suggestion["catches"] as? Int == 2
            }
            #expect(suggested, "suggest: \(suggestion)")
            let waiting = (suggestion["pending"] as? Int ?? 0) + (suggestion["unavailable"] as? Int ?? 0)
            #expect(waiting == 2 && suggestion["ready"] as? Int == 0, "counted, not dropped: \(suggestion)")
            let baits = suggestion["baits"] as? [[String: Any]] ?? []
            #expect(baits.first?["bait"] as? String == "spoon" && baits.first?["count"] as? Int == 2, "\(baits)")
            let text = try await stack.logbook("suggest")
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("spoon"), "best bait:\n\(text.stdout)")
        }
    }
}
