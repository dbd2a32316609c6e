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
}
