// `logbook export FILE` and `logbook import archive FILE`: a whole account in one file and
// back (docs/imports.md, "The Logbook archive"). The archive is a POSIX tar (ustar) holding
// `manifest.json` — every record of every logbook, the ledger and the purchases, as the
// services answer them — and `photos/<sha256>`, each catch photo's original bytes. It is read
// back through the services' ordinary methods, with idempotency keys derived from the
// original record ids, so an interrupted import can simply be run again.
import ArgumentParser
import Foundation
import Runtime
import Wire

// MARK: - tar

/// The few parts of POSIX ustar an archive needs: regular files with short names.
public enum Tar {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var data: Data
        public init(name: String, data: Data) {
            self.name = name
            self.data = data
        }
    }

    public static func write(_ entries: [Entry], mtime: Date = Date()) throws -> Data {
        var out = Data()
        for entry in entries {
            let name = Array(entry.name.utf8)
            guard name.count < 100 else { throw ServiceError(.internal, "tar: name too long: \(entry.name)") }
            var header = [UInt8](repeating: 0, count: 512)
            func put(_ text: String, at offset: Int, width: Int) {
                for (i, byte) in text.utf8.prefix(width).enumerated() { header[offset + i] = byte }
            }
            func octal(_ value: Int, width: Int) -> String {
                let digits = String(value, radix: 8)
                return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
            }
            for (i, byte) in name.enumerated() { header[i] = byte }
            put(octal(0o644, width: 8), at: 100, width: 7)
            put(octal(0, width: 8), at: 108, width: 7)
            put(octal(0, width: 8), at: 116, width: 7)
            put(octal(entry.data.count, width: 12), at: 124, width: 11)
            put(octal(Int(mtime.timeIntervalSince1970), width: 12), at: 136, width: 11)
            put("        ", at: 148, width: 8)
            header[156] = UInt8(ascii: "0")
            put("ustar", at: 257, width: 6)
            put("00", at: 263, width: 2)
            let sum = header.reduce(0) { $0 + Int($1) }
            put(octal(sum, width: 7), at: 148, width: 6)
            header[154] = 0
            header[155] = UInt8(ascii: " ")
            out.append(contentsOf: header)
            out.append(entry.data)
            let pad = (512 - entry.data.count % 512) % 512
            out.append(Data(count: pad))
        }
        out.append(Data(count: 1024))
        return out
    }

    public static func read(_ data: Data) throws -> [Entry] {
        let bytes = [UInt8](data)
        var entries: [Entry] = []
        var offset = 0
        let refuse = { (why: String) in ServiceError.invalid("file", "is not a Logbook archive (tar): \(why)") }
        while offset + 512 <= bytes.count {
            let header = Array(bytes[offset..<offset + 512])
            if header.allSatisfy({ $0 == 0 }) { return entries }
            let field = { (start: Int, width: Int) -> String in
                let slice = header[start..<start + width].prefix { $0 != 0 }
                return String(decoding: slice, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            }
            guard let size = Int(field(124, 12), radix: 8), size >= 0, let stated = Int(field(148, 8), radix: 8) else {
                throw refuse("a header at byte \(offset) does not read")
            }
            var copy = header
            for i in 148..<156 { copy[i] = UInt8(ascii: " ") }
            guard copy.reduce(0, { $0 + Int($1) }) == stated else { throw refuse("the header at byte \(offset) is damaged (checksum)") }
            var name = field(0, 100)
            let prefix = field(345, 155)
            if !prefix.isEmpty { name = prefix + "/" + name }
            let start = offset + 512
            guard start + size <= bytes.count else { throw refuse("\(name) is cut short") }
            let type = header[156]
            if type == UInt8(ascii: "0") || type == 0 {
                entries.append(Entry(name: name, data: Data(bytes[start..<start + size])))
            }
            offset = start + (size + 511) / 512 * 512
        }
        throw refuse(entries.isEmpty ? "no files in it" : "it is cut short (no end-of-archive blocks)")
    }
}

