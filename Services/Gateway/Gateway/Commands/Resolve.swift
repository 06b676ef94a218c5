// Names accepted where ids are: a car's nickname, an activity's name. An id is looked up
// directly; a name must match exactly one record (case-insensitively), else the error lists
// the candidates. Also the selected car (`logbook car use`), kept per user beside the session.
import Foundation
import Wire

enum Resolve {
    /// The record `reference` names: an id of `getMethod`, else the one item of `listMethod`
    /// whose `nameKey` equals it. `what` is "car" or "activity".
    static func record(
        _ context: Context, _ reference: String, what: String, getMethod: String, listMethod: String, nameKey: String,
        describe: (JSONValue) -> String
    ) async throws -> JSONValue {
        if ID.isValid(reference) {
            do {
                return try await context.send("records", getMethod, body: ["id": .string(reference)])
            } catch let error as ServiceError where error.code == .notFound {
                // Could still be a name that looks like an id; fall through.
            }
        }
        let wanted = reference.trimmingCharacters(in: .whitespaces).lowercased()
        let matches = try await context.everything(listMethod).filter {
            $0[nameKey]?.stringValue?.lowercased() == wanted
        }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ServiceError(.notFound, "no \(what) with the id or name \"\(reference)\"", field: "id")
        default:
            let candidates = matches.map { "\(Output.cell($0["id"])) (\(describe($0)))" }.joined(separator: ", ")
            throw ServiceError(
                .invalidArgument, "\"\(reference)\" names \(matches.count) \(what)s: \(candidates); give the id", field: "id")
        }
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
        let session = try context.requireSession()
        let store = SelectionStore(directory: context.sessions.directory)
        if let selected = store.vehicle(for: session.userId) {
            do {
                return try await context.send("records", "records.vehicle.get", body: ["id": .string(selected)])
            } catch let error as ServiceError where error.code == .notFound {
                try? store.setVehicle(nil, for: session.userId)
            }
        }
        let cars = try await context.everything("records.vehicle.list")
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
