// The five logbooks end to end: one scenario per seed app, each through the real `logbook`
// binary against the real auth and records executables on a throwaway stack. Analytics is
// not part of this stack, so the fill-up list must show without economy and say why.
import Foundation
import Testing

@Suite("logbook records commands", .serialized, .timeLimit(.minutes(3)))
struct RecordsCommandTests {
    @Test("fuel (seed 000): cars, three fill-ups with a partial, the selected car, delete cascades")
    func fuel() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("fred")
            let civic = try await stack.object("car", "add", "Civic", "--make", "Honda", "--year", "2019")
            let civicId = try #require(civic["id"] as? String)
            #expect(civic["distanceUnit"] as? String == "mi")

            // One car: fill-ups go to it without a selection.
            var fills: [String] = []
            for arguments in [
                ["--date", "2026-05-01 10:00", "--odometer", "1000", "--volume", "10", "--price-per-unit", "3.45"],
                ["--date", "2026-05-05 10:00", "--odometer", "1300", "--volume", "5.5", "--total", "19.25", "--partial"],
                ["--date", "2026-05-09 10:00", "--odometer", "1600", "--volume", "9.125", "--price-per-unit", "3.50", "--note", "highway, mostly"],
            ] {
                let result = try await stack.logbook(arguments: ["fillup", "add", "--json"] + arguments)
                try #require(result.status == 0, "\(result.stderr)")
                fills.append(try #require(result.object["id"] as? String))
                #expect(result.object["vehicleId"] as? String == civicId)
            }
            let first = try await stack.logbook("call", "records", "records.fillup.get", #"{"id":"\#(fills[0])"}"#)
            #expect((first.object["result"] as? [String: Any])?["totalMinor"] as? Int == 3450, "3.45 × 10 gal, exact")
            // `logbook call` carries a number's digits: a volume of 10 and a 10^-20th is refused
            // for its decimals, not read as the Double 10 and written as a fill-up of 10.
            let precise = try await stack.logbook(
                "call", "records", "records.fillup.add",
                #"{"vehicleId":"\#(civicId)","date":"2026-05-10T10:00:00Z","odometer":1700,"volume":10.00000000000000000001,"totalMinor":100}"#)
            #expect(precise.status == 2 && precise.stdout.contains("at most 3 decimals (got 10.00000000000000000001)"), "\(precise.stdout) \(precise.stderr)")

            let list = try await stack.logbook("fillup", "list")
            #expect(list.status == 0, "\(list.stderr)")
            let rows = list.stdout.split(separator: "\n").filter { line in fills.contains { line.hasPrefix($0) } }
            #expect(rows.count == 3, "\(list.stdout)")
            #expect(rows.filter { $0.contains("partial") }.count == 1, "\(list.stdout)")
            #expect(rows.first { $0.hasPrefix(fills[1]) }?.contains("partial") == true)
            #expect(rows.first?.hasPrefix(fills[2]) == true, "newest first")
            // odometer grouped, the volume exact, money in the fill-up's currency
            let newest = rows.first.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            #expect(newest?.contains("1,600 mi - 9.125 gal $3.50 $31.94 full") == true, "\(list.stdout)")
            // Analytics is fed by events, so its answer may trail the writes by a moment.
            // Full-to-full: the partial at 1,300 opens a segment the full fill at 1,600
            // closes: 600 mi / (5.5 + 9.125) gal = 41.03 mpg.
            var economy = list.stdout
            let computed = try await stack.eventually {
                economy = try await stack.logbook("fillup", "list").stdout
                return economy.contains("average 41.03 mpg (US)")
            }
            #expect(computed, "\(economy)")
            #expect(economy.split(separator: "\n").first { $0.hasPrefix(fills[2]) }?.contains("41.03") == true, "\(economy)")

            let csv = try await stack.logbook("fillup", "list", "--csv")
            #expect(csv.status == 0)
            #expect(csv.stdout.hasPrefix("id,date,odometer,trip,volume,pricePerUnit,total,currency,full,missed,note,economy\r\n"))
            #expect(csv.stdout.contains(",9.125,3.50,31.94,USD,true,false,\"highway, mostly\","), "\(csv.stdout)")

            // Edit derives the other price again; delete asks unless --yes.
            let edited = try await stack.object("fillup", "edit", fills[1], "--total", "19.80", "--full")
            #expect(edited["pricePerUnitMinor"] as? Int == 360 && edited["full"] as? Bool == true, "\(edited)")
            let extra = try await stack.object("fillup", "add", "--trip", "12.5", "--volume", "0.5", "--total", "2")
            let extraId = try #require(extra["id"] as? String)
            #expect(try await stack.logbook("fillup", "delete", extraId).status == 2)
            let deleted = try await stack.logbook("fillup", "delete", extraId, "--yes")
            #expect(deleted.status == 0 && deleted.stdout.hasPrefix("deleted the fill-up"), "\(deleted.stderr)")

            // A second car: the CLI needs a choice, then remembers it.
            let van = try await stack.object("car", "add", "Van", "--distance-unit", "km", "--volume-unit", "l")
            let vanId = try #require(van["id"] as? String)
            let unchosen = try await stack.logbook("fillup", "list")
            #expect(unchosen.status == 5)
            #expect(unchosen.stderr.contains("car use"), "\(unchosen.stderr)")
            #expect(try await stack.logbook("car", "use", "van").status == 0)
            let cars = try await stack.logbook("car", "list")
            #expect(cars.stdout.split(separator: "\n").contains { $0.hasPrefix("*") && $0.contains(vanId) }, "\(cars.stdout)")
            #expect(cars.stdout.contains(" Civic ") && cars.stdout.contains(" Honda ") && cars.stdout.contains(" km/l"), "\(cars.stdout)")
            let carsCSV = try await stack.logbook("car", "list", "--csv")
            let carLines = carsCSV.stdout.components(separatedBy: "\r\n")
            #expect(carLines.first == "selected,id,nickname,make,model,year,distanceUnit,volumeUnit,createdAt", "\(carLines)")
            #expect(carLines.contains { $0.hasPrefix("no,\(civicId),Civic,Honda,,2019,mi,gal,20") }, "\(carLines)")
            #expect(carLines.contains { $0.hasPrefix("yes,\(vanId),Van,,,,km,l,20") }, "\(carLines)")
            let vanList = try await stack.object("fillup", "list")
            #expect((vanList["items"] as? [Any])?.count == 0)
            #expect(try await stack.logbook("fillup", "list", "--car", "Civic").stdout.contains(fills[0]))

            // Two cars with one nickname: ambiguous names list the candidates.
            _ = try await stack.object("car", "add", "Van")
            let ambiguous = try await stack.logbook("car", "use", "Van")
            #expect(ambiguous.status == 2)
            #expect(ambiguous.stderr.contains(vanId) && ambiguous.stderr.contains("2 cars"), "\(ambiguous.stderr)")

            // Delete: refused without a terminal and --yes; with --yes the fill-ups go too.
            let unconfirmed = try await stack.logbook("car", "delete", "Civic")
            #expect(unconfirmed.status == 2)
            #expect(unconfirmed.stderr.contains("Delete car \"Civic\" and its 3 fill-ups?") && unconfirmed.stderr.contains("--yes"))
            let delete = try await stack.logbook("car", "delete", "Civic", "--yes")
            #expect(delete.status == 0, "\(delete.stderr)")
            #expect(delete.stdout.contains("deleted car \"Civic\" and its 3 fill-ups"))
            for fill in fills {
                let gone = try await stack.logbook("call", "records", "records.fillup.get", #"{"id":"\#(fill)"}"#)
                #expect(gone.status == 3, "fill-up \(fill) went with its car")
            }
        }
    }

    @Test("catches (seed 001): two sections in weight order, GeoJSON map")
    func catches() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("cathy")
            let catches: [(String, String, [String], String, String, String)] = [
                ("Perch", "0.4", [], "fresh", "59.30", "18.10"),
                ("Pike", "2.5", [], "fresh", "59.33", "18.07"),
                ("Bass", "4.1", ["--unit", "lb"], "salt", "36.6", "-121.9"),  // 1.86 kg
                ("Tuna", "3", [], "salt", "36.5", "-122.0"),
            ]
            for (species, weight, unit, water, lat, lon) in catches {
                let result = try await stack.logbook(
                    arguments: ["catch", "add", "--species", species, "--weight", weight, "--bait", "spoon", "--water", water,
                    "--lat", lat, "--lon", lon] + unit)
                #expect(result.status == 0, "\(species): \(result.stderr)")
            }
            let noBait = try await stack.logbook(
                "catch", "add", "--species", "Cod", "--weight", "1", "--bait", "", "--water", "salt", "--lat", "1", "--lon", "1")
            #expect(noBait.status == 2)
            #expect(noBait.stderr.contains("bait"))

            let list = try await stack.logbook("catch", "list", "--sort", "weight")
            #expect(list.status == 0, "\(list.stderr)")
            let text = list.stdout
            func position(_ s: String) -> Int { text.range(of: s).map { text.distance(from: text.startIndex, to: $0.lowerBound) } ?? -1 }
            #expect(position("Fresh water") >= 0 && position("Salt water") > position("Fresh water"), "\(text)")
            #expect(position("Fresh water") < position("Pike") && position("Pike") < position("Perch"))
            #expect(position("Perch") < position("Salt water"))
            #expect(position("Salt water") < position("Tuna") && position("Tuna") < position("Bass"), "3 kg > 4.1 lb")
            #expect(text.contains("pending"), "weather not fetched in this stack")
            #expect(text.contains("4.1 lb"))

            // CSV: the record's fields as the service writes them, a whole degree without decimals
            let csv = try await stack.logbook("catch", "list", "--water", "salt", "--sort", "weight", "--csv")
            let lines = csv.stdout.components(separatedBy: "\r\n")
            #expect(
                lines.first == "id,water,caughtAt,species,weight,weightUnit,length,lengthUnit,bait,latitude,longitude,"
                    + "released,note,photoHash,conditionsStatus,weather", "\(lines)")
            #expect(lines.count == 4 && lines[1].contains(",salt,20") && lines[1].hasSuffix(",Tuna,3,kg,,,spoon,36.5,-122,false,,,pending,pending"), "\(lines)")
            #expect(lines.count == 4 && lines[2].hasSuffix(",Bass,4.1,lb,,,spoon,36.6,-121.9,false,,,pending,pending"), "\(lines)")

            let map = try await stack.logbook("catch", "map")
            #expect(map.status == 0, "\(map.stderr)")
            let geo = map.object
            #expect(geo["type"] as? String == "FeatureCollection")
            let features = try #require(geo["features"] as? [[String: Any]])
            #expect(features.count == 4)
            let bass = try #require(features.first { ($0["properties"] as? [String: Any])?["species"] as? String == "Bass" })
            #expect((bass["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [-121.9, 36.6])
            let properties = try #require(bass["properties"] as? [String: Any])
            #expect(properties["water"] as? String == "salt")
            #expect(properties["caughtAt"] is String && properties["id"] is String && properties["weight"] as? Double == 4.1)

            let file = stack.home + "/catches.geojson"
            #expect(try await stack.logbook("catch", "map", "--water", "fresh", "-o", file).status == 0)
            let written = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
            #expect((written?["features"] as? [Any])?.count == 2)

            let id = try #require((features.first?["properties"] as? [String: Any])?["id"] as? String)
            let show = try await stack.logbook("catch", "show", id)
            #expect(show.status == 0 && show.stdout.contains("conditions:") && show.stdout.contains("pending"), "\(show.stdout)")

            let edited = try await stack.object("catch", "edit", id, "--weight", "2.75", "--released", "--note", "back in")
            #expect(edited["weight"] as? Double == 2.75 && edited["released"] as? Bool == true && edited["note"] as? String == "back in")
            #expect(try await stack.logbook("catch", "delete", id, "--yes").status == 0)
            #expect((try await stack.logbook("catch", "map").object["features"] as? [Any])?.count == 3)
        }
    }

    @Test("expenses (seed 002): add, list as CSV, date range, amount order, pages")
    func expenses() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("erin")
            for arguments in [
                ["Lunch", "12.50", "--category", "food", "--date", "2026-05-01T12:00:00Z"],
                ["Train, return", "2300", "--currency", "JPY", "--date", "2026-05-02T08:00:00Z", "--description", "said \"hi\""],
                ["Coffee", "0.29", "--date", "2026-05-03T09:00:00Z"],
            ] {
                let result = try await stack.logbook(arguments: ["expense", "add"] + arguments)
                #expect(result.status == 0, "\(result.stderr)")
            }
            let bad = try await stack.logbook("expense", "add", "Tea", "1.999")
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("at most 2 decimals"))

            let csv = try await stack.logbook("expense", "list", "--csv")
            #expect(csv.status == 0, "\(csv.stderr)")
            let lines = csv.stdout.components(separatedBy: "\r\n")
            #expect(lines.first == "id,date,name,amount,currency,category,description")
            #expect(lines.count == 5 && lines.last == "", "a header, three rows, CRLF after each: \(lines)")
            #expect(lines[1].hasSuffix(",2026-05-03T09:00:00Z,Coffee,0.29,USD,,"), "\(lines)")
            #expect(lines[2].hasSuffix(",2026-05-02T08:00:00Z,\"Train, return\",2300,JPY,,\"said \"\"hi\"\"\""), "\(lines)")
            #expect(lines[3].hasSuffix(",2026-05-01T12:00:00Z,Lunch,12.50,USD,food,"), "\(lines)")

            let range = try await stack.object("expense", "list", "--from", "2026-05-01T00:00:00Z", "--to", "2026-05-02T00:00:00Z")
            #expect((range["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Lunch"])
            let byAmount = try await stack.logbook("expense", "list", "--sort", "amount")
            #expect(byAmount.stdout.contains("total of these 3: 2,300 JPY + $12.79"), "\(byAmount.stdout)")
            #expect(byAmount.stdout.contains("2,300 JPY") && byAmount.stdout.contains("$12.50"), "\(byAmount.stdout)")
            #expect(byAmount.stdout.range(of: "Lunch")!.lowerBound < byAmount.stdout.range(of: "Coffee")!.lowerBound)

            let page = try await stack.object("expense", "list", "--limit", "2")
            #expect((page["items"] as? [Any])?.count == 2 && page["nextCursor"] is String)
            let all = try await stack.object("expense", "list", "--limit", "2", "--all")
            #expect((all["items"] as? [Any])?.count == 3 && all["nextCursor"] == nil)

            let train = try #require((all["items"] as? [[String: Any]])?.first { $0["currency"] as? String == "JPY" })
            let trainId = try #require(train["id"] as? String)
            let edited = try await stack.object("expense", "edit", trainId, "--amount", "2500", "--description", "")
            #expect(edited["amountMinor"] as? Int == 2500 && edited["description"] == nil, "JPY has no decimals: \(edited)")
            #expect(try await stack.logbook("expense", "delete", trainId, "--yes").status == 0)
            #expect((try await stack.object("expense", "list")["items"] as? [Any])?.count == 2)
        }
    }

    @Test("attendance (seed 003): in, a refused second in, out, latest, history")
    func attendance() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("ugo")
            let arrival = try await stack.object("attend", "in", "--lat", "40.7128", "--lon", "-74.006", "--accuracy", "15")
            let arrivalId = try #require(arrival["id"] as? String)
            #expect(arrival["source"] as? String == "cli")

            let again = try await stack.logbook("attend", "in")
            #expect(again.status == 5)
            #expect(again.stderr.contains(arrivalId), "names the open entry: \(again.stderr)")
            #expect(again.stderr.contains("--correction"), "\(again.stderr)")

            let out = try await stack.logbook("attend", "out", "--note", "home")
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.hasPrefix("departure recorded"))

            let latest = try await stack.logbook("attend", "latest")
            #expect(latest.status == 0)
            #expect(latest.stdout.contains("last arrival:") && latest.stdout.contains("40.7128, -74.006 ±15 m"), "\(latest.stdout)")
            #expect(latest.stdout.contains("last departure:") && !latest.stdout.contains("none yet"))

            let history = try await stack.logbook("attend", "history")
            let rows = history.stdout.split(separator: "\n").dropFirst()
            #expect(rows.count == 2 && rows.first?.contains(" out ") == true && rows.last?.contains(arrivalId) == true, "\(history.stdout)")
            #expect(rows.last?.contains("40.7128, -74.006 ±15 m") == true && rows.first?.hasSuffix("home") == true, "\(history.stdout)")
            let csv = try await stack.logbook("attend", "history", "--csv")
            let lines = csv.stdout.components(separatedBy: "\r\n")
            #expect(lines.first == "id,kind,at,source,latitude,longitude,accuracy,correction,note", "\(lines)")
            #expect(lines.count == 4 && lines[1].contains(",departure,") && lines[1].hasSuffix(",cli,,,,false,home"), "\(lines)")
            #expect(lines[2].hasPrefix("\(arrivalId),arrival,20") && lines[2].hasSuffix(",cli,40.7128,-74.006,15,false,"), "\(lines)")

            let map = try await stack.logbook("attend", "map")
            #expect((map.object["features"] as? [Any])?.count == 1, "only the arrival has a location")
        }
    }

    @Test("time (seed 004): activity, timer start/stop/save, log, net worth")
    func time() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("tess")
            #expect(try await stack.logbook("activity", "add", "Guitar").status == 0)
            let start = try await stack.logbook("timer", "start", "Guitar")
            #expect(start.status == 0, "\(start.stderr)")
            #expect(start.stdout.contains("running"))
            try await Task.sleep(for: .milliseconds(1200))
            let list = try await stack.logbook("activity", "list")
            #expect(list.stdout.contains("Guitar") && list.stdout.contains("running") && list.stdout.contains("[...................."), "\(list.stdout)")
            #expect(try await stack.logbook("timer", "stop", "guitar").status == 0, "names match case-insensitively")
            let shown = try await stack.logbook("timer", "show", "Guitar")
            #expect(shown.stdout.contains("stopped 0:00:01"), "\(shown.stdout)")
            let save = try await stack.logbook("timer", "save", "Guitar")
            #expect(save.status == 0, "\(save.stderr)")
            #expect(save.stdout.hasPrefix("saved 0:00:01"), "\(save.stdout)")
            let cleared = try await stack.logbook("timer", "clear", "Guitar")
            #expect(cleared.status == 5, "an idle timer has nothing to clear")

            let log = try await stack.logbook("activity", "log", "Guitar")
            #expect(log.status == 0)
            #expect(log.stdout.split(separator: "\n").filter { $0.contains("0:00:01") }.count >= 1, "\(log.stdout)")
            let entries = try await stack.object("activity", "log", "Guitar")
            #expect((entries["items"] as? [Any])?.count == 1)
            let entry = try #require((entries["items"] as? [[String: Any]])?.first)
            let logCSV = try await stack.logbook("activity", "log", "Guitar", "--csv").stdout.components(separatedBy: "\r\n")
            #expect(logCSV.first == "id,activityId,startedAt,savedAt,durationMs", "\(logCSV)")
            #expect(
                logCSV.count == 3 && logCSV[1] == [entry["id"], entry["activityId"], entry["startedAt"], entry["savedAt"], entry["durationMs"]]
                    .map { "\($0 ?? "")" }.joined(separator: ","), "\(logCSV) \(entry)")
            let activities = try await stack.logbook("activity", "list", "--csv").stdout.components(separatedBy: "\r\n")
            #expect(activities.first == "id,name,totalMs,amount,progress,timerState,timerElapsedMs,createdAt", "\(activities)")
            let guitar = activities.count > 1 ? activities[1].split(separator: ",", omittingEmptySubsequences: false) : []
            #expect(guitar.count == 8 && guitar[1] == "Guitar" && guitar[2] == "\(entry["durationMs"] ?? "")", "\(activities)")
            #expect(guitar.count == 8 && guitar[3] == "0.00" && guitar[5] == "idle" && guitar[6] == "0", "\(activities)")

            let worth = try await stack.object("networth")
            #expect((worth["totalMs"] as? Int ?? 0) >= 1000, "\(worth)")
            let unknown = try await stack.logbook("timer", "start", "Piano")
            #expect(unknown.status == 3)

            let delete = try await stack.logbook("activity", "delete", "Guitar", "--yes")
            #expect(delete.status == 0, "\(delete.stderr)")
            #expect((try await stack.object("networth")["totalMs"] as? Int ?? 0) == worth["totalMs"] as? Int, "never drops")
            #expect((try await stack.object("activity", "list")["items"] as? [Any])?.count == 0)
        }
    }
}
