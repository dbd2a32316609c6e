import AuthRPCSystem
import Foundation

@testable import OAuth2

/// A clock that moves only when a test says: the wall clock and the continuous clock advance
/// together, from a fixed date and the instant the clock was made; the wall clock alone can be
/// stepped (as NTP or a restored VM does). Sleepers wake when the continuous clock passes their
/// deadline.
final class ManualClock: Sendable {
    private struct State {
        var elapsed = Duration.zero
        var wallClockStep = Duration.zero
        var nextSleeper = 0
        var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state = Locked(State())
    private let startDate = Date(timeIntervalSince1970: 1_700_000_000)
    private let startInstant = ContinuousClock.now

    /// The wall-clock time now.
    var date: Date { startDate.addingTimeInterval(state.withLock { ($0.elapsed + $0.wallClockStep).seconds }) }
    /// The continuous clock's time now.
    var instant: ContinuousClock.Instant { startInstant + state.withLock { $0.elapsed } }

    /// Moves both clocks forward by `duration`, waking the sleepers whose time has come.
    func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.elapsed += duration
            let due = state.sleepers.filter { $0.value.deadline <= state.elapsed }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Steps the wall clock alone by `duration` (negative: backwards); the continuous clock stays.
    func stepWallClock(by duration: Duration) {
        state.withLock { $0.wallClockStep += duration }
    }

    /// Returns once the clock has been advanced by `duration` from now; throws when cancelled.
    func sleep(for duration: Duration) async throws {
        let id = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if Task.isCancelled || duration <= .zero { return true }
                    state.sleepers[id] = (state.elapsed + duration, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { $0.sleepers.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// How many sleepers wait.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// This clock, for a ``TokenEngine``.
    var engineClock: TokenEngineClock {
        TokenEngineClock(date: { self.date }, instant: { self.instant }, sleep: { try await self.sleep(for: $0) })
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
