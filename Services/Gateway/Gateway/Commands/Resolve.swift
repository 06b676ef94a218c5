// Names accepted where ids are: a car's nickname, an activity's name. An id is looked up
// directly; a name must match exactly one record (case-insensitively), else the error lists
// the candidates. Also the selected car (`logbook car use`), kept per user beside the session.
import Foundation
import Wire

enum Resolve {
    /// The record `reference` names: an id of `getMethod`, else the one item of `listMethod`
    /// whose `nameKey` equals it. `what` is "car" or "activity". While the stack cannot be
    /// reached (or before any login) the candidates are the saved copies and the records
    /// created offline, whose ids are local (`local-…`).
    static func record(
        _ context: Context, _ reference: String, what: String, getMethod: String, listMethod: String, nameKey: String,
        describe: (JSONValue) -> String
    ) async throws -> JSONValue {
        let anonymous = try context.session() == nil
        if !anonymous && ID.isValid(reference) {
            do {
                return try await context.send("records", getMethod, body: ["id": .string(reference)])
            } catch let error as ServiceError where error.code == .notFound || Context.isUnreachable(error.code) {
                // Could still be a name that looks like an id, or a copy kept offline; fall through.
            }
        }
        let candidates = try await items(context, listMethod: listMethod, getMethod: getMethod)
        if let local = candidates.first(where: { $0["id"]?.stringValue == reference }) { return local }
        let wanted = reference.trimmingCharacters(in: .whitespaces).lowercased()
        let matches = candidates.filter { $0[nameKey]?.stringValue?.lowercased() == wanted }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ServiceError(.notFound, "no \(what) with the id or name \"\(reference)\"", field: "id")
        default:
            let candidates = matches.map { "\(Output.cell($0["id"])) (\(describe($0)))" }.joined(separator: ", ")
            throw ServiceError(
                .invalidArgument, "\"\(reference)\" names \(matches.count) \(what)s: \(candidates); give the id", field: "id")
        }
    }

    /// Every record of a list: from the service, else (unreachable, or not logged in) the
    /// saved copies of its list and gets plus the records created offline and still queued.
    static func items(_ context: Context, listMethod: String, getMethod: String) async throws -> [JSONValue] {
        let owner = try context.owner()
        if owner != LocalStore.anonymous {
            do {
                return try await context.everything(listMethod)
            } catch let error as ServiceError where Context.isUnreachable(error.code) {
                let local = context.localRecords(listMethod: listMethod, getMethod: getMethod, owner: owner)
                if local.isEmpty { throw error }
                return local
            }
        }
        return context.localRecords(listMethod: listMethod, getMethod: getMethod, owner: owner)
    }

    static func car(_ context: Context, _ reference: String) async throws -> JSONValue {
        try await record(
            context, reference, what: "car", getMethod: "records.vehicle.get", listMethod: "records.vehicle.list",
            nameKey: "nickname", describe: Cars.describe)
    }

    static func activity(_ context: Context, _ reference: String) async throws -> JSONValue {
        try await record(
            context, reference, what: "activity", getMethod: "records.activity.get", listMethod: "records.activity.list",
            nameKey: "name", describe: { "\(Output.cell($0["name"])), \(Output.cell($0["amount"]))" })
    }

    /// The car a fill-up command works on: `--car`, else the selected one, else the only one.
    static func currentCar(_ context: Context, _ reference: String?) async throws -> JSONValue {
        if let reference { return try await car(context, reference) }
        let owner = try context.owner()
        let store = SelectionStore(directory: context.sessions.directory)
        if let selected = store.vehicle(for: owner) {
            do {
                return try await car(context, selected)
            } catch let error as ServiceError where error.code == .notFound {
                try? store.setVehicle(nil, for: owner)
            }
        }
        let cars = try await items(context, listMethod: "records.vehicle.list", getMethod: "records.vehicle.get")
        switch cars.count {
        case 1: return cars[0]
        case 0: throw ServiceError(.failedPrecondition, "no car yet: add one with `logbook car add NICKNAME`")
        default:
            throw ServiceError(
                .failedPrecondition,
                "you have \(cars.count) cars: choose one with `logbook car use ID|NICKNAME` or pass --car")
        }
    }
}

extension Context {
    /// Records known without the stack: saved answers of `listMethod` and `getMethod`
    /// (newest copy of each id wins), then the creates of that kind still queued, as the
    /// records they will become (their local id, the service's defaults not filled in).
    func localRecords(listMethod: String, getMethod: String, owner: String) -> [JSONValue] {
        guard let store = try? localStore(create: false) else { return [] }
        var byId: [String: JSONValue] = [:]
        var order: [String] = []
        let realIds = (try? store.realIds(owner: owner)) ?? [:]
        for cached in (try? store.cached(owner: owner, methods: [listMethod, getMethod])) ?? [] {
            let records = cached.method == listMethod ? cached.result["items"]?.arrayValue ?? [] : [cached.result]
            for record in records {
                guard let id = record["id"]?.stringValue else { continue }
                if byId[id] == nil { order.append(id) }
                byId[id] = record
            }
        }
        let addMethod = listMethod.replacingOccurrences(of: ".list", with: ".add")
        for item in (try? store.items(owner: owner)) ?? [] where item.method == addMethod {
            guard let localId = item.localId, realIds[localId] == nil, case .object(var record) = item.bodyValue else { continue }
            record["id"] = .string(localId)
            record["queued"] = true
            order.append(localId)
            byId[localId] = .object(record)
        }
        return order.compactMap { byId[$0] }
    }
}

/// `selection.json` in the config directory: the selected car of each user who logged in here.
struct SelectionStore {
    let directory: String
    var path: String { directory + "/selection.json" }

    private func load() -> [String: [String: String]] {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONDecoder().decode([String: [String: String]].self, from: data)
        else { return [:] }
        return object
    }

    func vehicle(for userId: String) -> String? { load()[userId]?["vehicleId"] }

    func setVehicle(_ id: String?, for userId: String) throws {
        var all = load()
        all[userId, default: [:]]["vehicleId"] = id
        if all[userId]?.isEmpty == true { all[userId] = nil }
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: try encoder.encode(all), attributes: [.posixPermissions: 0o600]),
            rename(temporary, path) == 0
        else {
            unlink(temporary)
            throw ServiceError(.internal, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
