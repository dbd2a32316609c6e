import AuthRPCSystem
internal import CNGHTTP2
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What other threads ask of the I/O thread.
enum ConnectionCommand {
    /// Open a stream for this exchange.
    case submit(HTTP2Stream)
    /// The caller's task was cancelled: reset the stream with CANCEL, if it still carries the
    /// exchange of that generation.
    case cancel(HTTP2Stream, generation: UInt32)
    /// Stop: at once (failing open streams), or once the open streams finish.
    case shutdown(graceful: Bool)
    /// Answer with what the I/O thread still holds.
    case reportFootprint(UnsafeContinuation<HTTP2ConnectionFootprint, Never>)
    /// Work for a bidirectional stream (ConnectionLoop+Streaming).
    case streaming(StreamingCommand)
}

/// What the connection tells its owner (a channel) from the I/O thread.
package enum HTTP2ConnectionEvent: Sendable {
    /// The server sent GOAWAY: open streams at or below its last stream id finish; no new ones.
    case draining
    /// The connection is gone; `error` says why (nil after an orderly shutdown).
    case closed(TransportFailure?)
}

/// The I/O thread of one connection: owns the socket, the TLS session and the nghttp2 session.
/// Only the thread that holds the session calls nghttp2 or OpenSSL for this connection: the I/O
/// thread, or, while it sleeps in poll(2), a caller that borrowed the session to submit its
/// stream (ConnectionLoop+SessionLoan).
///
/// Each turn: drain commands, read the socket and feed nghttp2, expire deadlines, run the jobs of
/// tasks that prefer this thread (and take the requests they made), then gather every pending
/// frame from nghttp2 into one buffer and write it with one `send`.
final class ConnectionLoop: @unchecked Sendable {
    // Sendable because everything but `inbox` (a Locked) and the immutable lets is touched only by
    // the thread that holds the session, from `run()` and the nghttp2 callbacks it triggers, or
    // from a loan's submit; the inbox's lock orders each hand-over (ConnectionLoop+SessionLoan).
    let route: ConnectionRoute
    /// The name TLS verifies and sends in SNI (unless the configuration overrides it).
    let serverName: String
    let configuration: HTTP2ConnectionConfiguration
    /// The largest response header block accepted (`configuration.maxHeaderListSize`).
    let maxHeaderListSize: Int
    /// The most streams of ended exchanges kept for reuse (about 200 bytes each while spare): as
    /// many as a turn of the loop commonly ends at 100 calls in flight, so those calls' next
    /// submits find one each.
    static let spareStreamLimit = 128
    /// The spare streams kept while no stream is open: two, because a caller answered on another
    /// thread often submits its next call before this thread has put its last stream back.
    static let idleSpareStreams = 2
    /// How many requests a batch of commands submits before their frames are written
    /// (`writeSubmitted`): what nghttp2 holds for unwritten requests then stays near 64 × 530
    /// bytes, which `SessionMemory`'s free lists (32 KiB a size class) carry from one group to
    /// the next, however many calls arrive at once. A turn at 100 calls in flight takes fewer.
    static let submitsPerWrite = 64
    /// The most 1xx header blocks one stream may receive. gRPC servers send none; HTTP allows a
    /// few (100 Continue, 103 Early Hints), never an endless run.
    static let maxInformationalBlocks = 8
    let inbox = Locked(ConnectionInbox())
    /// `true` until the inbox's phase leaves `.connecting` and `.ready`, then `false` for good:
    /// what ``HTTP2Connection/isAcceptingStreams`` answers each call's pick of a connection
    /// with, without taking the inbox's lock. Set only under that lock, with the phase.
    let acceptsStreams = Atomic(true)
    /// The address the socket connected to, set before the connection is reported ready.
    let peer = Locked<SocketAddress?>(nil)
    let wakeup: Wakeup
    /// Armed by a borrower whose stream's deadline comes before the sleeping thread would wake
    /// (nil where the platform has no such timer: the borrower wakes the thread instead).
    let wakeTimer = WakeTimer()
    /// When `wakeTimer` goes off, while it is armed.
    var wakeTimerArmedFor: ContinuousTime?
    /// Why a borrower's write failed: the I/O thread ends the connection with it when it takes
    /// the session back.
    var loanFailure: TransportFailure?
    private let onEvent: @Sendable (HTTP2ConnectionEvent) -> Void

    private var socket: StreamSocket?
    private var tls: TLSSession?
    private(set) var session: OpaquePointer?
    /// What the session allocates from. It ends with the loop, after `teardown()` has deleted
    /// the session.
    private let memory = SessionMemory()
    /// Owns every submitted stream until nghttp2 closes it (on_stream_close), drops its HEADERS
    /// (on_frame_not_send), or the session is deleted: nghttp2's body providers point at them
    /// unretained, so a stream must outlive every callback that can reach it.
    ///
    /// This table and `deadlines` skip the run-time exclusivity checks (two to four per call
    /// each): only the thread holding the session touches them, and each access is one operation on the
    /// collection (an insert, a removal, a heap sift) that runs no code able to reach them again.
    /// Their elements are streams, whose deinit touches nothing of the loop's, and moving one
    /// writes only its own slot (`tableSlot`, `deadlineSlot`).
    @exclusivity(unchecked) private var streams = UnaryStreamTable()
    /// The open bidirectional streams, owned as `streams` owns the unary ones.
    var streamingCalls: [Int32: StreamingCall] = [:]
    /// How many entries each table holds, kept beside them: the loop asks several times a turn
    /// whether a stream is open, and every session callback whether a bidirectional one is. An
    /// integer property is read without a run-time exclusivity check; the tables, which some
    /// accesses hold across calls into the standard library, are checked on every read.
    private var unaryStreamsOpen = 0
    var streamingCallsOpen = 0
    /// No stream of either kind is open.
    var noStreamOpen: Bool {
        assert(
            unaryStreamsOpen == streams.count && streamingCallsOpen == streamingCalls.count,
            "the open-stream counts follow their tables"
        )
        return unaryStreamsOpen == 0 && streamingCallsOpen == 0
    }
    /// The open streams' deadlines (unchecked at run time, as `streams` is and for its reason).
    @exclusivity(unchecked) private var deadlines = DeadlineQueue()
    /// The server's last header block and trailers, which each unary response's are compared
    /// with as they arrive. Unchecked at run time, as `streams` is: only the thread holding the
    /// session touches it, in one call per received field or block that runs no code able to reach it again.
    @exclusivity(unchecked) var repeatedBlocks = RepeatedHeaderBlocks()
    private var pendingResets: [HTTP2Stream] = []
    /// `pendingResets` is not empty: read each turn instead of the list, whose accesses are
    /// checked at run time.
    private var resetsPending = false
    private var takenCommands: [ConnectionCommand] = []
    private var takenJobs: [ScheduledJob] = []
    /// The I/O thread (`CurrentThread.identity`), stored when it starts: a caller compares it
    /// with its own to know that it runs here (`keepSpareBody(_:)`).
    let ioThread = Atomic<UInt>(0)
    /// A large response body a caller finished with on this thread, kept for the next large
    /// response (ConnectionLoop+SpareBody). Unchecked at run time, as `streams` is: only the I/O
    /// thread touches it, in calls that cannot reach it again.
    @exclusivity(unchecked) var spareBody: [UInt8] = []
    /// The streams whose bodies grew to their declared size ahead of the bytes received
    /// (BodyReservations). Unchecked at run time, as `spareBody` is.
    @exclusivity(unchecked) var bodyReservations = BodyReservations()

