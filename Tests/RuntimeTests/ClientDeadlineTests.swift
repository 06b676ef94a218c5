// A client's retry says how long its caller still waits: `deadlineMs` is counted by the
// service from the frame's arrival, so a retry that resent the first frame's whole budget
// could be applied after the caller had given up (docs/protocol.md, `deadlineMs`).
import Foundation
import Testing
import Wire

@testable import Runtime

@Suite struct ClientDeadlineTests {
    @Test func aRetrySaysTheTimeLeft() throws {
        let header = RequestHeader(
            id: "r1", method: "records.expense.add", token: "t", idempotencyKey: "k", deadlineMs: 3000, stackKey: nil)
        let frame = try ServiceClient.encodeRequest(header, body: ["name": "Coffee", "note": "deadlineMs: 3000"] as JSONValue)
        let retried = ServiceClient.frame(frame, deadlineMs: 1234)
        let reread = try JSONValue.parse(retried)
        #expect(reread["deadlineMs"] == 1234)
        // everything else is as it was, the body's text included
        guard case .object(var after) = reread, case .object(var before) = try JSONValue.parse(frame) else {
            Issue.record("not objects")
            return
        }
        #expect(before["deadlineMs"] == 3000)
        after["deadlineMs"] = nil
        before["deadlineMs"] = nil
        #expect(after == before)
        #expect(String(decoding: retried, as: UTF8.self).contains("deadlineMs: 3000"))
        // a frame without a deadline (or one written another way) goes as it was
        let none = Data(#"{"id":"r2","method":"m","v":1}"#.utf8)
        #expect(ServiceClient.frame(none, deadlineMs: 5) == none)
        #expect(ServiceClient.milliseconds(.milliseconds(1500)) == 1500)
        #expect(ServiceClient.milliseconds(.microseconds(10)) == 1)
    }
}
