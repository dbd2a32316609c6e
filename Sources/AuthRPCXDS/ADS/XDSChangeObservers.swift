internal import AuthRPCSystem

/// Who is told of a change: of the ADS client's cache (each channel's resolvers, which then walk
/// it again, so the channel resolves at once rather than at its next interval), or of a
/// channel's routes (the channel, which closes the clusters they no longer name).
final class XDSChangeObservers: Sendable {
    private struct Registered {
        var next = 0
        var observers: [Int: @Sendable () -> Void] = [:]
    }

    private let registered = Locked(Registered())

    /// Calls `observer` on every change until ``remove(_:)`` with the returned key.
    func add(_ observer: @escaping @Sendable () -> Void) -> Int {
        registered.withLock { registered in
            registered.next += 1
            registered.observers[registered.next] = observer
            return registered.next
        }
    }

    func remove(_ key: Int) {
        _ = registered.withLock { $0.observers.removeValue(forKey: key) }
    }

    /// Tells every observer, outside the lock (an observer may add or remove one).
    func notify() {
        for observer in registered.withLock({ Array($0.observers.values) }) {
            observer()
        }
    }
}