    /// The DATA frame being received, and the bytes read into a body that nghttp2 is being fed
    /// from there (ConnectionLoop+BodyInPlace).
    var dataFrame = DataFrameInProgress()
    var placement: BodyPlacement?
    /// The next read (h2c) is short: a unary stream's large DATA frame has begun, or the last
    /// read went into a body (ConnectionLoop+BodyInPlace).
    var shortReadNext = false
    /// DATA bytes read in place so far (for ``HTTP2ConnectionFootprint``).
    var bytesReadInPlace = 0

    private let readBuffer: UnsafeMutableRawBufferPointer
    private let cipherBuffer: UnsafeMutableRawBufferPointer
    /// Frames gathered from nghttp2 (plaintext).
    private let frames = ByteQueue(capacity: 64 << 10)
    /// What goes on the wire: `frames` itself over h2c, TLS records over TLS.
    private let records = ByteQueue(capacity: 64 << 10)
    /// Reused for every submit of a request given as parts (`HTTP2Request.head`): the block they
    /// are laid out in, so a call allocates none. Let go after a submit that grew it past
    /// `headerScratchLimit` (a call with unusually large metadata), so it stays small.
    private var headerScratch = HTTP2HeaderBlock()
    static let headerScratchLimit = 4 << 10

    private var receivedSettings = false
    private var goawayLastStreamID: Int32?
    private(set) var goawayError: TransportFailure?
    private var gracefulShutdown = false
    /// Why nghttp2 ended the session (a GOAWAY with an error it sent), for the streams' errors.
    private var protocolFailure: String?
    /// The server sent close_notify. Like the end of a plaintext stream, it ends the connection
    /// after the turn that read it, so a GOAWAY nghttp2 decided on from the bytes before it goes
    /// out and its reason stands, however the records arrived.
    private var serverClosedTLS = false
    private static let serverClosedTLSFailure = TransportFailure.connectionClosed(
        reason: "TLS session closed by the server",
        streamWasSent: true
    )
    /// How many of the server's first four bytes (its first frame's length and type) were seen,
    /// and whether that frame is SETTINGS, as an HTTP/2 server's must be: a server that answers
    /// in another protocol (HTTP/1.1's `HTTP/1.1 400`) is told apart from one that breaks HTTP/2,
    /// whichever way its bytes and its close are split across reads.
    private var serverPrefixBytesSeen = 0
    private var serverFirstFrameIsSettings = true
    private(set) var closeReason: TransportFailure?
    /// The configuration's keepalive and idle timers in nanoseconds, as the loop's clock
    /// (`LoopClock`) counts, converted once.
    private let keepaliveInterval: Int64?
    private let keepaliveTimeout: Int64
    private let idleTimeout: Int64?
    /// When bytes last arrived; when the loop was made until the first do.
    private var lastReceive = ContinuousTime.now
    private var pingSentAt: ContinuousTime?
    /// Since when no stream has been open (with an idle timeout only).
    var idleSince: ContinuousTime?

    init(
        route: ConnectionRoute,
        serverName: String,
        configuration: HTTP2ConnectionConfiguration,
        onEvent: @escaping @Sendable (HTTP2ConnectionEvent) -> Void
    ) throws(TransportFailure) {
        self.route = route
        self.serverName = serverName
        self.configuration = configuration
        self.maxHeaderListSize = Int(configuration.maxHeaderListSize)
        self.keepaliveInterval = configuration.keepaliveInterval.map(ContinuousTime.nanoseconds(roundingUp:))
        self.keepaliveTimeout = ContinuousTime.nanoseconds(roundingUp: configuration.keepaliveTimeout)
        self.idleTimeout = configuration.idleTimeout.map(ContinuousTime.nanoseconds(roundingUp:))
        self.onEvent = onEvent
        do throws(SystemCallError) {
            self.wakeup = try Wakeup()
        } catch {
            throw .protocolError(error.description)
        }
        self.readBuffer = .allocate(byteCount: 256 << 10, alignment: 16)
        self.cipherBuffer = .allocate(byteCount: 64 << 10, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
        cipherBuffer.deallocate()
    }

    // MARK: - Commands from other threads

    /// Queues a command and wakes the loop when it sleeps (one wake-up per batch of commands).
    /// Returns the error to fail with when the connection no longer takes streams.
    func enqueue(_ command: ConnectionCommand) -> TransportFailure? {
        let (refusal, wake, answerEmpty): (TransportFailure?, Bool, Bool) = inbox.withLock { inbox in
            if command.opensStream {
                switch inbox.phase {
                case .draining(let error), .closed(let error):
                    return (Self.notSent(error), false, false)
                case .connecting, .ready:
                    break
                }
            } else if case .closed = inbox.phase {
                return (nil, false, true)
            }
            inbox.commands.append(command)
            return (nil, inbox.needsWakeup(), false)
        }
        if wake { wakeup.signal() }
        // Resumed outside the lock: the resumed task may run on this loop and queue work at once.
        if answerEmpty, case .reportFootprint(let continuation) = command { continuation.resume(returning: .empty) }
        return refusal
    }

    /// A stream for `request`: a spare one when the inbox holds one, else a new one; with the
    /// generation its cancel command must name.
    func makeStream(for request: consuming HTTP2Request) -> (HTTP2Stream, generation: UInt32) {
        let spare = inbox.withLock { inbox -> (HTTP2Stream, UInt32)? in
            guard let stream = inbox.spareStreams.popLast() else { return nil }
            // Read under the lock that ordered the I/O thread's reset before it.
            return (stream, stream.generation)
        }
        guard let (stream, generation) = spare else {
            let stream = HTTP2Stream(request: request)
            return (stream, stream.generation)
        }
        stream.carry(request)
        return (stream, generation)
    }

    /// Queues a job to run on the I/O thread, between reading and writing. Returns false when
    /// the loop runs no more jobs (not connected yet, or ended); the caller runs it elsewhere.
    func enqueue(_ job: UnownedJob, on executor: UnownedTaskExecutor) -> Bool {
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            switch inbox.phase {
            case .connecting, .closed:
                return (false, false)
            case .ready, .draining:
                inbox.jobs.append(ScheduledJob(job: job, executor: executor))
                return (true, inbox.needsWakeup())
            }
        }
        if wake { wakeup.signal() }
        return accepted
    }