// MARK: - export

struct ExportCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write your whole account to one archive file (records, ledger, purchases, photos).",
        discussion: """
            The archive is a tar file: manifest.json (every car and fill-up, catch, expense, \
            attendance entry, activity and saved time, the store's wallet, ledger and purchases) \
            and photos/<sha256> (each catch photo's original bytes). Read it back into any \
            account, on this stack or another, with `logbook import archive FILE`. The format is \
            in docs/imports.md. Running or paused timers are not exported (save them first).
            Examples:
              logbook export alice.logbook
              logbook export - > alice.logbook          # to stdout
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Where to write the archive (- for stdout).") var file: String
    @Flag(help: "Replace FILE if it exists.") var force = false

    func execute(_ context: Context) async throws {
        if file != "-", FileManager.default.fileExists(atPath: file), !force {
            throw ServiceError(.alreadyExists, "\(file) exists: pass --force to replace it", field: "file")
        }
        let session = try context.requireSession()
        let archive = try await AccountArchive.collect(context, token: session.token, username: session.username)
        let data = try Tar.write(archive.entries())
        if file == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            // Written aside, flushed and renamed over FILE: a crash or a power cut leaves the
            // old archive or the whole new one, never neither or a part.
            do {
                try FileSync.write(data, to: file, mode: 0o600, temporary: file + ".part")
            } catch let error as ServiceError {
                throw ServiceError(.failedPrecondition, error.message, field: "file")
            }
        }
        let counts = archive.counts
        if context.json {
            if file != "-" { Output.json(["file": .string(file), "bytes": .number(.init(data.count)), "counts": counts]) }
        } else {
            let text = AccountArchive.describe(counts)
            if file == "-" { Output.errorLine("exported \(text)") } else { Output.line("exported to \(file) (\(data.count) bytes): \(text)") }
            for note in archive.notes { (file == "-" ? Output.errorLine : Output.line)("note: \(note)") }
        }
    }
}

/// An account's records as the archive holds them.
struct AccountArchive {
    static let format = "logbook-account-archive"
    static let version = 1

    var manifest: [String: JSONValue]
    var photos: [String: Data]
    var notes: [String] = []

    var counts: JSONValue { manifest["counts"] ?? [:] }

    func entries() throws -> [Tar.Entry] {
        var entries = [Tar.Entry(name: "manifest.json", data: Data(JSONValue.object(manifest).prettyText.utf8))]
        for (hash, data) in photos.sorted(by: { $0.key < $1.key }) { entries.append(Tar.Entry(name: "photos/\(hash)", data: data)) }
        return entries
    }

    /// "2 cars, 1 fill-up, …"; a kind absent from `counts` is left out.
    static func describe(_ counts: JSONValue) -> String {
        let order = [
            ("vehicles", "car", "cars"), ("fillups", "fill-up", "fill-ups"), ("catches", "catch", "catches"),
            ("photos", "photo", "photos"), ("expenses", "expense", "expenses"),
            ("attendance", "attendance entry", "attendance entries"), ("activities", "activity", "activities"),
            ("timeEntries", "time entry", "time entries"), ("ledger", "ledger row", "ledger rows"),
            ("purchases", "purchase", "purchases"),
        ]
        let parts = order.compactMap { key, one, many -> String? in
            guard let n = counts[key]?.intValue else { return nil }
            return "\(n) \(n == 1 ? one : many)"
        }
        return parts.isEmpty ? "nothing new" : parts.joined(separator: ", ")
    }

    /// Reads everything through the services' list methods (every page).
    static func collect(_ context: Context, token: String, username: String) async throws -> AccountArchive {
        let caller = Context.Caller.token(token)
        func all(_ method: String, _ body: [String: JSONValue] = [:], service: String = "records") async throws -> [JSONValue] {
            var items: [JSONValue] = []
            var cursor: String?
            repeat {
                var page = body
                page["limit"] = .number(service == "store" ? 200 : 500)
                if let cursor { page["cursor"] = .string(cursor) }
                let answer = try await context.send(service, method, body: .object(page), caller: caller)
                items += answer["items"]?.arrayValue ?? answer["entries"]?.arrayValue ?? []
                cursor = answer["nextCursor"]?.stringValue
            } while cursor != nil
            return items
        }
        var notes: [String] = []
        var vehicles: [JSONValue] = []
        var fillupCount = 0
        for vehicle in try await all("records.vehicle.list").reversed() {
            guard case .object(var v) = vehicle, let id = v["id"] else { continue }
            let fills = try await all("records.fillup.list", ["vehicleId": id])
            fillupCount += fills.count
            v["fillups"] = .array(fills.reversed())
            vehicles.append(.object(v))
        }
        var photos: [String: Data] = [:]
        let catches = Array(try await all("records.catch.list").reversed())
        for fish in catches {
            guard let hash = fish["photo"]?["hash"]?.stringValue, photos[hash] == nil, let id = fish["id"] else { continue }
            let photo = try await context.send("records", "records.catch.photo.get", body: ["id": id], caller: caller)
            guard let base64 = photo["data"]?.stringValue, let bytes = Data(base64Encoded: base64) else {
                throw ServiceError(.internal, "records.catch.photo.get answered without base64 data")
            }
            guard Crypto.sha256Hex(bytes) == hash else {
                throw ServiceError(.internal, "the photo of catch \(id.stringValue ?? "") does not match its hash")
            }
            photos[hash] = bytes
        }
        let expenses = Array(try await all("records.expense.list").reversed())
        let attendance = Array(try await all("records.attendance.list").reversed())
        var activities: [JSONValue] = []
        var entryCount = 0
        for activity in try await all("records.activity.list").reversed() {
            guard case .object(var a) = activity, let id = a["id"] else { continue }
            let entries = try await all("records.time.list", ["activityId": id])
            entryCount += entries.count
            a["entries"] = .array(entries.reversed())
            if let state = a["timer"]?["state"]?.stringValue, state != "idle" {
                notes.append("the \(state) timer of \"\(a["name"]?.stringValue ?? "")\" is not exported (save it first)")
            }
            activities.append(.object(a))
        }
        let networth = try await context.send("records", "records.networth", caller: caller)
        // The store: optional (a stack without it still exports its records).
        var store: [String: JSONValue] = [:]
        var ledgerCount = 0
        var purchaseCount = 0
        do {
            let ledger = Array(try await all("store.ledger", service: "store").reversed())
            let items = try await context.send("store", "store.items", caller: caller)
            let wallet = try await context.send("store", "store.wallet", caller: caller)
            let owned = (items["items"]?.arrayValue ?? []).filter { $0["owned"]?.boolValue == true }
            store = ["ledger": .array(ledger), "owned": .array(owned), "wallet": wallet]
            ledgerCount = ledger.count
            purchaseCount = owned.count
        } catch let error as ServiceError where error.code == .unavailable || error.code == .deadlineExceeded {
            notes.append("the store did not answer: its ledger and purchases are not in the archive (\(error.message))")
        }
        let counts: JSONValue = [
            "vehicles": .number(.init(vehicles.count)), "fillups": .number(.init(fillupCount)),
            "catches": .number(.init(catches.count)), "photos": .number(.init(photos.count)),
            "expenses": .number(.init(expenses.count)), "attendance": .number(.init(attendance.count)),
            "activities": .number(.init(activities.count)), "timeEntries": .number(.init(entryCount)),
            "ledger": .number(.init(ledgerCount)), "purchases": .number(.init(purchaseCount)),
        ]
        let manifest: [String: JSONValue] = [
            "format": .string(format), "version": .number(.init(version)), "exportedAt": .string(WireTime.format(Date())),
            "username": .string(username), "counts": counts, "vehicles": .array(vehicles), "catches": .array(catches),
            "expenses": .array(expenses), "attendance": .array(attendance), "activities": .array(activities),
            "networth": networth, "store": .object(store),
        ]
        return AccountArchive(manifest: manifest, photos: photos, notes: notes)
    }

    static func load(_ data: Data) throws -> AccountArchive {
        let entries = try Tar.read(data)
        guard let manifestEntry = entries.first(where: { $0.name == "manifest.json" }) else {
            throw ServiceError.invalid("file", "is not a Logbook archive: no manifest.json in it")
        }
        guard case .object(let manifest) = try JSONValue.parse(manifestEntry.data), manifest["format"]?.stringValue == format else {
            throw ServiceError.invalid("file", "is not a Logbook archive: manifest.json has no format \"\(format)\"")
        }
        guard let version = manifest["version"]?.intValue, version <= Self.version else {
            throw ServiceError.invalid("file", "is an archive of a later version (\(manifest["version"]?.jsonText ?? "?")): update logbook")
        }
        var photos: [String: Data] = [:]
        for entry in entries where entry.name.hasPrefix("photos/") {
            let hash = String(entry.name.dropFirst("photos/".count))
            guard Crypto.sha256Hex(entry.data) == hash else {
                throw ServiceError.invalid("file", "is damaged: \(entry.name) does not match its hash")
            }
            photos[hash] = entry.data
        }
        return AccountArchive(manifest: manifest, photos: photos)
    }
}

// MARK: - import archive

struct ImportArchive: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive", abstract: "Import a whole-account archive made by `logbook export`.",
        discussion: """
            Meant for a new account (on this stack or another): every car, fill-up, catch \
            (with its photo), expense, attendance entry, activity and saved time is created \
            again, and the store's purchases are made again in the ledger's order, so lists, \
            figures and photos come out the same. Records get new ids and creation times. \
            Running it again creates nothing new. Asks first; --yes skips the question.
            Example: logbook import archive alice.logbook --yes
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The archive written by `logbook export`.") var file: String
    @Flag(help: "Do not ask for confirmation.") var yes = false
    @Flag(name: .customLong("dry-run"), help: "Show what the archive holds; write nothing.") var dryRun = false

    func execute(_ context: Context) async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ServiceError(.notFound, "cannot read \(file): no such file, or not readable", field: "file")
        }
        let archive = try AccountArchive.load(data)
        let counts = archive.counts
        let from = "\(archive.manifest["username"]?.stringValue ?? "?") exported \(archive.manifest["exportedAt"]?.stringValue ?? "?")"
        if dryRun {
            if context.json { Output.json(["file": .string(file), "dryRun": true, "counts": counts]) } else {
                Output.line("archive \(file) (\(from)): \(AccountArchive.describe(counts))")
                Output.line("dry run: nothing was written")
            }
            return
        }
        let session = try context.requireSession()
        if !yes {
            let question = "Import \(AccountArchive.describe(counts)) into \(session.username)?"
            guard Prompt.isInteractive else {
                throw ServiceError(.invalidArgument, "no terminal to ask \"\(question)\": pass --yes to confirm")
            }
            guard try Prompt.confirm(question) else { throw ServiceError(.failedPrecondition, "not confirmed; nothing was imported") }
        }
        var restore = ArchiveRestore(context: context, token: session.token, archive: archive, json: context.json)
        try await restore.run()
        let result: JSONValue = [
            "file": .string(file), "counts": counts, "created": .object(restore.created.mapValues { .number(.init($0)) }),
            "alreadyImported": .number(.init(restore.existing)),
            "rejected": .array(restore.rejected.map { .string($0) }), "notes": .array(restore.notes.map { .string($0) }),
        ]
        if context.json {
            Output.json(result)
        } else {
            var line = "imported \(file) (\(from)): \(AccountArchive.describe(.object(restore.created.mapValues { .number(.init($0)) })))"
            if restore.existing > 0 { line += "; \(restore.existing) already imported before (not doubled)" }
            Output.line(line)
            for note in restore.notes { Output.line("note: \(note)") }
            if !restore.rejected.isEmpty {
                Output.line("not taken (\(restore.rejected.count)):")
                for r in restore.rejected { Output.line("  \(r)") }
            }
        }
        if !restore.rejected.isEmpty { throw ExitCode(ExitStatus.partial) }
    }
}

