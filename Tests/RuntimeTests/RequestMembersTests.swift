// The dispatcher reads every request's header members, and a write's body, by their byte
// ranges (EnvelopeScan.requestMembers), walking the frame once without allocating. What it
// reads must be what the member scan it replaced read, and a write's request hash taken
// this way must be the one a full parse of the frame gives (Router.slowRequestHash).
import Foundation
@testable import Runtime
import Testing
import Wire

@Suite struct RequestMembersTests {
    static let bases = [
        #"{"v":1,"id":"p1","method":"$srv.ping"}"#,
        #"{"body":{"name":"coffee","amountMinor":350},"deadlineMs":1500,"id":"0190a6b0-0000-7000-8000-000000000000","idempotencyKey":"k1","method":"records.expense.add","stackKey":"s","token":"lbk_x","v":1}"#,
        #"{ "v" : 1 , "id" : "p2" , "method" : "m" , "token" : null , "body" : { "a" : [ 1 , 2.5 , "é", {"id":"inner"} ] } }"#,
        #"{"v":1,"id":"p3","method":"m","body":null}"#,
        #"{"v":1,"id":"p4","method":"m","body":{"b":1},"body":{"b":2}}"#,
        #"{"v":1,"\u0069d":"p5","method":"m","body":{"x":"y"}}"#,
        #"{"v":1,"id":"p6","method":"m","body":{"q":"a\"b"}}"#,
    ]
    static let inserts: [String] = ["\"", "\\", "{", "}", "[", ",", ":", " ", "0", "1", "-", "e", "x", "é", "null", "\"body\":2,"]
    static let names = ["v", "id", "method", "token", "idempotencyKey", "deadlineMs", "stackKey", "body"]

    /// Every base frame, and each with one character removed or one piece inserted.
    static let frames = oneEditAway(bases, inserts: inserts)

    static func ranges(_ members: EnvelopeScan.Members) -> [String: Range<Int>] {
        let all: [(String, Range<Int>?)] = [
            ("v", members.v), ("id", members.id), ("method", members.method), ("token", members.token),
            ("idempotencyKey", members.idempotencyKey), ("deadlineMs", members.deadlineMs), ("stackKey", members.stackKey),
            ("body", members.body),
        ]
        return all.reduce(into: [:]) { if let range = $1.1 { $0[$1.0] = range } }
    }

    @Test func theRangesHoldWhatTheMemberScanReads() {
        var plain = 0, set = 0
        for text in Self.frames {
            let frame = Data(text.utf8)
            let members = frame.withUnsafeBytes { EnvelopeScan.requestMembers($0.bindMemory(to: UInt8.self)) }
            let scanned = EnvelopeScan.uniqueMembers(frame, Set(Self.names))
            // A repeated member is seen by both.
            if scanned == nil { #expect(members.repeated || members.escapedName, "\(text)") }
            guard members.plain, let scanned else { continue }
            plain += 1
            let texts = Self.ranges(members).mapValues { frame[$0] }
            #expect(texts == scanned, "\(text)")
            set += texts.count
        }
        #expect(plain > 300 && set > 1000, "only \(plain) frames were read plainly")
        // An escaped name could spell a member's: the decoder must say which.
        let escaped = Data(#"{"v":1,"\u0069d":"x","method":"m"}"#.utf8)
        #expect(escaped.withUnsafeBytes { EnvelopeScan.requestMembers($0.bindMemory(to: UInt8.self)) }.escapedName)
    }

    @Test func aRequestHashIsTheOneAFullParseGives() {
        var compared = 0
        for text in Self.frames {
            let frame = Data(text.utf8)
            // Frames a handler could see: the decoder reads them as a request.
            guard (try? WireCoding.decoder.decode([String: JSONValue].self, from: frame)) != nil else { continue }
            compared += 1
            let fast = try? Router.requestHash(method: "records.expense.add", frame: frame)
            #expect(fast == Router.slowRequestHash(method: "records.expense.add", frame: frame), "\(text)")
        }
        #expect(compared > 200)
    }

    /// A missing or null body reads as {}: the same request, so a retry written either way
    /// is answered from the log rather than refused as another request under the same key.
    @Test func aMissingOrNullBodyHashesAsAnEmptyOne() throws {
        let frames = [
            #"{"v":1,"id":"a","method":"auth.logout","body":{}}"#, #"{"v":1,"id":"a","method":"auth.logout"}"#,
            #"{"v":1,"id":"a","method":"auth.logout","body":null}"#, #"{"v":1,"id":"a","method":"auth.logout","body": { } }"#,
        ]
        let hashes = try frames.map { try Router.requestHash(method: "auth.logout", frame: Data($0.utf8)) }
        #expect(Set(hashes).count == 1, "\(hashes)")
        #expect(frames.map { Router.slowRequestHash(method: "auth.logout", frame: Data($0.utf8)) } == hashes)
        #expect(try Router.requestHash(method: "auth.logout", frame: Data(#"{"body":{"a":1}}"#.utf8)) != hashes[0])
    }
}