    // MARK: - The thread

    /// Connects, then runs the loop until the connection ends. `ready` is called once, with nil
    /// when the connection is usable or with the reason it could not be made.
    func run(ready: (TransportFailure?) -> Void) {
        ioThread.store(CurrentThread.identity, ordering: .relaxed)
        do throws(TransportFailure) {
            try establish()
        } catch {
            inbox.withLock { enter(.closed(error), in: &$0) }
            teardown()
            ready(error)
            failQueuedCommands(with: error)
            return
        }
        inbox.withLock { inbox in
            if case .connecting = inbox.phase { inbox.phase = .ready }
        }
        ready(nil)
        loop()
        teardown()
    }

    private func establish() throws(TransportFailure) {
        let deadline = ContinuousClock.now + configuration.connectTimeout
        let (socket, early) = try RouteConnector.open(route, deadline: deadline, abortFD: wakeup.readFD)
        self.socket = socket
        let connected = SocketAddress.peer(of: socket.fd)
        peer.withLock { $0 = connected }
        var tunnelBytes = early
        if let context = configuration.tls {
            let name = configuration.tlsServerNameOverride ?? serverName
            let tls = try TLSSession(context: context, serverName: name, output: records)
            self.tls = tls
            if !tunnelBytes.isEmpty {
                tunnelBytes.withUnsafeBytes { tls.feed($0) }
                tunnelBytes = []
            }
            try tls.handshake(over: socket, deadline: deadline, abortFD: wakeup.readFD, scratch: cipherBuffer)
            let certificate = tls.verifiedPeerCertificate()
            inbox.withLock { $0.peerCertificate = certificate }
        }
        try startSession()
        if !tunnelBytes.isEmpty, let failure = tunnelBytes.withUnsafeBytes({ feed($0) }) {
            throw .connectFailed(target: route.description, reason: Self.handshakeReason(failure), kind: .notHTTP2)
        }
        try flush()
        // Wait for the server's SETTINGS so the first burst of streams respects its limits, and so
        // a peer that does not speak HTTP/2 fails the connect rather than the first call.
        while !receivedSettings {
            // The server broke the protocol (say, SETTINGS with a window over 2^31-1): nghttp2 has
            // said so with GOAWAY, and no SETTINGS will ever count. End here, not at the deadline.
            if let protocolFailure {
                guard serverFirstFrameIsSettings else {
                    throw .connectFailed(
                        target: route.description,
                        reason: "the server did not speak HTTP/2 (its first frame is not SETTINGS)",
                        kind: .notHTTP2
                    )
                }
                throw .connectFailed(target: route.description, reason: protocolFailure, kind: .protocolViolation)
            }
            try failConnectIfServerClosedTLS()
            if let shutdown = shutdownRequested() { throw shutdown }
            let millis = PollTimeout.milliseconds(until: deadline)
            guard millis > 0 else {
                throw .connectFailed(
                    target: route.description,
                    reason: "timed out waiting for the server's HTTP/2 SETTINGS",
                    kind: .timedOut
                )
            }
            var fds = [
                pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, millis) < 0 && errno != EINTR {
                throw .connectFailed(target: route.description, reason: Errno.describe(errno), kind: .other)
            }
            if fds[0].revents != 0 {
                if let failure = receive(now: ContinuousTime.now) {
                    throw .connectFailed(
                        target: route.description,
                        reason: Self.handshakeReason(failure),
                        kind: .notHTTP2
                    )
                }
                try flush()
            }
        }
        // SETTINGS and close_notify read together: the connection is over before its first call.
        try failConnectIfServerClosedTLS()
    }

    /// A close_notify read while connecting ends the connect, as the end of the stream does.
    private func failConnectIfServerClosedTLS() throws(TransportFailure) {
        guard serverClosedTLS else { return }
        throw .connectFailed(
            target: route.description,
            reason: Self.handshakeReason(Self.serverClosedTLSFailure),
            kind: .notHTTP2
        )
    }

    /// Why a connection that failed before SETTINGS arrived failed, in connect terms.
    private static func handshakeReason(_ error: TransportFailure) -> String {
        switch error {
        case .protocolError(let reason): return "the server did not speak HTTP/2 (\(reason))"
        case .connectionClosed(let reason, _): return reason
        default: return error.description
        }
    }

    /// A shutdown command that arrived while connecting, as the error to fail with.
    private func shutdownRequested() -> TransportFailure? {
        inbox.withLock { inbox in
            inbox.commands.contains { if case .shutdown = $0 { return true } else { return false } }
        } ? .connectFailed(target: route.description, reason: "connection attempt abandoned", kind: .abandoned) : nil
    }

