import AuthRPCSystem
import Foundation

@testable import OAuth2

/// A clock that moves only when a test says: the wall clock and the continuous clock advance
/// together, from a fixed date and the instant the clock was made.
final class ManualClock: Sendable {
    private let elapsed = Locked(Duration.zero)
    private let startDate = Date(timeIntervalSince1970: 1_700_000_000)
    private let startInstant = ContinuousClock.now

    /// The wall-clock time now.
    var date: Date { startDate.addingTimeInterval(elapsed.withLock { $0 }.seconds) }
    /// The continuous clock's time now.
    var instant: ContinuousClock.Instant { startInstant + elapsed.withLock { $0 } }

    /// Moves both clocks forward by `duration`.
    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }

    /// This clock, for a ``TokenEngine``.
    var engineClock: TokenEngineClock {
        TokenEngineClock(date: { self.date }, instant: { self.instant })
    }
}

/// A gate async code waits at until a test opens it; once open, it stays open.
final class Gate: Sendable {
    private let state = Locked((isOpen: false, waiters: [CheckedContinuation<Void, Never>]()))

    /// Returns once the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Opens the gate: every waiter goes on, and later ones do not wait.
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