/// Replays an archive through the services' write methods.
struct ArchiveRestore {
    let context: Context
    let token: String
    let archive: AccountArchive
    let json: Bool
    var created: [String: Int] = [:]
    /// Writes answered from the exactly-once log: made by an earlier import of this archive.
    var existing = 0
    let started = Date()
    var rejected: [String] = []
    var notes: [String] = []

    init(context: Context, token: String, archive: AccountArchive, json: Bool) {
        self.context = context
        self.token = token
        self.archive = archive
        self.json = json
    }

    /// `import-archive-<sha256 of the kind and the original id>`: per user, so the same
    /// archive imported twice into one account creates nothing new.
    static func key(_ kind: String, _ id: String) -> String {
        "import-archive-" + String(Crypto.sha256Hex(kind + "\u{1F}" + id).prefix(48))
    }

    mutating func send(_ kind: String, _ service: String, _ method: String, _ body: [String: JSONValue], key: String, what: String)
        async throws -> JSONValue?
    {
        do {
            let result = try await context.send(
                service, method, body: .object(body), caller: .token(token), write: true, idempotencyKey: key)
            if Importer.isNew(result, since: started) { created[kind, default: 0] += 1 } else { existing += 1 }
            return result
        } catch let error as ServiceError where Context.isUnreachable(error.code) {
            throw ServiceError(error.code, "\(error.message); run the same import again to finish (nothing is doubled)")
        } catch let error as ServiceError {
            rejected.append("\(what): \(error.message)")
            return nil
        }
    }

