/// When a call started, held as a `Duration` from a fixed instant.
///
/// `ContinuousClock.Instant` is not frozen: an async frame that keeps one across an await holds
/// it in a task allocation of its own, reached through value witnesses, and that allocation
/// (with its header) is what pushes a waiting call's frames into another 1 KiB slab. `Duration`
/// is frozen, so this is two words in the frame.
struct CallStart {
    /// The instant every call's start is measured from (the first call's).
    private static let reference = ContinuousClock.now
    private let sinceReference: Duration

    // Not inlined: in an async function, each `Instant` temporary would be a task allocation.

    /// Now.
    @inline(never)
    static func now() -> CallStart { CallStart(sinceReference: ContinuousClock.now - reference) }

    /// The instant the call started.
    @inline(never)
    func instant() -> ContinuousClock.Instant { Self.reference + sinceReference }

    /// A number the call's start determines, uniformly spread (``SplitMix64``'s first draw,
    /// seeded by the start in nanoseconds): the same each time the call is settled, so a
    /// per-call router's random choice (a weighted cluster) is made once per call.
    var roll: UInt64 {
        let (seconds, attoseconds) = sinceReference.components
        var generator = SplitMix64(seed: UInt64(bitPattern: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000))
        return generator.next()
    }
}
