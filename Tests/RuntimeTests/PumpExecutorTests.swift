// A client's socket thread as a task executor (ServiceClient.executor): a caller running
// under its preference sends and waits for its reply on that thread (SocketPump.exchangeHere),
// a reply or a timeout wakes it there, replies to other callers still reach them meanwhile,
// a silent peer still gets a fresh socket, and closing the client from that very thread
// neither deadlocks nor strands the task. Also the reply-reading shortcuts the client takes (EnvelopeScan.successResult and
// EnvelopeScan.id), held to what the JSON decoder reads from the same frames.
import Foundation
import Runtime
import Testing
import Wire
import ZMQ

@Suite struct PumpExecutorTests {
    /// Read in a synchronous function: `isCurrentThread` is a question about the thread.
    static func onSocketThread(_ pump: SocketPump) -> Bool { pump.isCurrentThread }

    @Test func aCallerUnderThePreferenceRunsOnTheSocketThread() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            defer { client.close() }
            #expect(!Self.onSocketThread(client.executor))
            let seen = try await withTaskExecutorPreference(client.executor) {
                var seen: [Bool] = [Self.onSocketThread(client.executor)]
                for i in 0..<50 {
                    let echoed = try await client.call("test.echo", EchoBody(text: "n\(i)", count: i), as: EchoBody.self)
                    #expect(echoed == EchoBody(text: "n\(i)", count: i))
                    seen.append(Self.onSocketThread(client.executor))
                    _ = try await client.call("$srv.ping", Empty(), as: Ping.self)
                    seen.append(Self.onSocketThread(client.executor))
                }
                return seen
            }
            #expect(seen.allSatisfy { $0 }, "a step ran off the socket thread: \(seen)")
            // Concurrent child tasks inherit the preference; each gets its own answer.
            let texts = try await withTaskExecutorPreference(client.executor) {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for i in 0..<20 {
                        group.addTask { try await client.call("test.echo", EchoBody(text: "c\(i)"), as: EchoBody.self).text }
                    }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
            }
            #expect(texts == Set((0..<20).map { "c\($0)" }))
        }
    }

    @Test func aTimeoutResumesTheCallerOnTheSocketThread() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // Nobody listens: the request is never delivered; the client's timer ends the wait.
        let client = try ServiceClient(
            service: "nobody", endpoint: "ipc://\(scratch.path)/nobody.sock", settings: ClientSettings(attempts: 1))
        defer { client.close() }
        let outcome = await withTaskExecutorPreference(client.executor) { () -> (String?, Bool) in
            do {
                _ = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .milliseconds(150)))
                return (nil, Self.onSocketThread(client.executor))
            } catch let error as ServiceError {
                return (error.code.rawValue, Self.onSocketThread(client.executor))
            } catch {
                return ("\(error)", Self.onSocketThread(client.executor))
            }
        }
        #expect(outcome.0 == ErrorCode.unavailable.rawValue)
        #expect(outcome.1)
    }

    @Test func aWaitOnTheSocketThreadPassesOtherRepliesOn() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            defer { client.close() }
            // Off the socket thread: no exchange here.
            #expect(client.executor.exchangeHere([Data(), Data("{}".utf8)], until: .now + .seconds(1)) { _ in true } == nil)
            let clock = ContinuousClock()
            let start = clock.now
            // Sent the usual way, answered after 300 ms, while the caller below waits on the
            // socket's thread for a reply that comes after 900 ms.
            async let other = { () async throws -> Duration in
                _ = try await client.call("test.slow", EchoBody(text: "other", count: 300), as: EchoBody.self)
                return clock.now - start
            }()
            try await Task.sleep(for: .milliseconds(50))
            let (text, here, took) = try await withTaskExecutorPreference(client.executor) {
                let echoed = try await client.call("test.slow", EchoBody(text: "mine", count: 900), as: EchoBody.self)
                return (echoed.text, Self.onSocketThread(client.executor), clock.now - start)
            }
            #expect(text == "mine")
            #expect(here)
            let otherTook = try await other
            #expect(otherTook < .milliseconds(800), "the other reply waited for the caller on the socket thread: \(otherTook)")
            #expect(took >= .milliseconds(900))
        }
    }

    @Test func aSilentPeerGetsAFreshSocketFromTheSocketThreadToo() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: ClientSettings(attempts: 2))
            defer { client.close() }
            let (code, after, here) = await withTaskExecutorPreference(client.executor) { () -> (ErrorCode?, String?, Bool) in
                var code: ErrorCode?
                do {
                    _ = try await client.call(
                        "test.slow", EchoBody(text: "slow", count: 1500), as: EchoBody.self,
                        options: CallOptions(timeout: .milliseconds(600)))
                } catch let error as ServiceError {
                    code = error.code
                } catch {}
                let after = try? await client.call("test.echo", EchoBody(text: "after"), as: EchoBody.self).text
                return (code, after, Self.onSocketThread(client.executor))
            }
            #expect(code == .deadlineExceeded)
            #expect(client.reconnectCount >= 1)
            #expect(after == "after")
            #expect(here)
        }
    }

    /// A reconnect asked from the socket's thread (the Lazy Pirate's remedy after a timeout)
    /// is taken before that thread exchanges anything itself: the retry goes out on the
    /// fresh socket, in the pump's loop, not on the socket it was meant to replace.
    @Test func aPendingReconnectComesBeforeAnExchangeHere() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            defer { client.close() }
            let pump = client.executor
            let (pending, after, echoed) = try await withTaskExecutorPreference(pump) { () -> (Bool, Bool, String) in
                _ = try await client.call("$srv.ping", Empty(), as: Ping.self)  // connected
                pump.reconnect()
                let probe = [Data(), Data(#"{"v":1,"id":"probe","method":"$srv.ping"}"#.utf8)]
                let pending = pump.exchangeHere(probe, until: .now + .milliseconds(200)) { _ in true } == nil
                try await Task.sleep(for: .milliseconds(50))  // the loop takes the reconnect
                let echoed = try await client.call("test.echo", EchoBody(text: "fresh"), as: EchoBody.self).text
                return (pending, Self.onSocketThread(pump), echoed)
            }
            #expect(pending, "exchanged on the socket a reconnect was about to replace")
            #expect(after)
            #expect(echoed == "fresh")
        }
    }

    @Test func closingTheClientFromItsOwnThreadLetsTheTaskGoOn() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            let result = try await withTaskExecutorPreference(client.executor) { () -> (Bool, Bool, String) in
                let before = Self.onSocketThread(client.executor)
                _ = try await client.call("$srv.ping", Empty(), as: Ping.self)
                client.close()  // on the socket thread: must not wait for itself
                try await Task.sleep(for: .milliseconds(20))  // resumed elsewhere: the thread has ended
                let after = Self.onSocketThread(client.executor)
                // A new client still works from here.
                let other = try ServiceClient(service: "test", endpoint: endpoint)
                defer { other.close() }
                let echoed = try await other.call("test.echo", EchoBody(text: "after"), as: EchoBody.self)
                return (before, after, echoed.text)
            }
            #expect(result.0)
            #expect(!result.1)
            #expect(result.2 == "after")
        }
    }
}