    static func pick(_ record: JSONValue, _ keys: [String]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        for key in keys { if let v = record[key], v != .null { body[key] = v } }
        return body
    }

    mutating func run() async throws {
        let m = archive.manifest
        let total = ["fillups", "catches", "expenses", "attendance", "timeEntries", "vehicles", "activities"]
            .reduce(0) { $0 + (archive.counts[$1]?.intValue ?? 0) }
        let progress = Progress(total: total, enabled: !json && isatty(STDERR_FILENO) == 1)
        var done = 0
        // Cars and their fill-ups, oldest first.
        for vehicle in m["vehicles"]?.arrayValue ?? [] {
            let oldId = vehicle["id"]?.stringValue ?? ""
            let body = Self.pick(vehicle, ["nickname", "make", "model", "year", "distanceUnit", "volumeUnit"])
            guard let made = try await send("vehicles", "records", "records.vehicle.add", body, key: Self.key("vehicle", oldId), what: "car \(oldId)"),
                let newId = made["id"]
            else { continue }
            done += 1
            progress.update(done)
            for fill in vehicle["fillups"]?.arrayValue ?? [] {
                var body = Self.pick(fill, ["date", "odometer", "trip", "volume", "currency", "full", "missed", "note"])
                body["vehicleId"] = newId
                // Send the price that was typed; the service derives the other exactly as before.
                switch fill["derived"]?.stringValue {
                case "price": body["totalMinor"] = fill["totalMinor"]
                case "total": body["pricePerUnitMinor"] = fill["pricePerUnitMinor"]
                default:
                    body["totalMinor"] = fill["totalMinor"]
                    body["pricePerUnitMinor"] = fill["pricePerUnitMinor"]
                }
                let id = fill["id"]?.stringValue ?? ""
                _ = try await send("fillups", "records", "records.fillup.add", body, key: Self.key("fillup", id), what: "fill-up \(id)")
                done += 1
                progress.update(done)
            }
        }
        for fish in m["catches"]?.arrayValue ?? [] {
            var body = Self.pick(
                fish, ["species", "weight", "weightUnit", "length", "lengthUnit", "bait", "water", "latitude", "longitude", "caughtAt", "note", "released"])
            let id = fish["id"]?.stringValue ?? ""
            if let hash = fish["photo"]?["hash"]?.stringValue {
                guard let bytes = archive.photos[hash] else {
                    rejected.append("catch \(id): its photo \(hash) is not in the archive")
                    continue
                }
                body["photo"] = .string(bytes.base64EncodedString())
            }
            if let made = try await send("catches", "records", "records.catch.add", body, key: Self.key("catch", id), what: "catch \(id)"),
                body["photo"] != nil, Importer.isNew(made, since: started)
            {
                created["photos", default: 0] += 1
            }
            done += 1
            progress.update(done)
        }
        for expense in m["expenses"]?.arrayValue ?? [] {
            let body = Self.pick(expense, ["name", "description", "amountMinor", "currency", "date", "category"])
            let id = expense["id"]?.stringValue ?? ""
            _ = try await send("expenses", "records", "records.expense.add", body, key: Self.key("expense", id), what: "expense \(id)")
            done += 1
            progress.update(done)
        }
        // Oldest first, so each entry alternates with the one before it. Two entries of a kind
        // next to each other (one between them deleted since) go in as a correction, as
        // records would take the second only with that flag, and a note says which.
        var previousKind: String?
        for entry in m["attendance"]?.arrayValue ?? [] {
            var body = Self.pick(entry, ["kind", "at", "latitude", "longitude", "accuracy", "source", "note", "correction"])
            let id = entry["id"]?.stringValue ?? ""
            let kind = entry["kind"]?.stringValue
            if let kind, kind == previousKind, body["correction"]?.boolValue != true {
                body["correction"] = true
                notes.append(
                    "attendance entry \(id) (\(kind) at \(entry["at"]?.stringValue ?? "?")) follows another \(kind): "
                        + "imported as a correction")
            }
            previousKind = kind
            _ = try await send("attendance", "records", "records.attendance.add", body, key: Self.key("attendance", id), what: "attendance entry \(id)")
            done += 1
            progress.update(done)
        }
        try await restoreTime(progress: progress, done: &done)
        progress.finish()
    }

