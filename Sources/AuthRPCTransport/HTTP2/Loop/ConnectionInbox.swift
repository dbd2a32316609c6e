import AuthRPCSystem

/// A job of a task that prefers the connection's thread, with the executor it runs on.
struct ScheduledJob: Sendable {
    let job: UnownedJob
    let executor: UnownedTaskExecutor
}

/// State shared between the I/O thread and the threads that hand it commands.
struct ConnectionInbox {
    enum Phase {
        case connecting
        case ready
        /// No new streams (GOAWAY received, or a graceful shutdown began).
        case draining(TransportFailure)
        case closed(TransportFailure)
    }

    var phase = Phase.connecting
    /// The server's verified leaf certificate (TLS only), set once the handshake has succeeded.
    var peerCertificate: PeerCertificate?
    var commands: [ConnectionCommand] = []
    /// Jobs to run on the I/O thread, taken once per turn of the loop.
    var jobs: [ScheduledJob] = []
    /// The I/O thread is (about to be) asleep in poll(2) or a connect wait, so whoever queues
    /// work must wake it. While it runs it takes the queues itself before it sleeps, and a
    /// command or job queued from its own thread (a resumed caller submitting its next call)
    /// costs no wake-up at all.
    var polling = true
    /// A wake-up was signalled and the loop has not yet taken the commands.
    var wakePending = false
    /// The I/O thread sleeps in poll(2) and has finished with its state until it wakes: a caller
    /// on another thread may borrow the session to submit its stream there and then
    /// (ConnectionLoop+SessionLoan). Set only with nothing queued and nothing left to write.
    var lendable = false
    /// A caller holds the session; the I/O thread touches none of its state until it is back.
    var lent = false
    /// How many times a caller has borrowed the session.
    var loans = 0
    /// The I/O thread woke while the session was lent and sleeps until the borrower signals its
    /// return.
    var ownerWaiting = false
    /// When the sleeping I/O thread's poll(2) times out by itself (nil: it does not), so that a
    /// borrower knows whether its stream's deadline comes first.
    var sleepsUntil: ContinuousTime?
    /// Streams of ended exchanges, reset by the I/O thread, for the next submits to take instead
    /// of allocating: at most `ConnectionLoop.spareStreamLimit`, cut to two whenever the loop
    /// sleeps with no stream open, emptied when the connection ends.
    var spareStreams: [HTTP2Stream] = []

    /// Whether the caller that just queued work must signal the wake-up.
    mutating func needsWakeup() -> Bool {
        guard polling, !wakePending else { return false }
        wakePending = true
        return true
    }
}
