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

    /// A number the call's start determines, uniformly spread (SplitMix64's step over the start
    /// in nanoseconds): the same each time the call is settled, so a per-call router's
    /// random choice (a weighted cluster) is made once per call.
    var roll: UInt64 {
        let (seconds, attoseconds) = sinceReference.components
        var mixed = UInt64(bitPattern: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000) &+ 0x9e37_79b9_7f4a_7c15
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        return mixed ^ (mixed >> 31)
    }
}