    /// Activities, their saved time and the store's purchases, in the ledger's order: each
    /// purchase is made once the store has counted the time saved before it, so every ledger
    /// row's balance comes out as it was.
    mutating func restoreTime(progress: Progress, done: inout Int) async throws {
        let m = archive.manifest
        var activityIds: [String: JSONValue] = [:]
        var entries: [String: (entry: JSONValue, activity: String)] = [:]
        var entryOrder: [String] = []
        for activity in m["activities"]?.arrayValue ?? [] {
            let oldId = activity["id"]?.stringValue ?? ""
            guard let made = try await send(
                "activities", "records", "records.activity.add", Self.pick(activity, ["name"]), key: Self.key("activity", oldId),
                what: "activity \(oldId)"), let newId = made["id"]
            else { continue }
            activityIds[oldId] = newId
            done += 1
            progress.update(done)
            for entry in activity["entries"]?.arrayValue ?? [] {
                guard let id = entry["id"]?.stringValue else { continue }
                entries[id] = (entry, oldId)
                entryOrder.append(id)
            }
        }
        let ledger = m["store"]?["ledger"]?.arrayValue ?? []
        var placed = Set<String>()
        var savedMs: Int64 = 0
        var deletedActivity: JSONValue?
        for row in ledger {
            switch row["kind"]?.stringValue {
            case "earning":
                guard let reference = row["reference"]?.stringValue else { continue }
                if let (entry, activity) = entries[reference], let newActivity = activityIds[activity] {
                    savedMs += try await addTime(entry, id: reference, activity: newActivity)
                    placed.insert(reference)
                    done += 1
                    progress.update(done)
                } else if let duration = row["durationMs"]?.doubleValue {
                    // Time of an activity deleted before the export: it stays in net worth.
                    if deletedActivity == nil {
                        deletedActivity = try await send(
                            "deletedActivities", "records", "records.activity.add", ["name": .string("Deleted activities (imported)")],
                            key: Self.key("deleted-activities", m["username"]?.stringValue ?? ""), what: "deleted activities' time")?["id"]
                    }
                    if let holder = deletedActivity {
                        // The ledger keeps when it was saved: it ended then.
                        let savedAt = row["at"]?.stringValue.flatMap(WireTime.parse) ?? Date()
                        let entry: JSONValue = [
                            "durationMs": .number(.init(duration)),
                            "startedAt": .string(WireTime.format(savedAt.addingTimeInterval(-duration / 1000))),
                        ]
                        savedMs += try await addTime(entry, id: reference, activity: holder, kind: "deletedTime")
                    }
                }
            case "purchase":
                guard let item = row["reference"]?.stringValue else { continue }
                try await waitForStore(netWorthMs: savedMs)
                _ = try await send("purchases", "store", "store.buy", ["itemId": .string(item)], key: Self.key("purchase", item), what: "purchase of \(item)")
            default:
                notes.append("a \(row["kind"]?.stringValue ?? "?") ledger row is not reproduced: records has no way to make it")
            }
        }
        // Time the ledger did not list (a store that had not counted it yet).
        for id in entryOrder where !placed.contains(id) {
            guard let (entry, activity) = entries[id], let newActivity = activityIds[activity] else { continue }
            savedMs += try await addTime(entry, id: id, activity: newActivity)
            done += 1
            progress.update(done)
        }
        if let holder = deletedActivity {
            _ = try? await context.send(
                "records", "records.activity.delete", body: ["id": holder], caller: .token(token), write: true,
                idempotencyKey: Self.key("deleted-activities-delete", m["username"]?.stringValue ?? ""))
            notes.append("time of activities deleted before the export was added to net worth through a deleted placeholder activity")
        }
    }

