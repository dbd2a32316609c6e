/// When to start each connection attempt, as Happy Eyeballs version 2 (RFC 8305) says: the
/// addresses in the resolver's order with the address families interleaved (section 4: the
/// first address's family, then the other, and so on), one attempt started at a time, the next
/// one once the previous has had `attemptDelay` (250 ms, section 5) or as soon as it fails;
/// earlier attempts go on meanwhile, and the first to connect wins. An address that drops SYNs
/// so costs a quarter of a second, not the connect timeout.
///
/// A value without I/O: the socket loop (``StreamSocket/connect(to:description:deadline:abortFD:)``)
/// asks it what to do next and tells it when an attempt failed.
struct HappyEyeballs {
    /// RFC 8305 section 5's recommended Connection Attempt Delay.
    static let attemptDelay: Duration = .milliseconds(250)

    /// The order the attempts are started in.
    let order: [SocketAddress]
    private let delay: Duration
    private var next = 0
    /// When the next attempt may start although none has failed.
    private var nextStart: ContinuousClock.Instant?
    /// Attempts started and neither connected nor failed.
    private(set) var inFlight = 0

    /// What the socket loop does now.
    enum Step: Equatable {
        /// Start an attempt to this address.
        case start(SocketAddress)
        /// Wait for an attempt in flight to finish, or until this instant (then ask again);
        /// `nil`: no more attempts to start, only those in flight to wait for.
        case wait(until: ContinuousClock.Instant?)
        /// Every attempt was started and has failed.
        case exhausted
    }

    init(_ addresses: [SocketAddress], attemptDelay: Duration = Self.attemptDelay) {
        order = Self.interleavingFamilies(addresses)
        delay = attemptDelay
    }

    /// The next step at `now`.
    mutating func step(now: ContinuousClock.Instant) -> Step {
        if next < order.count {
            if inFlight == 0 || nextStart.map({ now >= $0 }) ?? true {
                let address = order[next]
                next += 1
                inFlight += 1
                nextStart = now + delay
                return .start(address)
            }
            return .wait(until: nextStart)
        }
        return inFlight > 0 ? .wait(until: nil) : .exhausted
    }

    /// An attempt failed at `now`: the next one may start at once (RFC 8305 section 5).
    mutating func attemptFailed(now: ContinuousClock.Instant) {
        inFlight -= 1
        nextStart = now
    }

    /// The addresses with families alternating, starting with the first address's family; the
    /// order within a family is kept.
    static func interleavingFamilies(_ addresses: [SocketAddress]) -> [SocketAddress] {
        guard let first = addresses.first else { return [] }
        let preferred = addresses.filter { $0.family == first.family }
        let others = addresses.filter { $0.family != first.family }
        var order: [SocketAddress] = []
        order.reserveCapacity(addresses.count)
        for index in 0..<max(preferred.count, others.count) {
            if index < preferred.count { order.append(preferred[index]) }
            if index < others.count { order.append(others[index]) }
        }
        return order
    }
}
