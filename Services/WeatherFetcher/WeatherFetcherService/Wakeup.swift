// A doorbell for the job runner: it sleeps until the next job is due, but a new job
// rings it at once. A ring with nobody waiting is remembered for the next wait.
import Foundation
import Synchronization

final class Wakeup: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after `timeout`, on a signal, or when the task is cancelled. One waiter at a
    /// time (the job runner).
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForSignal() }
            await group.next()
            // The sleeper ends at once when cancelled, the signal waiter through its
            // cancellation handler.
            group.cancelAll()
            await group.waitForAll()
        }
        // Rings until now were for jobs committed before the caller looks for due ones.
        state.withLock { $0.rung = false }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.signal()
        }
    }
}
