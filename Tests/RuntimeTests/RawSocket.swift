// Raw libzmq sockets for tests that must speak the wire directly (REQ clients, malformed
// frames, oversized messages). Each runs wholly on one dispatch thread, never on the
// cooperative pool, and returns what it received.
import Dispatch
import Foundation
import Wire
import ZMQ

/// Runs blocking socket work on a thread of its own (not GCD's pool, which Linux grows
/// slowly when its threads block, nor the cooperative pool).
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Connects a socket of `type`, sends each message in `messages`, and collects up to
/// `expect` replies (waiting at most `timeoutMs` for each).
func rawExchange(
    _ type: SocketType = .dealer, endpoint: String, messages: [[Data]], expect: Int, timeoutMs: Int32 = 5000,
    maxMessageSize: Int64? = nil
) async throws -> [[Data]] {
    try await blocking {
        let socket = try Socket(type)
        defer { socket.close() }
        try socket.set(.receiveTimeout(milliseconds: timeoutMs))
        try socket.set(.sendTimeout(milliseconds: timeoutMs))
        if let maxMessageSize { try socket.set(.maxMessageSize(maxMessageSize)) }
        try socket.connect(endpoint)
        var replies: [[Data]] = []
        for message in messages {
            _ = try socket.send(message, dontWait: false)
            if type == .req {  // REQ must alternate send and receive
                if let reply = try socket.receive(dontWait: false) { replies.append(reply) }
            }
        }
        while replies.count < expect {
            guard let reply = try? socket.receive(dontWait: false) else { break }
            replies.append(reply)
        }
        return replies
    }
}

func json(_ text: String) -> Data { Data(text.utf8) }

/// Decodes the last frame of a raw reply as a protocol reply.
func decodeReply(_ frames: [Data]) throws -> Reply {
    try WireCoding.decode(Reply.self, from: frames.last ?? Data())
}