@Suite struct ReplyScanTests {
    static let bases = [
        #"{"id":"0190a6b0-0000-7000-8000-000000000000","ok":true,"result":{"instanceId":"i","service":"s","uptimeMs":12},"v":1}"#,
        #"{"v":1,"id":"r1","ok":true,"result":[1,2,{"a":"}"}]}"#,
        #"{ "ok" : true , "error" : null , "id" : "r2" , "result" : "text \" with } brace" , "v" : 1 }"#,
        #"{"id":"r3","ok":false,"error":{"code":"not_found","message":"no"},"v":1}"#,
        #"{"id":"r4","ok":true,"result":null,"v":1}"#,
        #"{"\u0069d":"r5","ok":true,"result":5,"v":1}"#,
    ]
    static let inserts: [String] = ["\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "x", "é", "null", "true", "\"ok\":false,"]

    /// Every base frame, and each with one character removed or one piece inserted.
    static let frames = oneEditAway(bases, inserts: inserts)

    /// What the decoder reads: the frame's object, when it is one.
    static func decoded(_ frame: Data) -> [String: JSONValue]? {
        try? WireCoding.decoder.decode([String: JSONValue].self, from: frame)
    }

    @Test func aSuccessResultIsWhatTheDecoderReads() throws {
        var taken = 0
        for text in Self.frames {
            let frame = Data(text.utf8)
            guard let raw = EnvelopeScan.successResult(frame) else { continue }
            taken += 1
            // Taken only from a frame the decoder reads as a success with that very result.
            let object = try #require(Self.decoded(frame), "\(text)")
            // From a frame the decoder reads: a success with that very result.
            #expect(object["ok"] == .bool(true), "\(text)")
            #expect(object["error"] == nil || object["error"] == .null, "\(text)")
            let result = try WireCoding.decoder.decode(JSONValue.self, from: raw)
            #expect(object["result"] == result, "\(text)")
        }
        #expect(taken > 50, "only \(taken) frames were read as a success")
        // The shapes it must leave to the decoder.
        for text in [
            #"{"id":"a","ok":false,"result":1}"#, #"{"id":"a","ok":true}"#, #"{"id":"a","ok":true,"result":1"#,
            #"{"id":"a","ok":true,"result":1} x"#, #"{"ok":true,"result":1,"result":2}"#,
            #"{"ok":true,"error":{"code":"internal"},"result":1}"#, #"{"ok":true,"\u0072esult":1}"#,
            // trailing commas, which Foundation's decoder lets pass and the grammar does not
            #"{"id":"r","ok":true,"result":1,"v":1,}"#, #"{"id":"r","ok":true,"result":[1,],"v":1}"#,
        ] {
            #expect(EnvelopeScan.successResult(Data(text.utf8)) == nil, "\(text)")
        }
        // Damage the decoder refuses anywhere in the frame, also in members the caller does
        // not read: left to the decoder.
        for text in [
            #"{"id":r,"ok":true,"result":1,"v":1}"#, #"{"id":"r","ok":true,"result":1,"v":01}"#,
            #"{"id":"a\q","ok":true,"result":1}"#, #"{"id":"\u12","ok":true,"result":1}"#,
        ] {
            #expect(EnvelopeScan.successResult(Data(text.utf8)) == nil, "\(text)")
            #expect(Self.decoded(Data(text.utf8)) == nil, "\(text)")
        }
        var invalid = Data(#"{"id":"r","ok":true,"result":"x","v":1}"#.utf8)
        invalid[invalid.count - 12] = 0xff  // not UTF-8, inside the result's string
        #expect(EnvelopeScan.successResult(invalid) == nil)
    }

    @Test func anIdIsTheOneTheDecoderReads() {
        var compared = 0
        for text in Self.frames {
            let frame = Data(text.utf8)
            guard let object = Self.decoded(frame), case .string(let id)? = object["id"] else { continue }
            compared += 1
            #expect(EnvelopeScan.id(frame) == id, "\(text)")
        }
        #expect(compared > 50)
        #expect(EnvelopeScan.id(Data(#"{"v":1,"id":"cut"#.utf8)) == nil)
        #expect(EnvelopeScan.id(Data(#"{"v":1,"id":"whole","method":"x"#.utf8)) == "whole")
        #expect(EnvelopeScan.id(Data(#"{"body":{"id":"inner"},"v":1}"#.utf8)) == nil)
    }
}
