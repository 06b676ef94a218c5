// Names compared without case (docs/protocol.md: catch bests, the expense list's category,
// activity names) fold every letter, not only A–Z: "Ørret" and "ørret" are one species, as
// analytics' suggestions and expense summary count them (`String.foldedForComparison`).
// SQLite's lower() and NOCASE fold A–Z alone; records' SQL reads `logbook_fold` instead, on
// every connection, so the tests run on a database file (reads go to the pool's readers).
import Foundation
import Testing
import Wire

@Suite struct CaseFoldTests {
    func withRecords(_ body: (Harness) async throws -> Void) async throws {
        let file = try ScratchFile()
        defer { file.remove() }
        try await body(try Harness(path: file.path))
    }

    @Test func bestsGroupSpeciesInEveryAlphabet() async throws {
        try await withRecords { records in
            for (species, weight) in [("Ørret", 2), ("ørret", 3), ("ØRRET ", 1), ("Äsche", 1), ("äsche", 1), ("pike", 1)] {
                try await records.ok(
                    "records.catch.add",
                    #"{"species":"\#(species)","weight":\#(weight),"weightUnit":"kg","bait":"b","water":"fresh","latitude":1,"longitude":2}"#
                )
            }
            let bests = try #require(try await records.ok("records.catch.bests")["bests"]?.arrayValue)
            let groups = bests.map { ($0["species"]!.string, $0["catches"]!.int) }
            // each shown in its best catch's spelling (a tie: the earlier catch)
            #expect(groups.map(\.0) == ["pike", "Äsche", "ørret"])
            #expect(groups.map(\.1) == [1, 2, 3])
        }
    }

    @Test func theCategoryFilterFoldsEveryLetter() async throws {
        try await withRecords { records in
            for (name, category) in [("Beer", "Øl"), ("Cider", "øl"), ("Bread", "Brød"), ("Cake", "BRØD")] {
                try await records.ok(
                    "records.expense.add", #"{"name":"\#(name)","amountMinor":100,"category":"\#(category)"}"#)
            }
            func names(_ category: String) async throws -> [String] {
                try await records.ok("records.expense.list", #"{"category":"\#(category)"}"#).items.map {
                    $0["name"]!.string
                }.sorted()
            }
            #expect(try await names("ØL") == ["Beer", "Cider"])
            // one text in two spellings: Ä as one scalar, and as A with a combining mark
            for (name, category) in [("Apples", "\u{C4}pfel"), ("Pears", "A\u{308}pfel")] {
                try await records.ok(
                    "records.expense.add", #"{"name":"\#(name)","amountMinor":100,"category":"\#(category)"}"#)
            }
            #expect(try await names("\u{E4}PFEL") == ["Apples", "Pears"])
            #expect(try await names("a\u{308}pfel") == ["Apples", "Pears"])
            #expect(try await names("brød") == ["Bread", "Cake"])
        }
    }

    @Test func activityNamesAreUniqueInEveryAlphabet() async throws {
        try await withRecords { records in
            _ = try await records.activity("Øving")
            let error = try await records.fails("records.activity.add", #"{"name":"øVING"}"#)
            #expect(error.code == .alreadyExists)
            #expect(error.field == "name")
            _ = try await records.activity("Övning")
        }
    }
}