    private func loop() {
        // The socket, the wake-up descriptor and the wake timer (where there is one), as `poll`
        // takes them: one array for the connection's life, refilled each turn, so the loop
        // allocates nothing to wait. A local, so its accesses are checked at compile time.
        var pollSet = [pollfd](repeating: pollfd(), count: wakeTimer == nil ? 2 : 3)
        // The reading of the clock the last turn ran on. The next sleep is timed from it rather
        // than from a reading of its own (a call into the runtime on every sleep): it is older by
        // the time the turn took, microseconds on a call's path, so a timer fires that much
        // later, never earlier.
        var now = ContinuousTime.now
        while closeReason == nil {
            let wake = nextWake()
            pollSet[0] = pollfd(
                fd: socket!.fd,
                events: Int16(POLLIN) | (output.isEmpty ? 0 : Int16(POLLOUT)),
                revents: 0
            )
            pollSet[1] = pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0)
            if let wakeTimer { pollSet[2] = pollfd(fd: wakeTimer.fd, events: Int16(POLLIN), revents: 0) }
            // The last touch of the loop's state before poll(2): from here until the session is
            // reclaimed, a caller may hold it. Only a borrower arms the wake timer, so it is
            // watched only while the session is lent: any other sleep polls two descriptors (an
            // armed timer's deadline is in this thread's own heap, and the next lending sleep
            // sees it went off).
            let (sleeps, lends) = readyToSleep(until: wake)
            let timeout = sleeps ? wake.map { LoopClock.pollMilliseconds(from: now, until: $0) } ?? -1 : 0
            let ready = poll(&pollSet, lends && pollSet.count > 2 ? 3 : 2, timeout)
            let pollError = ready < 0 ? errno : 0
            // Nobody can have borrowed in a sleep that did not lend: no lock taken for it.
            if lends { reclaimSession() }
            if pollError != 0 && pollError != EINTR {
                close(.connectionClosed(reason: "poll failed: \(Errno.describe(pollError))", streamWasSent: true))
                break
            }
            if pollSet.count > 2, pollSet[2].revents != 0 {
                wakeTimer?.drain()
                wakeTimerArmedFor = nil
            }
            // One reading of the clock serves the whole turn: what it is used for (a deadline
            // passed, the last bytes' arrival, idleness) takes no harm from the microseconds a
            // turn lasts, and each reading is a call into the runtime and a subtraction of
            // instants.
            now = ContinuousTime.now
            takeCommands(now: now)
            if let failure = loanFailure {
                close(failure)
                break
            }
            // Once closing, nothing more is read or written: a flush now could have nghttp2 ask a
            // stream for body bytes after its caller has been answered.
            if closeReason != nil { break }
            if pollSet[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                if let failure = receive(now: now) {
                    close(failure)
                    break
                }
            }
            expireDeadlines(now: now)
            checkKeepalive(now: now)
            if closeReason != nil { break }
            runJobs(now: now)
            if closeReason != nil { break }
            resetStreamsOverLimit()
            do throws(TransportFailure) {
                try flush()
            } catch {
                close(error)
                break
            }
            checkIdle(now: now)
            if shouldStop() { break }
            if serverClosedTLS {
                close(Self.serverClosedTLSFailure)
                break
            }
        }
    }

    /// Marks the loop asleep unless work is already queued; says whether poll(2) may block
    /// (`sleeps`) and whether the session is lent meanwhile (`lends`). Asleep with no stream
    /// open, it keeps `idleSpareStreams` spare streams at most and no spare body. Asleep with no
    /// stream open, nothing to write and no reset to make, it lends the session
    /// (ConnectionLoop+SessionLoan), telling when it wakes by itself (`wake`): once it sleeps,
    /// the thread touches nothing of the loop's until it has reclaimed the session.
    private func readyToSleep(until wake: ContinuousTime?) -> (sleeps: Bool, lends: Bool) {
        var released: [HTTP2Stream] = []
        var body: [UInt8] = []
        let idle = unaryStreamsOpen == 0
        if idle { swap(&body, &spareBody) }
        // Lent only to the call that finds the connection idle: with streams open, the calls that
        // come while this thread waits go out together in its next write, one `send` for all.
        let lendable = noStreamOpen && output.isEmpty && !resetsPending
        let (sleeps, lends) = inbox.withLock { inbox -> (Bool, Bool) in
            guard inbox.commands.isEmpty, inbox.jobs.isEmpty else { return (false, false) }
            inbox.polling = true
            if idle && inbox.spareStreams.count > Self.idleSpareStreams {
                swap(&released, &inbox.spareStreams)
                inbox.spareStreams.append(contentsOf: released.suffix(Self.idleSpareStreams))
            }
            guard lendable, case .ready = inbox.phase else { return (true, false) }
            inbox.lendable = true
            inbox.sleepsUntil = wake
            return (true, true)
        }
        if !sleeps { swap(&body, &spareBody) }
        // What is let go (the spares over two, the spare body), outside the lock.
        return (sleeps, lends)
    }

    /// Takes the session back, first thing after poll(2), from a caller that borrowed it. While
    /// that caller still holds it, waits for its signal on the wake-up descriptor: never a spin,
    /// never a lock held across its write. From here on nobody borrows until the next sleep.
    private func reclaimSession() {
        while true {
            let (lent, signalled) = inbox.withLock { inbox -> (Bool, Bool) in
                inbox.lendable = false
                guard inbox.lent else { return (false, false) }
                inbox.ownerWaiting = true
                // A signal already pending would end the wait at once: cleared first, then the
                // loan looked at again, so the borrower's own signal is never drained unseen.
                defer { inbox.wakePending = false }
                return (true, inbox.wakePending)
            }
            guard lent else { return }
            if signalled {
                wakeup.drain()
                continue
            }
            var wait = pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&wait, 1, -1)
        }
    }

    /// Leaves an ended stream in the inbox for the next submit, unless the spares are full or
    /// something may still reach it (a reset over its body limit not yet sent, a deadline entry).
    private func recycle(_ stream: HTTP2Stream) {
        guard stream.isFinished, !stream.pendingReset, stream.deadlineSlot == -1 else { return }
        // Left as a spare, it may carry a caller's next exchange at once: a feed of bytes read
        // into its body does not touch it again (ConnectionLoop+BodyInPlace).
        if placement?.stream == ObjectIdentifier(stream) { placement?.streamRecycled = true }
        stream.resetForReuse()
        inbox.withLock { inbox in
            if inbox.spareStreams.count < Self.spareStreamLimit, closeReason == nil {
                inbox.spareStreams.append(stream)
            }
        }
    }

    /// Runs the jobs queued so far (callers resumed on this thread), then takes the commands they
    /// queued (their next requests) so those go out in this turn's write. Jobs queued while these
    /// run wait for the next turn, so reading and writing always get their turn.
    private func runJobs(now: ContinuousTime) {
        // The batch is a local, its buffer parked in `takenJobs` between turns, as in
        // `takeCommands`.
        var batch: [ScheduledJob] = []
        swap(&batch, &takenJobs)
        inbox.withLock { swap(&$0.jobs, &batch) }
        let ran = !batch.isEmpty
        for scheduled in batch {
            scheduled.job.runSynchronously(on: scheduled.executor)
        }
        Self.empty(&batch)
        swap(&batch, &takenJobs)
        if ran { takeCommands(now: now) }
    }

    /// When poll(2) must wake by itself: at the nearest deadline, keepalive or idle event; nil
    /// when there is none.
    func nextWake() -> ContinuousTime? {
        var next = deadlines.nextDeadline
        if let interval = keepaliveInterval, !noStreamOpen {
            let event = pingSentAt?.advanced(by: keepaliveTimeout) ?? lastReceive.advanced(by: interval)
            next = next.map { min($0, event) } ?? event
        }
        if let since = idleSince, let timeout = idleTimeout {
            let event = since.advanced(by: timeout)
            next = next.map { min($0, event) } ?? event
        }
        return next
    }

    private func shouldStop() -> Bool {
        guard let session else { return true }
        if gracefulShutdown && noStreamOpen {
            nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
            try? flush()
            closeReason = nil
            return true
        }
        if goawayLastStreamID != nil && noStreamOpen && output.isEmpty {
            return true
        }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 && output.isEmpty
    }

    // MARK: - Commands

    /// Empties a batch, keeping its buffer for the next turn, from the end:
    /// `removeAll(keepingCapacity:)` goes through the generic `replaceSubrange` (about 150
    /// instructions) for the one or two commands a turn usually takes.
    private static func empty<Element>(_ batch: inout [Element]) {
        while batch.popLast() != nil {}
    }

    private func takeCommands(now: ContinuousTime) {
        // The batch is a local, its buffer parked in `takenCommands` between turns: Swift checks
        // every access to a class's array property at run time (about a hundred instructions
        // each) unless no access to it spans other work, and a loop over the property would span
        // every command's. Only swaps touch the property, so its accesses are checked statically.
        var batch: [ConnectionCommand] = []
        swap(&batch, &takenCommands)
        let signalled = inbox.withLock { inbox -> Bool in
            swap(&inbox.commands, &batch)
            inbox.polling = false
            defer { inbox.wakePending = false }
            return inbox.wakePending
        }
        if signalled { wakeup.drain() }
        var submitted = 0
        for command in batch {
            switch command {
            case .submit(let stream):
                submit(stream, now: now)
                submitted += 1
                if submitted == Self.submitsPerWrite {
                    submitted = 0
                    writeSubmitted()
                }
            case .cancel(let stream, let generation):
                if stream.generation == generation { cancel(stream) }
            case .shutdown(let graceful):
                if graceful {
                    beginGracefulShutdown(.connectionClosed(reason: "the channel is closing", streamWasSent: false))
                } else {
                    close(.connectionClosed(reason: "closed by the client", streamWasSent: true))
                }
            case .reportFootprint(let continuation):
                continuation.resume(returning: footprint())
            case .streaming(let command):
                handle(command)
            }
        }
        Self.empty(&batch)
        swap(&batch, &takenCommands)
    }

    /// Writes the frames of the requests submitted so far in a batch of commands: nghttp2 holds
    /// each one's outbound item and its copy of the header fields (about 530 bytes a request)
    /// until its frames are written, so a burst of ten thousand calls written in one go would hold
    /// 5 MB at its peak, and the heap would keep that span once it was freed.
    private func writeSubmitted() {
        guard closeReason == nil else { return }
        do throws(TransportFailure) {
            try flush()
        } catch {
            close(error)
        }
    }

    /// Moves `inbox` (whose lock the caller holds) to `phase`, one that takes no new streams.
    private func enter(_ phase: ConnectionInbox.Phase, in inbox: inout ConnectionInbox) {
        inbox.phase = phase
        acceptsStreams.store(false, ordering: .releasing)
    }

    /// No new streams (they fail with `refusal`, marked not sent); the open ones finish, then
    /// GOAWAY and close.
    private func beginGracefulShutdown(_ refusal: TransportFailure) {
        gracefulShutdown = true
        inbox.withLock { inbox in
            if case .ready = inbox.phase { enter(.draining(refusal), in: &inbox) }
        }
    }

    /// With an idle timeout, once no stream has been open for that long: a graceful shutdown.
    /// Called after each turn's write, so a stream opened and answered within one turn's jobs
    /// is seen; `now` is the turn's reading of the clock.
    private func checkIdle(now: ContinuousTime) {
        guard let timeout = idleTimeout, !gracefulShutdown else { return }
        guard noStreamOpen else {
            idleSince = nil
            return
        }
        guard let since = idleSince else {
            idleSince = now
            return
        }
        if now.nanoseconds(since: since) >= timeout {
            beginGracefulShutdown(.connectionClosed(reason: "the connection was idle", streamWasSent: false))
        }
    }

    private func failQueuedCommands(with error: TransportFailure) {
        let commands = inbox.withLock { inbox -> [ConnectionCommand] in
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }
        for command in commands {
            switch command {
            case .submit(let stream): stream.finish(.failure(Self.notSent(error)))
            case .reportFootprint(let continuation): continuation.resume(returning: .empty)
            case .streaming(let command): Self.refuse(command, with: error)
            case .cancel, .shutdown: break
            }
        }
    }

    /// What this thread still holds: the stream table, the deadline queue, and their bytes.
    private func footprint() -> HTTP2ConnectionFootprint {
        var seen = Set<ObjectIdentifier>()
        var bytes = 0
        for stream in streams.streams + deadlines.streams where seen.insert(ObjectIdentifier(stream)).inserted {
            bytes += stream.retainedBytes
        }
        return HTTP2ConnectionFootprint(
            streams: streams.count,
            deadlines: deadlines.count,
            retainedBytes: bytes,
            bytesReadInPlace: bytesReadInPlace,
            bytesReservedAhead: bodyReservations.reservedBytes
        )
    }

    /// The error for a stream that never left: the same cause, marked safe to retry.
    static func notSent(_ error: TransportFailure) -> TransportFailure {
        switch error {
        case .connectionClosed(let reason, _), .protocolError(let reason):
            return .connectionClosed(reason: reason, streamWasSent: false)
        default:
            return error
        }
    }

    /// How the connection's end applies to one stream. Whether the server may have processed the
    /// request comes from the stream (did its HEADERS leave?), never from the error: a cause
    /// found while writing (a TLS write failure says "not sent") must not let a request the
    /// server already has be sent again.
    static func failure(_ error: TransportFailure, headersSent: Bool) -> TransportFailure {
        guard headersSent else { return notSent(error) }
        if case .connectionClosed(let reason, _) = error {
            return .connectionClosed(reason: reason, streamWasSent: true)
        }
        return error.isRetrySafe ? .connectionClosed(reason: error.description, streamWasSent: true) : error
    }

    func submit(_ stream: HTTP2Stream, now: ContinuousTime) {
        guard let session else { return }
        if let closeReason {
            // The submit came in the same batch as an immediate shutdown.
            stream.finish(.failure(Self.notSent(closeReason)))
            return
        }
        if stream.cancelledBeforeSubmit {
            stream.finish(.failure(.cancelled))
            return
        }
        if let goawayError {
            stream.finish(.failure(goawayError))
            return
        }
        // The deadline alone: a copy of the whole request would retain each of its strings.
        let deadline = stream.request.deadline
        if let deadline, deadline <= now {
            stream.finish(.failure(.deadlineExceeded))
            return
        }
        let id = submitRequest(stream, session: session)
        guard id > 0 else {
            if id == -1 { return }  // already finished with a specific error
            stream.finish(.failure(.protocolError(String(cString: nghttp2_strerror(id)))))
            return
        }
        stream.id = id
        streams.insert(stream)
        unaryStreamsOpen += 1
        if let deadline {
            deadlines.insert(stream, deadline: deadline)
        }
    }

    /// Points nghttp2 at the request's header block (nghttp2 copies what it keeps) and submits
    /// it; returns the stream id, a negative nghttp2 error, or -1 when the stream was already
    /// failed here. The stream lets go of its header fields here, whatever the outcome.
    private func submitRequest(_ stream: HTTP2Stream, session: OpaquePointer) -> Int32 {
        var provider = nghttp2_data_provider()
        provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
        provider.read_callback = SessionCallbacks.readRequestBody
        var header = stream.takeHeader()
        guard let head = header.head.take() else {
            return submitHeaders(header.block, stream: stream, provider: &provider, session: session)
        }
        // The reused buffer is worked on as a local (swapped out and back), as in `takeCommands`.
        var block = HTTP2HeaderBlock()
        swap(&block, &headerScratch)
        block.removeAll(keepingCapacity: true)
        head.write(into: &block)
        let id = submitHeaders(block, stream: stream, provider: &provider, session: session)
        block.removeAll(keepingCapacity: block.capacity <= Self.headerScratchLimit)
        swap(&block, &headerScratch)
        return id
    }

    /// Submits `block` as the stream's HEADERS, or answers the stream when it is over the
    /// server's header list limit.
    private func submitHeaders(
        _ block: HTTP2HeaderBlock,
        stream: HTTP2Stream,
        provider: inout nghttp2_data_provider,
        session: OpaquePointer
    ) -> Int32 {
        switch submitRequestHeaders(block, provider: &provider, session: session, stream: stream) {
        case .success(let id):
            return id
        case .failure(let failure):
            stream.finish(.failure(failure))
            return -1
        }
    }

    /// Lays `block` out as nghttp2's name/value list and submits it as a request's HEADERS with
    /// `provider`: nghttp2's stream id or error code, or, without submitting anything,
    /// `headerListTooLarge` when the block is over the server's header list limit. Unary and
    /// bidirectional streams both open here; a unary stream passes itself as `stream`, which
    /// nghttp2 keeps as the stream's user data (see `SessionCallbacks.unaryStream`).
    func submitRequestHeaders(
        _ block: HTTP2HeaderBlock,
        provider: inout nghttp2_data_provider,
        session: OpaquePointer,
        stream: HTTP2Stream? = nil
    ) -> Result<Int32, TransportFailure> {
        block.withFields { fields in
            // nghttp2 copies the list, so it lives on the stack for the call (nghttp2_nv is 40
            // bytes: a typical request's dozen fields take no heap), and no property of the
            // loop's is touched once per field.
            let count = block.fieldCount
            return withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: count) { list in
                var listSize = 0
                var index = 0
                for field in fields {
                    precondition(index < count, "a header block holds as many fields as it counted")
                    listSize += field.name.count + field.value.count + 32
                    list.initializeElement(
                        at: index,
                        to: nghttp2_nv(
                            // Both point into the block's (non-empty) buffer, so neither is nil.
                            name: UnsafeMutablePointer(mutating: field.name.baseAddress!),
                            value: UnsafeMutablePointer(mutating: field.value.baseAddress!),
                            namelen: field.name.count,
                            valuelen: field.value.count,
                            // Tokens never enter the HPACK table, so their bytes cannot be probed
                            // through compression and do not outlive the call in the encoder's memory.
                            flags: field.sensitive
                                ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                        )
                    )
                    index += 1
                }
                let limit = nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE)
                guard UInt64(listSize) <= UInt64(limit) else {
                    return .failure(.headerListTooLarge(size: listSize, limit: Int(limit)))
                }
                let userData = stream.map { Unmanaged.passUnretained($0).toOpaque() }
                return .success(nghttp2_submit_request(session, nil, list.baseAddress, count, &provider, userData))
            }
        }
    }

    private func cancel(_ stream: HTTP2Stream) {
        guard stream.id > 0 else {
            // The cancel overtook the submit in the queue (or the submit failed): only mark it,
            // since the calling task may still be setting the completion.
            stream.cancelledBeforeSubmit = true
            return
        }
        guard !stream.isFinished else { return }
        reset(stream, failing: .cancelled)
    }

    /// Resets a running stream with CANCEL and answers its caller with `error`.
    private func reset(_ stream: HTTP2Stream, failing error: TransportFailure) {
        if let session, stream.id > 0 {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2ErrorCode.cancel)
        }
        end(stream, .failure(error))
    }

    /// Answers a submitted stream's caller and drops its deadline entry. The stream stays in the
    /// table until nghttp2 closes it, but holds nothing any more.
    private func end(_ stream: HTTP2Stream, _ result: Result<HTTP2Response, TransportFailure>) {
        if stream.deadlineSlot >= 0 { deadlines.remove(stream) }
        stream.finish(result)
    }

    private func expireDeadlines(now: ContinuousTime) {
        // One read of the queue in a turn where nothing expires (each access to it is checked at
        // run time).
        guard let next = deadlines.nextDeadline, next <= now else { return }
        while let stream = deadlines.popExpired(now: now) {
            reset(stream, failing: .deadlineExceeded)
        }
    }

    /// Resets the streams whose body went over the limit, unless nghttp2 already closed them.
    private func resetStreamsOverLimit() {
        guard resetsPending else { return }
        resetsPending = false
        // A local batch, as in `takeCommands`.
        var batch: [HTTP2Stream] = []
        swap(&batch, &pendingResets)
        for stream in batch where streams.contains(stream) {
            reset(stream, failing: .responseBodyTooLarge(limit: stream.request.maxResponseBodyBytes))
        }
        // Never reused (see `recycle`): dropped with the list.
        batch.removeAll(keepingCapacity: true)
        swap(&batch, &pendingResets)
    }

    private func checkKeepalive(now: ContinuousTime) {
        guard let interval = keepaliveInterval, let session, !noStreamOpen else { return }
        if let sent = pingSentAt {
            if now.nanoseconds(since: sent) >= keepaliveTimeout {
                close(.keepaliveTimeout)
            }
        } else if now.nanoseconds(since: lastReceive) >= interval {
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
            pingSentAt = now
        }
    }

    // MARK: - Reading

    /// Reads what the socket has (bounded, so writes get their turn) and feeds nghttp2.
    /// Returns the error that ends the connection, if any.
    private func receive(now: ContinuousTime) -> TransportFailure? {
        guard let socket else { return .connectionClosed(reason: "not connected", streamWasSent: false) }
        var budget = 4 << 20
        while budget > 0 {
            let inPlace = tls == nil ? inPlaceTarget() : nil
            let requested: Int
            let outcome: IOResult
            if #available(macOS 26, *), let inPlace {
                requested = inPlace.room
                outcome = readInPlace(into: inPlace.stream, room: requested, socket.receive(into:)) { outcome in
                    if case .bytes(let count) = outcome { return count }
                    return nil
                }
            } else {
                var target = tls == nil ? readBuffer : cipherBuffer
                if tls == nil, shortReadNext {
                    target = UnsafeMutableRawBufferPointer(rebasing: readBuffer[..<Self.inPlaceMinimum])
                }
                requested = target.count
                outcome = socket.receive(into: target)
            }
            switch outcome {
            case .bytes(let count):
                budget -= count
                lastReceive = now
                // A short read is used up only once it brought bytes: when the server sends a
                // frame at a time, it often finds nothing yet, and a full read after it would take
                // the next frame whole, and every frame after that (their headers drift by 9 bytes
                // a read), none of them in place.
                if inPlace == nil { shortReadNext = false }
                if let tls {
                    let received = UnsafeRawBufferPointer(rebasing: cipherBuffer[0..<count])
                    if let failure = tls.receiving(received, { decryptAndFeed(tls) }) { return failure }
                    // Nothing the server sends after close_notify counts.
                    if serverClosedTLS { return nil }
                } else if let inPlace {
                    let (failure, receiving) = feedPlaced(count, of: inPlace.stream)
                    if let failure { return failure }
                    // Whether the frame ended or the body's room did, what comes next (the next
                    // frame's header, or the frame's last bytes) is read short.
                    shortReadNext = receiving
                } else if let failure = feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])) {
                    return failure
                }
                // A read that did not fill the buffer took everything the socket had; what
                // arrives later makes the next poll(2) return at once (it is level-triggered),
                // so asking again now would be a system call per turn that finds nothing.
                if count < requested { return nil }
            case .wouldBlock:
                return nil
            case .closed:
                return .connectionClosed(reason: "closed by the server", streamWasSent: true)
            case .failed(let reason):
                return .connectionClosed(reason: reason, streamWasSent: true)
            }
        }
        return nil
    }

    private func decryptAndFeed(_ tls: TLSSession) -> TransportFailure? {
        while true {
            let inPlace = inPlaceTarget()
            let outcome: TLSSession.ReadOutcome
            if #available(macOS 26, *), let inPlace {
                outcome = readInPlace(into: inPlace.stream, room: inPlace.room, tls.decrypt(into:)) { outcome in
                    if case .bytes(let count) = outcome { return count }
                    return nil
                }
            } else {
                // A record at a time (16 KiB at most), so the next frame's header comes with
                // little of its payload, and TLS needs no short read.
                outcome = tls.decrypt(into: readBuffer)
            }
            switch outcome {
            case .bytes(let count):
                if let inPlace {
                    if let failure = feedPlaced(count, of: inPlace.stream).failure { return failure }
                } else if let failure = feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])) {
                    return failure
                }
            case .needsInput:
                return nil
            case .closed:
                serverClosedTLS = true
                return nil
            case .failed(let reason):
                return .connectionClosed(reason: "TLS error: \(reason)", streamWasSent: true)
            }
        }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) -> TransportFailure? {
        guard let session else { return nil }
        if serverPrefixBytesSeen < 4, !bytes.isEmpty {
            let typeIndex = 3 - serverPrefixBytesSeen
            if typeIndex < bytes.count { serverFirstFrameIsSettings = bytes[typeIndex] == 0x04 }
            serverPrefixBytesSeen += min(4 - serverPrefixBytesSeen, bytes.count)
        }
        let result = nghttp2_session_mem_recv(
            session,
            bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            bytes.count
        )
        if result < 0 {
            return .protocolError(String(cString: nghttp2_strerror(Int32(result))))
        }
        return nil
    }

    // MARK: - Writing

    /// Gathers every frame nghttp2 has ready and writes them with one `send`; what the socket
    /// does not take now waits for POLLOUT.
    func flush() throws(TransportFailure) {
        guard let session, let socket else { return }
        let output = self.output
        while true {
            // Gather up to a bounded backlog; nghttp2 keeps the rest queued until it drains.
            // `bounded` says the bound, not nghttp2, ended the gathering (also when a backlog
            // left by a refused write is already at the bound).
            var bounded = true
            while output.count < configuration.maxUnsentBytes {
                var chunk: UnsafePointer<UInt8>?
                let count = nghttp2_session_mem_send(session, &chunk)
                if count < 0 {
                    throw .protocolError(String(cString: nghttp2_strerror(Int32(count))))
                }
                if count == 0 {
                    bounded = false
                    break
                }
                frames.append(UnsafeRawBufferPointer(start: chunk, count: count))
            }
            if let tls, !frames.isEmpty {
                try tls.encrypt(frames.readable)
                frames.consume(frames.count)
            }
            while !output.isEmpty {
                switch socket.send(output.readable) {
                case .bytes(let count):
                    output.consume(count)
                case .wouldBlock:
                    return  // the rest goes when poll(2) reports POLLOUT
                case .closed:
                    throw .connectionClosed(reason: "closed by the server", streamWasSent: true)
                case .failed(let reason):
                    throw .connectionClosed(reason: reason, streamWasSent: true)
                }
            }
            // Everything went out. If the bound stopped the gathering, nghttp2 may have more: go
            // round again, since no frame from the server need come to wake the loop for it.
            if !bounded || nghttp2_session_want_write(session) == 0 { return }
        }
    }

    /// Unsent output: over h2c the frames themselves, over TLS their records.
    var output: ByteQueue { tls == nil ? frames : records }

    // MARK: - Session

    private func startSession() throws(TransportFailure) {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        SessionCallbacks.install(on: callbacks)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // Until the server's SETTINGS arrive, assume the RFC's recommended minimum.
        nghttp2_option_set_peer_max_concurrent_streams(option, 100)
        // Windows are given back by hand (nghttp2_session_consume*), so a bidirectional stream's
        // reader can hold its server back (ConnectionLoop+Streaming); unary DATA is consumed on
        // arrival, as nghttp2 would.
        nghttp2_option_set_no_auto_window_update(option, 1)
        // What a server can make the session do is bounded by nghttp2's defaults, kept as they
        // are: at most 1000 unsent PING/SETTINGS acknowledgements (max_outbound_ack), 32 entries
        // per SETTINGS frame (max_settings) and, from 1.52.0-1+deb12u2 (CVE-2024-28182) and
        // upstream 1.61, 8 CONTINUATION frames per header block; ControlFloodTests check them.
        var session: OpaquePointer?
        var allocator = memory.allocator
        let created = nghttp2_session_client_new3(
            &session,
            callbacks,
            Unmanaged.passUnretained(self).toOpaque(),
            option,
            &allocator
        )
        guard created == 0, let session else {
            throw .protocolError("nghttp2 session: \(String(cString: nghttp2_strerror(created)))")
        }
        self.session = session
        let settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(configuration.initialStreamWindowSize)
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_FRAME_SIZE.rawValue),
                value: configuration.maxFrameSize
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: configuration.maxHeaderListSize
            ),
        ]
        var status = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
        if status == 0 {
            status = nghttp2_session_set_local_window_size(
                session,
                UInt8(NGHTTP2_FLAG_NONE.rawValue),
                0,
                configuration.connectionWindowSize
            )
        }
        guard status == 0 else {
            throw .protocolError("nghttp2 settings: \(String(cString: nghttp2_strerror(status)))")
        }
    }

    // MARK: - Ending

    /// Ends the connection: every open stream fails with `error`, marked sent or not-sent by its
    /// own state, and the owner hears why. The streams stay in the table, alive, until the session
    /// is deleted: nghttp2 still holds pointers to them (their body providers).
    private func close(_ error: TransportFailure) {
        guard closeReason == nil else { return }
        closeReason = error
        inbox.withLock { enter(.closed(error), in: &$0) }
        for stream in streams.streams {
            stream.finish(.failure(Self.failure(error, headersSent: stream.headersSent)))
        }
        failStreamingCalls(error)
        deadlines.removeAll()
        pendingResets.removeAll()
        resetsPending = false
    }

    private func teardown() {
        let error = closeReason
        if closeReason == nil {
            // A protocol violation by the server fails the streams it reached as INTERNAL
            // (never retried); those that never left can go elsewhere (see `failure`).
            close(
                protocolFailure.map(TransportFailure.protocolError)
                    ?? .connectionClosed(reason: "connection closed", streamWasSent: true)
            )
        }
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        // nghttp2 is gone, and with it every pointer to these streams.
        streams.removeAll()
        streamingCalls.removeAll()
        spareBody = []
        bodyReservations = BodyReservations()
        unaryStreamsOpen = 0
        streamingCallsOpen = 0
        let spares = inbox.withLock { inbox -> [HTTP2Stream] in
            defer { inbox.spareStreams = [] }
            return inbox.spareStreams
        }
        _ = consume spares
        tls = nil
        socket?.closeSocket()
        socket = nil
        failQueuedCommands(with: .connectionClosed(reason: "connection closed", streamWasSent: false))
        // The phase is closed, so no job joins these: they run on the shared pool instead.
        let orphans = inbox.withLock { inbox -> [ScheduledJob] in
            defer { inbox.jobs = [] }
            return inbox.jobs
        }
        for scheduled in orphans {
            globalConcurrentExecutor.enqueue(ExecutorJob(scheduled.job))
        }
        onEvent(.closed(error))
    }

    // MARK: - nghttp2 callbacks (called from inside mem_recv / mem_send on this thread)

    func didReceiveSettings() {
        receivedSettings = true
    }

    func didReceivePingAck() {
        pingSentAt = nil
    }

    func didSendGoaway(errorCode: UInt32, reason: String) {
        protocolFailure =
            "the server broke the HTTP/2 protocol (\(reason.isEmpty ? "no reason given" : reason)); "
            + "the client ended the connection with \(HTTP2ErrorCode.name(errorCode))"
    }

    func didReceiveGoaway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        goawayLastStreamID = lastStreamID
        let error = TransportFailure.goaway(errorCode: errorCode, debugData: debugData)
        goawayError = error
        inbox.withLock { inbox in
            switch inbox.phase {
            case .closed: break
            default: enter(.draining(error), in: &inbox)
            }
        }
        onEvent(.draining)
    }

    /// A DATA chunk arrived for `stream`. Past the body limit the caller is answered at once (so
    /// an END_STREAM read in the same pass cannot turn the cut body into a response), and the
    /// stream is reset after this read (never from inside the callback).
    func didReceiveData(_ bytes: UnsafeRawBufferPointer, for stream: HTTP2Stream) {
        guard !stream.isFinished else { return }
        let inPlace = placement != nil && claimPlaced(bytes, of: stream)
        if stream.body.count + (inPlace ? 0 : bytes.count) > stream.request.maxResponseBodyBytes {
            end(stream, .failure(.responseBodyTooLarge(limit: stream.request.maxResponseBodyBytes)))
            stream.pendingReset = true
            pendingResets.append(stream)
            resetsPending = true
            return
        }
        if !inPlace { stream.appendBody(bytes, spare: &spareBody, reservations: &bodyReservations) }
    }

    /// Something the server sent on `stream` is unacceptable: its caller is answered now; the
    /// callback then stops the block, and nghttp2 resets the stream.
    func fail(_ stream: HTTP2Stream, _ error: TransportFailure) {
        end(stream, .failure(error))
    }

    /// nghttp2 closed a unary stream (the one its user data points at).
    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
        guard streams.remove(stream) else { return }
        unaryStreamsOpen -= 1
        if !bodyReservations.isEmpty { bodyReservations.release(stream.id) }
        // nghttp2 is done with the stream (its body provider included): once its caller has been
        // answered it can carry another exchange.
        defer { recycle(stream) }
        guard !stream.isFinished else { return }
        if stream.deadlineSlot >= 0 { deadlines.remove(stream) }
        if stream.remoteEnded {
            stream.finishWithResponse()
        } else if stream.invalidFrameError != 0 {
            stream.finish(.failure(.protocolError(SessionCallbacks.invalidFrameViolation(stream.invalidFrameError))))
        } else if let goawayError, let last = goawayLastStreamID, stream.id > last {
            stream.finish(.failure(goawayError))
        } else if stream.resetByServer {
            stream.finish(.failure(.streamReset(errorCode: errorCode)))
        } else {
            // nghttp2 reset the stream itself: what the server sent on it broke HTTP/2's rules.
            stream.finish(
                .failure(
                    .protocolError(
                        "the server's response on this stream broke HTTP/2's rules (a content-length that "
                            + "does not match the body, say); the client reset the stream with "
                            + HTTP2ErrorCode.name(errorCode)
                    )
                )
            )
        }
    }

    /// nghttp2 could not send a stream's HEADERS (the session is going away): never processed.
    /// nghttp2 drops the request (and its body provider) after this callback.
    func headersNotSent(for stream: HTTP2Stream, reason: Int32) {
        if streams.remove(stream) { unaryStreamsOpen -= 1 }
        // The table no longer keeps the stream alive, so nghttp2 must not hand it back.
        if let session { nghttp2_session_set_stream_user_data(session, stream.id, nil) }
        end(
            stream,
            .failure(
                goawayError
                    ?? .connectionClosed(reason: String(cString: nghttp2_strerror(reason)), streamWasSent: false)
            )
        )
    }
}
