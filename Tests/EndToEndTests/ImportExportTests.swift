// Imports and whole-account export through the real `logbook` binary and a real stack: a
// Fuelly sample imported (its economy checked against the file's own mpg column, a second
// import creating nothing), and an account exported and imported into a new account on
// another stack, every list, figure and photo compared.
import Foundation
import Imaging
import ImagingFixtures
import Testing

/// The sample files (Tests/ImportSamples).
private func sample(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ImportSamples/\(name)").path
}

/// A minimal RFC 4180 split for the test's own reading of a sample (independent of the CLI's).
private func csvRows(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var cell = ""
    var quoted = false
    var previous: Character?
    for c in text.replacingOccurrences(of: "\u{FEFF}", with: "").replacingOccurrences(of: "\r\n", with: "\n") {
        if quoted {
            if c == "\"" { quoted = false } else { cell.append(c) }
        } else if c == "\"" {
            if previous == "\"" { cell.append("\"") }
            quoted = true
        } else if c == "," {
            row.append(cell)
            cell = ""
        } else if c == "\n" {
            row.append(cell)
            rows.append(row)
            row = []
            cell = ""
        } else {
            cell.append(c)
        }
        previous = c
    }
    return rows
}

/// Runs `logbook arguments…` on a pseudo-terminal (util-linux `script`), typing `answer`.
private func onTerminal(_ stack: TestStack, _ arguments: [String], answer: String) async throws -> (status: Int32, output: String) {
    let quoted = ([stack.binDirectory + "/logbook"] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let outPath = stack.home + "/.tty-out"
    let inPath = stack.home + "/.tty-in"
    defer { unlink(outPath); unlink(inPath) }
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: inPath, contents: Data((answer + "\n").utf8))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qec", quoted.joined(separator: " "), "/dev/null"]
    process.environment = stack.environment
    process.standardInput = FileHandle(forReadingAtPath: inPath)
    process.standardOutput = FileHandle(forWritingAtPath: outPath)
    process.standardError = FileHandle(forWritingAtPath: outPath)
    try process.run()
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(60)
    while process.isRunning {
        if clock.now >= deadline {
            kill(process.processIdentifier, SIGKILL)
            break
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    process.waitUntilExit()
    return (process.terminationStatus, (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "")
}

@Suite("imports and export through the real CLI", .serialized)
struct ImportExportTests {
    @Test("a Fuelly export: dry run writes nothing, economy matches the file's mpg, a second import creates nothing")
    func fuelly() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("ivan")
            let file = sample("fuelly.csv")

            let dry = try await stack.logbook("import", "fuelly", file, "--dry-run", "--json", "--time-zone", "UTC")
            #expect(dry.status == 9, "a dry run with rows it cannot take exits 9: \(dry.stderr)")
            #expect((dry.object["writes"] as? [Any])?.count == 11)
            let carsAfterDryRun = (try await stack.object("car", "list"))["items"] as? [Any]
            #expect(carsAfterDryRun?.isEmpty == true, "a dry run writes nothing")

            let unconfirmed = try await stack.logbook("import", "fuelly", file, "--time-zone", "UTC")
            #expect(unconfirmed.status == 2, "no terminal and no --yes: refused")
            #expect(unconfirmed.stderr.contains("--yes"))

            let first = try await stack.logbook("import", "fuelly", file, "--yes", "--json", "--time-zone", "UTC")
            #expect(first.status == 9, "two rows are not taken: \(first.stderr)")
            #expect(first.object["created"] as? Int == 10)
            let rejected = first.object["rejected"] as? [[String: Any]] ?? []
            #expect(rejected.map { $0["line"] as? Int } == [8, 9])
            #expect((rejected.last?["reason"] as? String)?.contains("odometer: must be at least 11,735.7") == true, "\(rejected)")

            // The file's own mpg, read here, beside analytics' figure for the same fill-up.
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let rows = csvRows(text)
            let header = rows[0]
            let col = { (name: String) in header.firstIndex(of: name)! }
            let cars = (try await stack.object("car", "list"))["items"] as? [[String: Any]] ?? []
            #expect(Set(cars.compactMap { $0["nickname"] as? String }) == ["Civic", "Tacoma"])
            var compared = 0
            for car in cars {
                let name = car["nickname"] as! String
                let id = car["id"] as! String
                let fills = (try await stack.object("fillup", "list", "--car", name, "--all"))["items"] as? [[String: Any]] ?? []
                var economy: [String: Any] = [:]
                let seen = try await stack.eventually {
                    let reply = try await stack.object("call", "analytics", "analytics.fuel.economy", "{\"vehicleId\":\"\(id)\",\"units\":\"mpg_us\"}")
                    let list = (reply["result"] as? [String: Any])?["fills"] as? [[String: Any]] ?? []
                    economy = Dictionary(uniqueKeysWithValues: list.map { ($0["fillId"] as! String, $0 as Any) })
                    return list.count == fills.count
                }
                #expect(seen, "analytics saw every fill-up of \(name)")
                for row in rows.dropFirst() where row[col("car_name")] == name && !row[col("mpg")].isEmpty {
                    let parts = row[col("fuelup_date")].split(separator: "-")
                    let date = "\(parts[2])-\(parts[0])-\(parts[1])T00:00:00Z"
                    let fill = try #require(fills.first { $0["date"] as? String == date }, "a fill-up on \(date)")
                    let figure = try #require((economy[fill["id"] as! String] as? [String: Any])?["economy"] as? Double, "economy of \(date)")
                    let stated = Double(row[col("mpg")])!
                    #expect(abs(figure - stated) <= 0.005, "\(name) \(date): Logbook \(figure) mpg, Fuelly \(stated)")
                    compared += 1
                }
            }
            #expect(compared == 6, "every row with an mpg figure was compared")
            let report = first.object["economy"] as? [[String: Any]] ?? []
            #expect(report.count == 6 && report.allSatisfy { abs(($0["file"] as! Double) - ($0["logbook"] as? Double ?? -1)) <= 0.005 })

            // aCar and LubeLogger samples on the same stack: their own economy columns agree too.
            for (format, name, extra) in [("acar", "acar.csv", [String]()), ("lubelogger", "lubelogger.csv", ["--car", "Golf"])] {
                let result = try await stack.logbook(
                    arguments: ["import", format, sample(name), "--yes", "--json", "--time-zone", "UTC"] + extra)
                #expect(result.status == 9, "\(format): \(result.stderr)")
                let rows = result.object["economy"] as? [[String: Any]] ?? []
                #expect(rows.count == 2, "\(format): \(result.stdout)")
                for row in rows {
                    let stated = row["file"] as! Double
                    #expect(abs(stated - (row["logbook"] as? Double ?? -1)) <= 0.005, "\(format) line \(row["line"] ?? ""): \(row)")
                }
            }

            let second = try await stack.logbook("import", "fuelly", file, "--yes", "--json", "--time-zone", "UTC")
            #expect(second.object["created"] as? Int == 0, "\(second.stdout)")
            #expect(second.object["alreadyImported"] as? Int == 10)
            // The same fill-ups in a file whose every row differs (city_percentage): their idempotency
            // keys differ too, as after the services forgot them (30 days); the content says
            // they are there already.
            let edited = stack.home + "/fuelly-edited.csv"
            try text.replacingOccurrences(of: ",60,", with: ",61,").write(toFile: edited, atomically: true, encoding: .utf8)
            let third = try await stack.logbook("import", "fuelly", edited, "--yes", "--json", "--time-zone", "UTC")
            #expect(third.object["created"] as? Int == 0 && third.object["alreadyImported"] as? Int == 10, "\(third.stdout)")

            let again = (try await stack.object("car", "list"))["items"] as? [[String: Any]] ?? []
            #expect(again.filter { ["Civic", "Tacoma"].contains($0["nickname"] as? String) }.count == 2, "no car doubled")
            var total = 0
            for name in ["Civic", "Tacoma"] {
                total += ((try await stack.object("fillup", "list", "--car", name, "--all"))["items"] as? [Any])?.count ?? 0
            }
            #expect(total == 10, "no fill-up doubled")

            // The car deleted, the same file again: the car and its fill-ups are made anew
            // (not answered with the deleted car's id from the first import's keys).
            #expect(try await stack.logbook("car", "delete", "Civic", "--yes").status == 0)
            let fourth = try await stack.logbook("import", "fuelly", file, "--yes", "--json", "--time-zone", "UTC")
            let civicRows = ((try await stack.object("fillup", "list", "--car", "Civic", "--all"))["items"] as? [Any])?.count ?? -1
            #expect(civicRows > 0 && fourth.object["created"] as? Int == civicRows, "\(fourth.stdout)\(fourth.stderr)")
            #expect(fourth.object["alreadyImported"] as? Int == 10 - civicRows, "\(fourth.stdout)")
        }
    }

    @Test("a bank CSV with a mapping, then again: the same expenses once")
    func bank() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("bea")
            let args = [
                "import", "expenses", sample("bank.csv"), "--map", "date=Booking date,amount=Amount,name=Payee,category=Category,currency=Currency",
                "--yes", "--json", "--time-zone", "Europe/Berlin",
            ]
            // On a terminal it asks: "n" writes nothing, "y" imports with a progress bar.
            let interactive = args.filter { $0 != "--yes" && $0 != "--json" }
            let no = try await onTerminal(stack, interactive, answer: "n")
            #expect(no.status == 5 && no.output.contains("Import 4 expenses (check the dates above)? [y/N]"), "\(no.output)")
            #expect(no.output.contains("not confirmed; nothing was imported"))
            #expect(((try await stack.object("expense", "list", "--all"))["items"] as? [Any])?.isEmpty == true)
            let yes = try await onTerminal(stack, interactive, answer: "y")
            #expect(yes.status == 9, "\(yes.output)")
            #expect(yes.output.contains("4/4") && yes.output.contains("[###"), "a progress bar on the terminal: \(yes.output)")
            #expect(yes.output.contains("4 expenses created"))
            let first = try await stack.logbook(arguments: args)
            #expect(first.status == 9 && first.object["created"] as? Int == 0, "\(first.stdout)\(first.stderr)")
            #expect(first.object["alreadyImported"] as? Int == 4)
            let second = try await stack.logbook(arguments: args)
            #expect(second.object["created"] as? Int == 0 && second.object["alreadyImported"] as? Int == 4)
            let list = (try await stack.object("expense", "list", "--all"))["items"] as? [[String: Any]] ?? []
            #expect(list.count == 4)
            #expect(list.compactMap { $0["amountMinor"] as? Int }.sorted() == [480, 480, 6317, 125_000])

            // Bad input: a clear error, nothing written.
            let notArchive = try await stack.logbook("import", "archive", sample("bank.csv"), "--yes")
            #expect(notArchive.status == 2 && notArchive.stderr.contains("not a Logbook archive"), "\(notArchive.stderr)")
            let missing = try await stack.logbook("import", "fuelly", stack.home + "/nothing.csv", "--yes")
            #expect(missing.status == 3, "\(missing.stderr)")
            let wrong = try await stack.logbook("import", "fuelly", sample("bank.csv"), "--yes")
            #expect(wrong.status == 2 && wrong.stderr.contains("not a Fuelly export"), "\(wrong.stderr)")
            let badMap = try await stack.logbook("import", "expenses", sample("bank.csv"), "--map", "date=Nope,amount=Amount,name=Payee", "--yes")
            #expect(badMap.status == 2 && badMap.stderr.contains("no such column"), "\(badMap.stderr)")
            #expect(((try await stack.object("expense", "list", "--all"))["items"] as? [Any])?.count == 4)
        }
    }

    /// Every list and figure of the logged-in account, without what a new account cannot keep
    /// (ids, creation and save times, the ledger's own times), as sorted JSON text.
    static func views(_ stack: TestStack) async throws -> [String: String] {
        var out: [String: [String: Any]] = [:]
        out["cars"] = try await stack.object("car", "list", "--all")
        for car in (out["cars"]?["items"] as? [[String: Any]]) ?? [] {
            let name = car["nickname"] as! String
            out["fillups " + name] = try await stack.object("fillup", "list", "--car", name, "--all")
            out["stats " + name] = try await stack.object("fuel", "stats", "--car", name)
        }
        out["catches"] = try await stack.object("catch", "list", "--all")
        out["expenses"] = try await stack.object("expense", "list", "--all")
        out["summary"] = try await stack.object("expense", "summary", "--by", "category")
        out["attendance"] = try await stack.object("attend", "history", "--all")
        out["hours"] = try await stack.object("attend", "hours")
        out["activities"] = try await stack.object("activity", "list", "--all")
        for activity in (out["activities"]?["items"] as? [[String: Any]]) ?? [] {
            let name = activity["name"] as! String
            out["log " + name] = try await stack.object("activity", "log", name, "--all")
        }
        out["networth"] = try await stack.object("networth")
        out["wallet"] = try await stack.object("wallet")
        out["ledger"] = try await stack.object("store", "ledger", "--all")
        out["store"] = try await stack.object("store")
        return out.mapValues { view in
            let clean = strip(view, parent: [:])
            let data = try! JSONSerialization.data(withJSONObject: clean, options: [.sortedKeys, .prettyPrinted])
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func strip(_ value: Any, parent: [String: Any]) -> Any {
        let always: Set<String> = [
            "id", "createdAt", "updatedAt", "savedAt", "vehicleId", "fillId", "activityId", "ledgerId", "purchasedAt",
            "nextCursor", "elapsedMs", "timerElapsedMs",
        ]
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            let isLedger = object["kind"] as? String == "earning" || object["kind"] as? String == "purchase"
            let isTimer = object["state"] != nil && object["accumulatedMs"] != nil
            for (key, v) in object where !always.contains(key) {
                if (isLedger || isTimer) && key == "at" { continue }
                if isLedger && key == "reference" && object["kind"] as? String == "earning" { continue }
                result[key] = strip(v, parent: object)
            }
            return result
        }
        if let array = value as? [Any] { return array.map { strip($0, parent: parent) } }
        return value
    }

    /// Waits until analytics and the store have counted everything records holds.
    static func settle(_ stack: TestStack, fills: Int, expenses: Int) async throws {
        let settled = try await stack.eventually(timeout: .seconds(30)) {
            let networth = try await stack.object("networth")
            let wallet = try await stack.object("wallet")
            let summary = try await stack.object("expense", "summary", "--by", "category")
            let counted = (summary["currencies"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
            var statsFills = 0
            for car in (try await stack.object("car", "list", "--all"))["items"] as? [[String: Any]] ?? [] {
                statsFills += (try await stack.object("fuel", "stats", "--car", car["id"] as! String))["fills"] as? Int ?? 0
            }
            return wallet["netWorthMs"] as? Int == networth["totalMs"] as? Int && counted == expenses && statsFills == fills
        }
        #expect(settled, "analytics and the store caught up")
    }

    @Test("export an account and import it into a new account on another stack: lists, figures and photos the same")
    func archiveRoundTrip() async throws {
        let workspace = "/tmp/lbx-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        let jpeg = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 640, height: 480) }
        try jpeg.write(to: URL(fileURLWithPath: workspace + "/pike.jpg"))
        let archive = workspace + "/alice.logbook"
        var before: [String: String] = [:]
        var photoBefore = Data()
        var counts: [String: Any] = [:]
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let run = { (args: [String]) in
                let r = try await stack.logbook(arguments: args)
                try #require(r.status == 0, "logbook \(args.joined(separator: " ")): \(r.stderr)")
            }
            try await run(["car", "add", "Civic", "--make", "Honda", "--model", "Civic", "--year", "2019"])
            try await run(["fillup", "add", "--car", "Civic", "--odometer", "10000", "--volume", "10", "--total", "31.00", "--date", "2026-05-01"])
            try await run(["fillup", "add", "--car", "Civic", "--odometer", "10150", "--volume", "4.5", "--price-per-unit", "3.459", "--partial", "--date", "2026-05-05"])
            try await run(["fillup", "add", "--car", "Civic", "--odometer", "10400", "--volume", "8.25", "--price-per-unit", "3.40", "--total", "28.05", "--date", "2026-05-09"])
            try await run(["car", "add", "Van", "--distance-unit", "km", "--volume-unit", "l"])
            try await run(["fillup", "add", "--car", "Van", "--trip", "420", "--volume", "38.5", "--total", "61.20", "--currency", "EUR", "--date", "2026-05-03"])
            try await run(["catch", "add", "--species", "Pike", "--weight", "2.5", "--bait", "spoon", "--water", "fresh", "--lat", "59.33", "--lon", "18.07", "--photo", workspace + "/pike.jpg", "--at", "2026-05-02 06:30"])
            try await run(["catch", "add", "--species", "Bass", "--weight", "4.1", "--unit", "lb", "--bait", "squid", "--water", "salt", "--lat", "36.6", "--lon=-121.9", "--at", "2026-05-04 19:00"])
            try await run(["expense", "add", "Lunch", "12.50", "--category", "food", "--date", "2026-05-02"])
            try await run(["expense", "add", "Train ticket", "2300", "--currency", "JPY", "--date", "2026-05-03"])
            try await run(["expense", "add", "Rent", "1000", "--date", "2026-05-01"])
            try await run(["attend", "in", "--at", "2026-05-04 08:00", "--lat", "40.7128", "--lon=-74.006", "--accuracy", "15"])
            try await run(["attend", "out", "--at", "2026-05-04 16:30", "--note", "home"])
            try await run(["attend", "in", "--at", "2026-05-05 09:00"])
            // a departure deleted from between two arrivals: the two arrivals are now next to
            // each other (the import takes the second as a correction, and says so)
            let lunch = try await stack.object("attend", "out", "--at", "2026-05-05 12:00")
            try await run(["attend", "in", "--at", "2026-05-05 13:00"])
            try await run(["attend", "delete", try #require(lunch["id"] as? String), "--yes"])
            try await run(["activity", "add", "Guitar"])
            try await run(["activity", "add", "Chess"])
            try await run(["activity", "add", "Juggling"])
            try await run(["activity", "add-time", "Guitar", "5h30m"])
            try await run(["activity", "add-time", "Juggling", "45m"])
            try await run(["activity", "delete", "Juggling", "--yes"])
            // The store counts the time before the purchase can be made.
            #expect(try await stack.eventually { (try await stack.object("wallet"))["cashCents"] as? Int == 625 })
            try await run(["store", "buy", "pencil"])
            try await run(["activity", "add-time", "Chess", "1h15m"])
            try await Self.settle(stack, fills: 4, expenses: 3)
            before = try await Self.views(stack)

            let exported = try await stack.logbook("export", archive, "--json")
            try #require(exported.status == 0, "\(exported.stderr)")
            counts = exported.object["counts"] as? [String: Any] ?? [:]
            let again = try await stack.logbook("export", archive)
            #expect(again.status == 4, "an existing file is not overwritten without --force")
            let replaced = try await stack.logbook("export", archive, "--force")
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(!FileManager.default.fileExists(atPath: archive + ".part"), "the archive is renamed into place")
            let catches = try await stack.object("catch", "list", "--all")
            let fresh = ((catches["fresh"] as? [String: Any])?["items"] as? [[String: Any]]) ?? []
            let pike = try #require(fresh.first)
            try await run(["catch", "photo", pike["id"] as! String, "-o", workspace + "/before.jpg"])
            photoBefore = try Data(contentsOf: URL(fileURLWithPath: workspace + "/before.jpg"))
        }
        #expect(counts["vehicles"] as? Int == 2 && counts["fillups"] as? Int == 4 && counts["catches"] as? Int == 2)
        #expect(counts["photos"] as? Int == 1 && counts["expenses"] as? Int == 3 && counts["attendance"] as? Int == 4)
        #expect(counts["activities"] as? Int == 2 && counts["timeEntries"] as? Int == 2)
        #expect(counts["ledger"] as? Int == 4 && counts["purchases"] as? Int == 1)
        #expect(photoBefore == jpeg)

        // A tar any tool reads.
        let listing = Process()
        listing.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        listing.arguments = ["-tf", archive]
        let pipe = Pipe()
        listing.standardOutput = pipe
        try listing.run()
        listing.waitUntilExit()
        let names = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(listing.terminationStatus == 0 && names.contains("manifest.json") && names.contains("photos/"))

        try await withStack { stack in
            try await stack.upAndRegister("alice2")
            let imported = try await stack.logbook("import", "archive", archive, "--yes", "--json", timeout: .seconds(120))
            try #require(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
            let created = imported.object["created"] as? [String: Any] ?? [:]
            #expect(created["fillups"] as? Int == 4 && created["catches"] as? Int == 2 && created["photos"] as? Int == 1)
            #expect(created["purchases"] as? Int == 1)
            try await Self.settle(stack, fills: 4, expenses: 3)
            let notes = (imported.object["notes"] as? [String]) ?? []
            #expect(notes.contains { $0.contains("follows another arrival: imported as a correction") }, "\(notes)")
            let after = try await Self.views(stack)
            #expect(Set(after.keys) == Set(before.keys))
            for (name, view) in before.sorted(by: { $0.key < $1.key }) where name != "attendance" {
                #expect(after[name] == view, "\(name) differs after the round trip")
            }
            // the attendance list the same, but for the one arrival now marked a correction
            // (newest first: the 13:00 arrival is the first item)
            var list = try #require(
                try JSONSerialization.jsonObject(with: Data((before["attendance"] ?? "").utf8)) as? [String: Any])
            var items = try #require(list["items"] as? [[String: Any]])
            #expect(items.first?["kind"] as? String == "arrival" && items.first?["correction"] as? Bool == false, "\(items)")
            items[0]["correction"] = true
            list["items"] = items
            let marked = String(
                decoding: try JSONSerialization.data(withJSONObject: list, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
            #expect(after["attendance"] == marked, "attendance differs after the round trip")
            let catches = try await stack.object("catch", "list", "--all")
            let fresh = ((catches["fresh"] as? [String: Any])?["items"] as? [[String: Any]]) ?? []
            let pike = try #require(fresh.first)
            let out = stack.home + "/after.jpg"
            let photo = try await stack.logbook("catch", "photo", pike["id"] as! String, "-o", out)
            #expect(photo.status == 0)
            #expect(FileManager.default.contents(atPath: out) == photoBefore, "the photo, byte for byte")

            // Importing the same archive again creates nothing new.
            let twice = try await stack.logbook("import", "archive", archive, "--yes", "--json", timeout: .seconds(120))
            #expect(twice.status == 0, "\(twice.stderr)")
            #expect((twice.object["created"] as? [String: Any])?.isEmpty == true, "\(twice.stdout)")
            #expect((twice.object["alreadyImported"] as? Int ?? 0) >= 17)
            try await Self.settle(stack, fills: 4, expenses: 3)
            let third = try await Self.views(stack)
            #expect(third == after, "a second import of the same archive changed nothing")
        }
    }
}
