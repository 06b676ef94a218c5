// The CLI's local store on a fresh in-memory database: the queue keeps order and owners,
// a completed create maps its local id in the same step that removes it, claiming moves
// anonymous writes, logout's removal is per owner, and the read cache answers by body.
import Foundation
import Testing
import Runtime
import Wire

@testable import Gateway

@Suite("local store: queue, local ids, cache")
struct LocalStoreTests {
    @Test("writes queue in order per owner; a create maps its local id when completed")
    func queueOrder() throws {
        let store = try LocalStore.inMemory()
        let car = try store.enqueue(
            owner: "u1", service: "records", method: "records.vehicle.add", body: ["nickname": "Van"],
            idempotencyKey: "k1", localId: "local-1")
        let fill = try store.enqueue(
            owner: "u1", service: "records", method: "records.fillup.add",
            body: ["vehicleId": "local-1", "volume": 10], idempotencyKey: "k2")
        try store.enqueue(
            owner: "u2", service: "records", method: "records.expense.add", body: ["name": "x"], idempotencyKey: "k3")
        #expect(try store.items(owner: "u1").map(\.idempotencyKey) == ["k1", "k2"])
        #expect(try store.counts(owner: "u1") == LocalStore.Counts(pending: 2, failed: 0))
        #expect(try store.creator(of: "local-1")?.id == car.id)

        try store.complete(car, realId: "0196real")
        #expect(try store.realIds(owner: "u1") == ["local-1": "0196real"])
        #expect(try store.items(owner: "u1").map(\.id) == [fill.id])
        let sent = fill.bodyValue.replacingStrings(try store.realIds(owner: "u1"))
        #expect(sent == ["vehicleId": "0196real", "volume": 10])
        #expect(fill.bodyValue.strings(withPrefix: LocalStore.localPrefix) == ["local-1"])
    }

    @Test("a refused write is kept as failed, skipped by a pending-only replay, and can be dropped")
    func failedAndDropped() throws {
        let store = try LocalStore.inMemory()
        let item = try store.enqueue(
            owner: "u1", service: "records", method: "records.expense.add", body: [:], idempotencyKey: "k")
        try store.fail(item, code: "invalid_argument", message: "name: is required")
        #expect(try store.counts(owner: "u1") == LocalStore.Counts(pending: 0, failed: 1))
        #expect(try store.items(owner: "u1", includeFailed: false).isEmpty)
        #expect(try store.items(owner: "u1").first?.lastError == "name: is required")
        #expect(try store.drop(item.id!, owner: "u2") == false, "only the owner's")
        #expect(try store.drop(item.id!, owner: "u1"))
        #expect(try store.counts(owner: "u1").total == 0)
    }

