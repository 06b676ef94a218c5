// logbook-fuzz: the request decoder under libFuzzer. Every input is one request frame, handed
// to the real dispatchers of auth, records, weather-fetcher, analytics and the store (each on
// an in-memory database; user methods see a valid session for token "good"), so the
// envelope and every method's body are decoded as a service decodes them. The oracle: every
// frame gets exactly one reply, a JSON object {"v":1,"id":string,"ok":bool} whose error, if
// any, has a known code other than `internal`; nothing crashes or hangs.
//
//   Regression (a normal build): logbook-fuzz DIR|FILE…   runs each input once; exit 1 on a failure
//   Seeds:                       logbook-fuzz --write-seeds DIR
//   Fuzzing (deploy/fuzz.sh):    built with -sanitize=fuzzer -D LOGBOOK_FUZZ; libFuzzer's flags
import AnalyticsService
import AuthService
import Dispatch
import Foundation
import Logging
import RecordsService
import Runtime
import StoreService
import Storage
import WeatherFetcherService
import Wire

/// Token "good" is user "fuzz"; anything else is refused.
struct FuzzSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        guard token == "good" else { throw ServiceError.unauthenticated("session expired or revoked") }
        return Principal(userId: "fuzz", username: "fuzz", sessionId: "fuzz-session")
    }
}

final class Targets: Sendable {
    let dispatchers: [Dispatcher]

    init() throws {
        var logger = Logger(label: "fuzz")
        logger.logLevel = .critical
        let sessions = FuzzSessions()
        let auth = try AuthService(
            configuration: AuthConfiguration(argon2: .minimum, hashingConcurrency: 1), database: .inMemory, logger: logger)
        let recordsHost = try ServiceHost(
            descriptor: ServiceDescriptor(name: RecordsService.name), database: .inMemory,
            migrator: RecordsService.migrator, eventsEndpoint: nil, logger: logger)
        let photos = PhotoStore(
            settings: PhotoSettings(directory: NSTemporaryDirectory() + "/logbook-fuzz-photos-\(getpid())"),
            database: recordsHost.database, logger: logger)
        let records = recordsHost.dispatcher(
            router: RecordsService.router(host: recordsHost, photos: photos), sessions: sessions)
        var weatherSettings = WeatherFetcherSettings()
        // Nothing leaves the machine: every provider is a port that refuses connections.
        weatherSettings.forecastURL = "http://127.0.0.1:9/v1/forecast"
        weatherSettings.archiveURL = "http://127.0.0.1:9/v1/archive"
        weatherSettings.marineURL = "http://127.0.0.1:9/v1/marine"
        weatherSettings.noaaURL = "http://127.0.0.1:9"
        weatherSettings.httpTimeout = .milliseconds(200)
        let weather = try WeatherFetcherService(database: .inMemory, settings: weatherSettings, eventsEndpoint: nil, logger: logger)
        let analytics = try AnalyticsService(database: .inMemory, sessions: sessions, logger: logger)
        let storeHost = try ServiceHost(
            descriptor: ServiceDescriptor(name: StoreService.name), database: .inMemory, migrator: StoreService.migrator,
            eventsEndpoint: nil, logger: logger)
        let store = StoreService(host: storeHost, settings: StoreSettings(quotesURL: URL(string: "http://127.0.0.1:9")!))
        dispatchers = [
            auth.dispatcher, records, weather.host.dispatcher(router: weather.router(), sessions: sessions),
            analytics.dispatcher, storeHost.dispatcher(router: store.router(), sessions: sessions),
        ]
    }

    /// Every dispatcher's reply to `frame`, checked; the first problem found, or nil.
    func check(_ frame: Data) async -> String? {
        for dispatcher in dispatchers {
            let reply = await dispatcher.handle(frame)
            if let problem = Self.problem(reply) { return "\(dispatcher.descriptor.name): \(problem)" }
        }
        return nil
    }

