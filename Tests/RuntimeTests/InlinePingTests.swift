// `$srv.ping` is answered on the server's socket thread (Dispatcher.answerInline), most of
// the time straight from the frame's bytes. Whatever it answers there must be what the
// dispatcher's usual path (`handle`) answers for the same frame.
import Foundation
import Runtime
import Testing
import Wire

@Suite struct InlinePingTests {
    static let bases = [
        #"{"v":1,"id":"p1","method":"$srv.ping"}"#,
        #"{"body":{},"deadlineMs":1500,"id":"0190a6b0-0000-7000-8000-000000000000","method":"$srv.ping","v":1}"#,
        #"{ "v" : 1 , "id" : "p2" , "method" : "$srv.ping" , "token" : "lbk_x" , "stackKey" : null , "body" : { "a" : [ 1 , 2.5 , "é" ] } }"#,
        #"{"v":1,"id":"p3","method":"$srv.ping","deadlineMs":0}"#,
    ]
    static let inserts: [String] = ["\"", "\\", "{", "}", "[", ",", ":", " ", "0", "1", "-", ".", "e", "x", "é", "null"]

    @Test func anInlineAnswerIsTheUsualAnswer() async throws {
        let service = try InProcess()
        let dispatcher = service.transport.dispatcher
        let frames = oneEditAway(Self.bases, inserts: Self.inserts)
        var inline = 0
        for text in frames {
            let frame = Data(text.utf8)
            guard let quick = dispatcher.answerInline(frame) else { continue }
            inline += 1
            let usual = try WireCoding.decode(Reply.self, from: await dispatcher.handle(frame))
            let answered = try WireCoding.decode(Reply.self, from: quick)
            #expect(answered.id == usual.id, "\(text)")
            #expect(answered.ok == usual.ok, "\(text): inline \(answered.ok), usual \(usual.error?.message ?? "ok")")
            #expect(answered.error?.code == usual.error?.code, "\(text)")
            #expect(answered.result?["service"] == usual.result?["service"], "\(text)")
            #expect(answered.result?["instanceId"] == usual.result?["instanceId"], "\(text)")
        }
        #expect(inline > 100, "only \(inline) of \(frames.count) frames were answered inline")
    }
}
