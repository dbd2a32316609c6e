import AuthRPCSystem

/// The connections of one owner (a channel), connected or still connecting, so that the owner
/// can end them all and wait until their I/O threads have ended.
///
/// A connection belongs to the group from the moment its owner decides to make it
/// (``expectConnection()``) until it has been torn down (last frames sent, socket closed, TLS
/// session freed) and OpenSSL has released its thread's own state. A program that exits while
/// such a thread still runs cuts the connection off mid-frame (and, when another library
/// initialised OpenSSL first with its clean-up at exit, races that clean-up: see
/// `OpenSSLLibrary`).
package final class HTTP2ConnectionGroup: Sendable {
    private struct State {
        /// Connections decided on whose thread has not started yet.
        var expected = 0
        var running: [ObjectIdentifier: ConnectionLoop] = [:]
        /// Set by ``closeAll()``: a connection that starts later is abandoned at once.
        var closing = false
        /// Set when the task in ``closeAll()`` is cancelled: connections close without waiting
        /// for their open streams.
        var aborting = false
        var waiters: [CheckedContinuation<Void, Never>] = []

        var idle: Bool { expected == 0 && running.isEmpty }

        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            defer { waiters = [] }
            return waiters
        }
    }

    private let state = Locked(State())

    package init() {}

    /// How many of the group's connections have not ended yet.
    package var count: Int {
        state.withLock { $0.expected + $0.running.count }
    }

    /// Counts a connection about to be started with this group, so that ``closeAll()`` waits
    /// for it even when it asks before the connection's thread exists. The owner calls this
    /// where it decides to connect, under the lock that also orders its closing.
    package func expectConnection() {
        state.withLock { $0.expected += 1 }
    }

    /// The expected connection's thread starts (`loop`), or it never will (nil).
    func started(_ loop: ConnectionLoop?) {
        let (closeGracefully, waiters) = state.withLock { state -> (Bool?, [CheckedContinuation<Void, Never>]) in
            state.expected -= 1
            if let loop {
                state.running[ObjectIdentifier(loop)] = loop
                return (state.closing ? !state.aborting : nil, [])
            }
            return (nil, state.idle ? state.takeWaiters() : [])
        }
        if let graceful = closeGracefully, let loop { _ = loop.enqueue(.shutdown(graceful: graceful)) }
        for waiter in waiters { waiter.resume() }
    }

    func ended(_ loop: ConnectionLoop) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running[ObjectIdentifier(loop)] = nil
            return state.idle ? state.takeWaiters() : []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Closes every connection of the group gracefully (open streams finish, then GOAWAY; an
    /// attempt still connecting is abandoned at once), then returns once all of their threads
    /// have ended. When the calling task is cancelled, the connections close at once instead
    /// (their open streams fail), and it returns as soon as the threads have ended.
    package func closeAll() async {
        let loops = state.withLock { state -> [ConnectionLoop] in
            state.closing = true
            return Array(state.running.values)
        }
        for loop in loops { _ = loop.enqueue(.shutdown(graceful: true)) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = state.withLock { state -> Bool in
                    guard !state.idle else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if idle { continuation.resume() }
            }
        } onCancel: {
            abortAll()
        }
    }

    /// Closes every connection at once: open streams fail, nothing waits for them.
    private func abortAll() {
        let loops = state.withLock { state -> [ConnectionLoop] in
            state.aborting = true
            return Array(state.running.values)
        }
        for loop in loops { _ = loop.enqueue(.shutdown(graceful: false)) }
    }
}