    static func problem(_ reply: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: reply) as? [String: Any] else {
            return "the reply is not a JSON object: \(String(decoding: reply.prefix(300), as: UTF8.self))"
        }
        guard (object["v"] as? NSNumber)?.intValue == 1, object["id"] is String, let ok = object["ok"] as? Bool else {
            return "the reply lacks v, id or ok: \(String(decoding: reply.prefix(300), as: UTF8.self))"
        }
        if ok { return nil }
        guard let error = object["error"] as? [String: Any], let code = error["code"] as? String,
            ErrorCode.all.map(\.rawValue).contains(code), error["message"] is String
        else { return "an error without a known code and a message: \(String(decoding: reply.prefix(300), as: UTF8.self))" }
        if code == "internal" { return "internal error (a bug): \(String(decoding: reply.prefix(300), as: UTF8.self))" }
        return nil
    }

    /// A request per method of every service, with the session token: where mutations start.
    func seeds() async -> [String: Data] {
        var seeds: [String: Data] = [:]
        for dispatcher in dispatchers {
            let info = await dispatcher.handle(Data(#"{"v":1,"id":"i","method":"$srv.info"}"#.utf8))
            let methods = ((try? JSONSerialization.jsonObject(with: info) as? [String: Any])?["result"] as? [String: Any])?[
                "methods"] as? [[String: Any]] ?? []
            for method in methods.compactMap({ $0["name"] as? String }) {
                seeds[method] = Data(#"{"v":1,"id":"seed","method":"\#(method)","token":"good","body":{}}"#.utf8)
            }
        }
        let examples: [String: String] = [
            "auth.register": #"{"username":"alice","password":"correct horse","email":"a@example.com"}"#,
            "auth.login": #"{"username":"alice","password":"correct horse","deviceToken":"lbd_x"}"#,
            "records.vehicle.add": #"{"nickname":"Civic","make":"Honda","year":2019,"distanceUnit":"mi","volumeUnit":"gal"}"#,
            "records.fillup.add": #"{"vehicleId":"v","odometer":12345.6,"volume":11.2,"pricePerUnitMinor":345.9,"full":true}"#,
            "records.expense.add": #"{"name":"Lunch","amountMinor":1250,"currency":"USD","category":"food","date":"2026-05-01T12:00:00Z"}"#,
            "records.catch.add": #"{"species":"Pike","weight":2.5,"weightUnit":"kg","bait":"spoon","water":"fresh","latitude":59.3,"longitude":18.1}"#,
            "records.attendance.add": #"{"kind":"arrival","source":"cli","latitude":40.7,"longitude":-74.0,"accuracy":15}"#,
            "records.activity.add": #"{"name":"Guitar"}"#,
            "analytics.expense.summary": #"{"by":"month","from":"2026-05-01","to":"2026-06-01"}"#,
            "weather.get": #"{"latitude":41.5,"longitude":-70.6,"at":"2024-05-20T14:40:00Z","water":"fresh"}"#,
            "events.since": #"{"after":0,"limit":10}"#,
        ]
        for (method, body) in examples {
            seeds[method] = Data(#"{"v":1,"id":"seed","method":"\#(method)","token":"good","body":\#(body)}"#.utf8)
        }
        seeds["malformed-truncated"] = Data(#"{"v":1,"id":"cut","method":"records.expense.add","body":{"name":"Lu"#.utf8)
        seeds["malformed-version"] = Data(#"{"v":1.0,"id":"v","method":"$srv.ping"}"#.utf8)
        seeds["malformed-nesting"] = Data((String(repeating: "[", count: 200) + String(repeating: "]", count: 200)).utf8)
        return seeds
    }
}

/// Runs async work to completion from synchronous code (libFuzzer's callback).
func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: T?  // written once before the semaphore is signalled, read after
}

nonisolated(unsafe) var targets: Targets?

func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let targets else { return 0 }
    let frame = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    if let problem = blocking({ await targets.check(frame) }) {
        FileHandle.standardError.write(Data("logbook-fuzz: \(problem)\n".utf8))
        abort()
    }
    return 0
}

#if LOGBOOK_FUZZ
/// libFuzzer's entry point (its driver refers to it even when started by `LLVMFuzzerRunDriver`).
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt { fuzzOne(bytes, count) }

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
#endif

@main
struct Fuzz {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let made = try Targets()
        targets = made
        if arguments.first == "--write-seeds", arguments.count == 2 {
            try FileManager.default.createDirectory(atPath: arguments[1], withIntermediateDirectories: true)
            for (name, data) in blocking({ await made.seeds() }) {
                let file = name.replacingOccurrences(of: "$", with: "srv-").replacingOccurrences(of: ".", with: "-")
                try data.write(to: URL(fileURLWithPath: arguments[1] + "/" + file))
            }
            return
        }
        #if LOGBOOK_FUZZ
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { fuzzOne($0, $1) })
        #else
        // Regression: every input once (the corpus, and crash inputs saved by a fuzzing run).
        var files: [String] = []
        for path in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("logbook-fuzz: no such file or directory: \(path)\n".utf8))
                exit(2)
            }
            if isDirectory.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
                files += names.filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        var failures = 0
        for file in files {
            let frame = try Data(contentsOf: URL(fileURLWithPath: file))
            if let problem = blocking({ await made.check(frame) }) {
                failures += 1
                print("FAIL \(file): \(problem)")
            }
        }
        print("logbook-fuzz: \(files.count) inputs, \(failures) failed")
        exit(failures == 0 ? 0 : 1)
        #endif
    }
}