    @Test("claiming moves anonymous writes and their local ids; removal is per owner")
    func claimAndRemove() throws {
        let store = try LocalStore.inMemory()
        let car = try store.enqueue(
            owner: LocalStore.anonymous, service: "records", method: "records.vehicle.add", body: [:],
            idempotencyKey: "a",
            localId: "local-a")
        try store.enqueue(
            owner: "u9", service: "records", method: "records.expense.add", body: [:], idempotencyKey: "b")
        #expect(try store.reassign(from: LocalStore.anonymous, to: "u1") == 1)
        #expect(try store.items(owner: LocalStore.anonymous).isEmpty)
        #expect(try store.items(owner: "u1").first?.id == car.id)
        try store.remember(
            owner: "u1", service: "records", method: "records.expense.list", body: ["limit": 500], result: ["items": []]
        )
        try store.removeAll(owner: "u1")
        #expect(try store.items(owner: "u1").isEmpty)
        #expect(
            try store.cached(owner: "u1", service: "records", method: "records.expense.list", body: ["limit": 500])
                == nil)
        #expect(try store.counts(owner: "u9").pending == 1)
    }

    @Test("the cache answers the same method and body, whatever the key order")
    func cache() throws {
        let store = try LocalStore.inMemory()
        let body: JSONValue = ["b": 1, "a": "x"]
        try store.remember(
            owner: "u1", service: "records", method: "records.vehicle.list", body: body,
            result: ["items": [["id": "v1"]]])
        let again = try store.cached(
            owner: "u1", service: "records", method: "records.vehicle.list", body: ["a": "x", "b": 1])
        #expect(again?.result["items"]?.arrayValue?.count == 1)
        #expect(try store.cached(owner: "u2", service: "records", method: "records.vehicle.list", body: body) == nil)
        #expect(try store.cached(owner: "u1", methods: ["records.vehicle.list"]).count == 1)
    }

    @Test("an answer saved again unchanged keeps its file and renews its time; a changed one is written anew")
    func unchangedAnswer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lb-cache-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = CacheFile(path: directory)
        let first = Date(timeIntervalSince1970: 1_777_000_000.25)
        let later = first.addingTimeInterval(3600)
        func save(_ name: String, at now: Date) throws {
            try cache.remember(
                owner: "u1", service: "auth", method: "auth.whoami", body: [:], result: ["username": .string(name)], now: now)
        }
        func inode() throws -> Int {
            let file = directory + "/" + CacheFile.name(owner: "u1", key: LocalStore.cacheKey("auth", "auth.whoami", [:]))
            return try #require(FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int)
        }
        func saved() throws -> LocalStore.Cached {
            try #require(try cache.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:]))
        }
        try save("ann", at: first)
        let written = try inode()
        #expect(try saved().fetchedAt == WireTime.format(first))
        try save("ann", at: later)
        #expect(try inode() == written)
        #expect(try saved().fetchedAt == WireTime.format(later))
        try save("bob", at: first)
        #expect(try inode() != written)
        #expect(try saved().result["username"] == "bob")
        #expect(try saved().fetchedAt == WireTime.format(first))
        #expect(try cache.cached(owner: "u1", methods: ["auth.whoami"]).map(\.fetchedAt) == [WireTime.format(first)])
    }

    @Test("what may be queued: records writes, never the server-held timer")
    func queueable() {
        #expect(Offline.isQueueable("records", "records.expense.add"))
        #expect(Offline.isQueueable("records", "records.fillup.update"))
        #expect(!Offline.isQueueable("records", "records.timer.start"))
        #expect(!Offline.isQueueable("auth", "auth.logout"))
        #expect(!Offline.isQueueable("store", "store.buy"))
    }

    @Test("a missing ipc socket with no supervisor is down, a listening one is up; a tcp endpoint is never judged")
    func reachability() throws {
        #expect(Reachability.refuses("/tmp/logbook-no-such-dir-\(UUID().uuidString)/records.sock"))
        let home = "/tmp/lbt-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let down = try StackConfiguration.scratch(home)
        #expect(Reachability.isDown("records", configuration: down))
        let tcp = try StackConfiguration.scratch(home, extra: ["LOGBOOK_RECORDS_ENDPOINT": "tcp://127.0.0.1:1"])
        #expect(!Reachability.isDown("records", configuration: tcp))
        // something listens at the socket (and no supervisor runs): up
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true)
        let path = home + "/run/records.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 4) == 0)
        #expect(down.endpoint("records") == "ipc://" + path)
        #expect(!Reachability.isDown("records", configuration: down))
    }

    @Test("the queue counted without opening the store agrees with the store; the cache needs no queue file")
    func countsWithoutTheStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lb-local-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(LocalStore.counts(directory: directory, owner: "u1") == LocalStore.Counts(pending: 0, failed: 0))

        // Answers are saved and read, and forgotten with the owner, without a queue file.
        let local = LocalData(environment: ["LOGBOOK_LOCAL_DIR": directory])
        local.remember(owner: "u1", service: "auth", method: "auth.whoami", body: [:], result: ["username": "ann"])
        #expect(local.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:])?.result["username"] == "ann")
        #expect(!FileManager.default.fileExists(atPath: directory + "/" + LocalStore.fileName))
        #expect(local.waiting(owner: "u1").total == 0)
        // A later run replaces the answer; one file per answer, owner-only, nothing left over.
        LocalData(environment: ["LOGBOOK_LOCAL_DIR": directory]).remember(
            owner: "u1", service: "auth", method: "auth.whoami", body: [:], result: ["username": "bob"])
        #expect(local.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:])?.result["username"] == "bob")
        let cacheDirectory = directory + "/" + LocalStore.cacheFileName
        let answer = cacheDirectory + "/" + CacheFile.name(owner: "u1", key: LocalStore.cacheKey("auth", "auth.whoami", [:]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDirectory) == [(answer as NSString).lastPathComponent])
        #expect(try FileManager.default.attributesOfItem(atPath: answer)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: cacheDirectory)[.posixPermissions] as? Int == 0o700)
        // A damaged answer (a power cut mid-write) reads as none and is removed; the next is saved.
        try Data(repeating: 0x55, count: 8192).write(to: URL(fileURLWithPath: answer))
        let afresh = LocalData(environment: ["LOGBOOK_LOCAL_DIR": directory])
        #expect(afresh.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:]) == nil)
        #expect(!FileManager.default.fileExists(atPath: answer))
        afresh.remember(owner: "u1", service: "auth", method: "auth.whoami", body: [:], result: ["username": "cy"])
        #expect(afresh.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:])?.result["username"] == "cy")
        // Another owner's answers stay when one owner's are removed.
        local.remember(owner: "u2", service: "auth", method: "auth.whoami", body: [:], result: ["username": "dee"])
        try local.removeAll(owner: "u1")
        #expect(local.cached(owner: "u1", service: "auth", method: "auth.whoami", body: [:]) == nil)
        #expect(local.cached(owner: "u2", service: "auth", method: "auth.whoami", body: [:])?.result["username"] == "dee")

        let store = try #require(try LocalStore.open(directory: directory))
        let failed = try store.enqueue(
            owner: "u1", service: "records", method: "records.expense.add", body: [:], idempotencyKey: "k1")
        try store.fail(failed, code: "invalid_argument", message: "no")
        for key in ["k2", "k3"] {
            try store.enqueue(owner: "u1", service: "records", method: "records.expense.add", body: [:], idempotencyKey: key)
        }
        try store.enqueue(owner: "u2", service: "records", method: "records.expense.add", body: [:], idempotencyKey: "k4")
        for owner in ["u1", "u2", "u3"] {
            #expect(LocalStore.counts(directory: directory, owner: owner) == (try store.counts(owner: owner)), "\(owner)")
        }
        #expect(LocalData(environment: ["LOGBOOK_LOCAL_DIR": directory]).waiting(owner: "u1").pending == 2)

        // A file it cannot read that way is left to the store.
        let other = directory + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: other + "/" + LocalStore.fileName))
        #expect(LocalStore.counts(directory: other, owner: "u1") == nil)
    }
}