    /// One saved time entry (split in days when longer than `records.time.add` accepts).
    mutating func addTime(_ entry: JSONValue, id: String, activity: JSONValue, kind: String = "timeEntries") async throws -> Int64 {
        let total = Int64(entry["durationMs"]?.doubleValue ?? 0)
        guard total > 0 else { return 0 }
        let day: Int64 = 86_400_000
        var start = entry["startedAt"]?.stringValue.flatMap(WireTime.parse)
        var left = total
        var part = 0
        if total > day { notes.append("a saved time of \(TimeText.clock(milliseconds: total)) was added in parts of at most 24 h") }
        while left > 0 {
            let chunk = min(left, day)
            var body: [String: JSONValue] = ["activityId": activity, "durationMs": .number(.init(chunk))]
            // The first part keeps the archive's text: a round trip through Date may lose a millisecond.
            if part == 0, let text = entry["startedAt"]?.stringValue {
                body["startedAt"] = .string(text)
            } else if let s = start {
                body["startedAt"] = .string(WireTime.format(s))
            }
            let key = Self.key("time", id + (part == 0 ? "" : "#\(part)"))
            if try await send(part == 0 ? kind : "timeParts", "records", "records.time.add", body, key: key, what: "saved time \(id)") == nil {
                return total - left
            }
            left -= chunk
            part += 1
            start = start?.addingTimeInterval(Double(chunk) / 1000)
        }
        return total
    }

    /// Waits (up to 15 s) until the store has counted `netWorthMs` of saved time.
    func waitForStore(netWorthMs: Int64) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(15)
        while clock.now < deadline {
            let wallet = try await context.send("store", "store.wallet", caller: .token(token))
            if Int64(wallet["netWorthMs"]?.doubleValue ?? 0) >= netWorthMs { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
