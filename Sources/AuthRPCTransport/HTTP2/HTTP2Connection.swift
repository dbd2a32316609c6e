import AuthRPCSystem
import Foundation
import Synchronization

#if canImport(Glibc)
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/2 connection (TCP, TLS when configured, one nghttp2 session) that carries many
/// concurrent request/response exchanges.
///
/// Protocol work happens on the connection's own I/O thread; ``send(_:)`` hands the request to
/// it (or, when that thread sleeps with no stream open, submits and writes it from the calling
/// thread on the session the thread lends) and suspends until the response is complete, the
/// stream fails, its deadline passes, or the calling task is cancelled (the stream is then reset
/// with CANCEL).
package final class HTTP2Connection: Sendable {
    let loop: ConnectionLoop

    /// How this connection reached its server.
    package var route: ConnectionRoute { loop.route }

    /// The server's leaf certificate as the handshake verified it; nil over plaintext.
    package let peerCertificate: PeerCertificate?

    private init(loop: ConnectionLoop) {
        self.loop = loop
        peerCertificate = loop.inbox.withLock { $0.peerCertificate }
    }

    /// Nobody can open streams any more: let the open ones finish, then end the I/O thread.
    deinit {
        _ = loop.enqueue(.shutdown(graceful: true))
    }

    /// Resolves `target`, connects (Happy Eyeballs over its addresses), runs the TLS handshake
    /// when configured (verifying `target.host` unless the configuration overrides the name),
    /// and waits for the server's SETTINGS, all within the configured connect timeout.
    ///
    /// `onEvent` is called on the I/O thread when the server sends GOAWAY and when the connection
    /// ends; it must not block. With a `group`, the caller has announced the connection to it
    /// (``HTTP2ConnectionGroup/expectConnection()``), as for ``start(via:serverName:configuration:onEvent:group:completion:)``.
    package static func connect(
        to target: HostAndPort,
        configuration: HTTP2ConnectionConfiguration,
        group: HTTP2ConnectionGroup? = nil,
        onEvent: @escaping @Sendable (HTTP2ConnectionEvent) -> Void = { _ in }
    ) async throws(TransportFailure) -> HTTP2Connection {
        try await connect(
            via: .resolving(target),
            serverName: target.host,
            configuration: configuration,
            group: group,
            onEvent: onEvent
        )
    }

    /// Connects as `route` says: to a host's addresses, to given addresses (IP or unix-domain),
    /// or through an HTTP CONNECT proxy; then the TLS handshake when configured, verifying
    /// `serverName` (and sending it in SNI) unless the configuration overrides it, and the
    /// server's SETTINGS, all within the configured connect timeout. Any failure on the way,
    /// a protocol violation by the server included, ends the attempt at once.
    ///
    /// `onEvent` is called on the I/O thread when the server sends GOAWAY and when the connection
    /// ends; it must not block. With a `group`, as for `start`.
    package static func connect(
        via route: ConnectionRoute,
        serverName: String,
        configuration: HTTP2ConnectionConfiguration,
        group: HTTP2ConnectionGroup? = nil,
        onEvent: @escaping @Sendable (HTTP2ConnectionEvent) -> Void = { _ in }
    ) async throws(TransportFailure) -> HTTP2Connection {
        // The answer comes from the connection's thread and goes through a lock as well as the
        // continuation: a resume that arrives before the task has suspended is ordered only by
        // the concurrency runtime's uninstrumented atomics, which ThreadSanitizer cannot see.
        let answer = Locked<Result<HTTP2Connection, TransportFailure>?>(nil)
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            start(via: route, serverName: serverName, configuration: configuration, onEvent: onEvent, group: group) {
                result in
                answer.withLock { $0 = result }
                continuation.resume()
            }
        }
        guard let result = answer.withLock({ $0 }) else {
            throw .connectFailed(target: route.description, reason: "connection attempt abandoned", kind: .abandoned)
        }
        return try result.get()
    }

    /// Connects as ``connect(via:serverName:configuration:onEvent:)`` does, and answers with
    /// `completion`, called on the connection's own thread (or at once, when the connection
    /// cannot even start): no task of the cooperative pool takes part, so connecting goes on
    /// however busy the pool is. `completion` must not block. With a `group`, the caller
    /// has announced the connection to it (``HTTP2ConnectionGroup/expectConnection()``); the
    /// connection belongs to the group until its thread has ended.
    package static func start(
        via route: ConnectionRoute,
        serverName: String,
        configuration: HTTP2ConnectionConfiguration,
        onEvent: @escaping @Sendable (HTTP2ConnectionEvent) -> Void,
        group: HTTP2ConnectionGroup? = nil,
        completion: @escaping @Sendable (Result<HTTP2Connection, TransportFailure>) -> Void
    ) {
        let loop: ConnectionLoop
        do throws(TransportFailure) {
            loop = try ConnectionLoop(
                route: route,
                serverName: serverName,
                configuration: configuration,
                onEvent: onEvent
            )
        } catch {
            group?.started(nil)
            completion(.failure(error))
            return
        }
        group?.started(loop)
        let thread = Thread {
            CurrentThread.setName(Self.threadName)
            loop.run { error in
                completion(error.map { .failure($0) } ?? .success(HTTP2Connection(loop: loop)))
            }
            // Now rather than at the thread's exit, which comes after `group` hears of the end.
            TLSSession.releaseThreadState()
            group?.ended(loop)
        }
        thread.name = "\(Self.threadName) \(route)"
        thread.start()
    }

    /// What `top -H`, perf and debuggers call a connection's I/O thread.
    static let threadName = "authrpc-h2"

    /// Sends `request` on a new stream and returns the complete response.
    ///
    /// Throws ``TransportFailure/cancelled`` when the calling task is cancelled and
    /// ``TransportFailure/deadlineExceeded`` when the request's deadline passes; either way the stream
    /// is reset with CANCEL and everything it held is released.
    nonisolated(nonsending) package func send(
        _ request: consuming HTTP2Request
    ) async throws(TransportFailure) -> HTTP2Response {
        var headersReceived = false
        return try await send(request, headersReceived: &headersReceived)
    }

    /// ``send(_:)``, also telling whether the response's final header block had arrived when the
    /// exchange ended: after a failure, `true` means the server certainly processed the request
    /// and started answering (gRPC then calls the call committed: it is never sent again).
    nonisolated(nonsending) package func send(
        _ request: consuming HTTP2Request,
        headersReceived: inout Bool
    ) async throws(TransportFailure) -> HTTP2Response {
        if Task.isCancelled { throw .cancelled }
        let answer = await exchange(for: request).answer()
        headersReceived = answer.afterHeaders
        return try answer.result.get()
    }

    /// A stream for `request`, not yet submitted: for a caller that suspends on its own
    /// continuation (as ``send(_:headersReceived:)`` does), so that waiting for the answer costs
    /// it no async frame of this module's.
    package func exchange(for request: consuming HTTP2Request) -> HTTP2Exchange {
        let (stream, generation) = loop.makeStream(for: request)
        return HTTP2Exchange(loop: loop, stream: stream, generation: generation)
    }

    /// What the connection's I/O thread still holds (streams, deadline entries, their bytes),
    /// measured on that thread between two turns of its loop; empty once the connection ended.
    package func footprint() async -> HTTP2ConnectionFootprint {
        let loop = self.loop
        return await withUnsafeContinuation { continuation in
            _ = loop.enqueue(.reportFootprint(continuation))
        }
    }

    /// `true` while the connection's I/O thread sleeps with no stream open and would let the
    /// next submit write its stream from the caller's own thread.
    package var lendsSession: Bool {
        loop.inbox.withLock { $0.lendable }
    }

    /// How many streams so far were submitted and written from their caller's thread while the
    /// I/O thread slept.
    package var sessionLoans: Int {
        loop.inbox.withLock { $0.loans }
    }

    /// Runs `job` on this connection's I/O thread, between its reads and its write, as
    /// `executor`. Returns false when the thread runs no more jobs (the connection has ended);
    /// the caller must then run the job elsewhere.
    package func enqueue(_ job: UnownedJob, runningOn executor: UnownedTaskExecutor) -> Bool {
        loop.enqueue(job, on: executor)
    }

    /// The address the connection reached.
    package var remoteAddress: SocketAddress? {
        loop.peer.withLock { $0 }
    }

    /// `true` while the connection takes new streams (no GOAWAY, not closing, not closed). Read
    /// without a lock, as every call's pick of a connection does; once `false`, never `true` again.
    package var isAcceptingStreams: Bool {
        loop.acceptsStreams.load(ordering: .acquiring)
    }

    /// Stops the connection. Graceful: no new streams, open ones finish, then GOAWAY and close.
    /// Otherwise open streams fail at once.
    package func close(graceful: Bool = false) {
        _ = loop.enqueue(.shutdown(graceful: graceful))
    }
}
