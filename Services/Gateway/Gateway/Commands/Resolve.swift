// Names accepted where ids are: a car's nickname, an activity's name. An id is looked up
// directly; a name must match exactly one record (case-insensitively), else the error lists
// the candidates. Also the selected car (`logbook car use`), kept per user beside the session.
import Contracts
import Foundation
import Wire

/// A record people name by its id or its name: a car (by nickname) or an activity.
protocol Named: Codable, Sendable {
    associatedtype Add: Codable & Sendable
    /// "car" or "activity".
    static var what: String { get }
    static var get: Contracts.Method<IdBody, Self> { get }
    static var list: Contracts.Method<ListBody, Page<Self>> { get }
    static var add: Contracts.Method<Add, Self> { get }
    /// What a reference may give instead of the id: a car's nickname, an activity's name.
    var lookupName: String { get }
    var id: String { get }
    /// How a candidate is shown when a name fits several.
    var candidate: String { get }
    /// The record a create still queued will become: its local id, the service's defaults.
    init(queued add: Add, id: String, at: Date)
}

extension Vehicle: Named {
    static let what = "car"
    static let get = FuelMethods.vehicleGet
    static let list = FuelMethods.vehicleList
    static let add = FuelMethods.vehicleAdd
    var lookupName: String { nickname }
    var candidate: String { Cars.describe(self) }
    init(queued add: VehicleAdd, id: String, at: Date) { self.init(id: id, adding: add, at: at) }
}

extension Activity: Named {
    static let what = "activity"
    static let get = TimeMethods.activityGet
    static let list = TimeMethods.activityList
    static let add = TimeMethods.activityAdd
    var lookupName: String { name }
    var candidate: String { "\(name), \(amount)" }
    init(queued add: Contracts.ActivityAdd, id: String, at: Date) {
        self.init(id: id, name: add.name, createdAt: at, totalMs: 0, timer: .idle(id, now: at))
    }
}

enum Resolve {
    /// The record `reference` names: its id, else the one record whose name equals it. While
    /// the stack cannot be reached (or before any login) the candidates are the saved copies
    /// and the records created offline, whose ids are local (`local-…`).
    static func record<Record: Named>(_ context: Context, _ reference: String) async throws -> Record {
        let anonymous = try context.session() == nil
        if !anonymous && ID.isValid(reference) {
            do {
                return try await Record.get.call(context, IdBody(id: reference))
            } catch let error as ServiceError where error.code == .notFound || Context.isUnreachable(error.code) {
                // Could still be a name that looks like an id, or a copy kept offline; fall through.
            }
        }
        let candidates: [Record] = try await items(context)
        if let local = candidates.first(where: { $0.id == reference }) { return local }
        let wanted = reference.trimmingCharacters(in: .whitespaces).lowercased()
        let matches = candidates.filter { $0.lookupName.lowercased() == wanted }
        let what = Record.what
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ServiceError(.notFound, "no \(what) with the id or name \"\(reference)\"", field: "id")
        default:
            let candidates = matches.map { "\($0.id) (\($0.candidate))" }.joined(separator: ", ")
            throw ServiceError(
                .invalidArgument, "\"\(reference)\" names \(matches.count) \(what)s: \(candidates); give the id", field: "id")
        }
    }

    /// Every record of a kind: from the service, else (unreachable, or not logged in) the
    /// saved copies of its list and gets plus the records created offline and still queued.
    static func items<Record: Named>(_ context: Context) async throws -> [Record] {
        let owner = try context.owner()
        if owner != LocalStore.anonymous {
            do {
                return try await context.everything(Record.list, ListBody())
            } catch let error as ServiceError where Context.isUnreachable(error.code) {
                let local: [Record] = context.localRecords(owner: owner)
                if local.isEmpty { throw error }
                return local
            }
        }
        return context.localRecords(owner: owner)
    }

    static func car(_ context: Context, _ reference: String) async throws -> Vehicle {
        try await record(context, reference)
    }

    static func activity(_ context: Context, _ reference: String) async throws -> Activity {
        try await record(context, reference)
    }

    /// The car a fill-up command works on: `--car`, else the selected one, else the only one.
    static func currentCar(_ context: Context, _ reference: String?) async throws -> Vehicle {
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
        let cars: [Vehicle] = try await items(context)
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
    /// Records known without the stack (`LocalStore.records`): saved answers and queued
    /// creates. The store is made when there is none yet (answers are saved without it).
    func localRecords<Record: Named>(owner: String) -> [Record] {
        (try? localStore())?.records(owner: owner) ?? []
    }
}

extension LocalStore {
    /// The saved answers of the kind's list and get (newest copy of each id wins; a copy that
    /// does not read as the record is skipped), then the creates of that kind still queued, as
    /// the records they will become (their local id, the service's defaults).
    func records<Record: Named>(owner: String) -> [Record] {
        var byId: [String: Record] = [:]
        var order: [String] = []
        let synced = (try? realIds(owner: owner)) ?? [:]
        for answer in (try? cached(owner: owner, methods: [Record.list.name, Record.get.name])) ?? [] {
            let values = answer.method == Record.list.name ? answer.result["items"]?.arrayValue ?? [] : [answer.result]
            for record in values.compactMap({ try? $0.decode(Record.self) }) {
                if byId[record.id] == nil { order.append(record.id) }
                byId[record.id] = record
            }
        }
        for item in (try? items(owner: owner)) ?? [] where item.method == Record.add.name {
            guard let localId = item.localId, synced[localId] == nil,
                let add = try? item.bodyValue.decode(Record.Add.self)
            else { continue }
            order.append(localId)
            byId[localId] = Record(queued: add, id: localId, at: WireTime.parse(item.createdAt) ?? Date())
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
