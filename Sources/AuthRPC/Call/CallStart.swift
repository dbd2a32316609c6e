import AuthRPCSystem

/// When a call started, on the integer clock (``ContinuousTime``).
///
/// `ContinuousClock.Instant` is not frozen: an async frame that keeps one across an await holds
/// it in a task allocation of its own, reached through value witnesses, and that allocation
/// (with its header) is what pushes a waiting call's frames into another 1 KiB slab. Reading it
/// is a call into the runtime too. This is one word in the frame.
struct CallStart {
    private let time: ContinuousTime

    /// Now.
    static func now() -> CallStart { CallStart(time: .now) }

    /// The call's deadline for `timeout` from its start: nil without a timeout. A timeout past
    /// ``CallOptions/longestTimeout``, or past the clock's range (about 292 years), is the
    /// clock's ``ContinuousTime/distantFuture``, which never fires and goes on the wire as the
    /// longest `grpc-timeout` there is.
    func deadline(after timeout: Duration?) -> ContinuousTime? {
        guard let timeout else { return nil }
        if timeout >= CallOptions.longestTimeout { return .distantFuture }
        return time.advanced(by: ContinuousTime.nanoseconds(roundingUp: timeout))
    }

    /// A number the call's start determines, uniformly spread (``SplitMix64``'s first draw,
    /// seeded by the start in nanoseconds): the same each time the call is settled, so a
    /// per-call router's random choice (a weighted cluster) is made once per call.
    var roll: UInt64 {
        var generator = SplitMix64(seed: UInt64(bitPattern: time.nanoseconds))
        return generator.next()
    }
}
