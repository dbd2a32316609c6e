import AuthRPCSystem
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 request and its answer on a connection of its own, reached the way HTTP/2
/// connections are (``RouteConnector``: Happy Eyeballs, or a tunnel through an HTTP CONNECT
/// proxy) and protected by the same TLS (a ``TLSContext`` made for HTTP/1.1: the same roots,
/// hostname verification and minimum version). One request per connection, `Connection: close`,
/// no redirect followed (a 3xx is an answer like any other), and every part of the answer
/// bounded (``HTTP1ResponseParser``) and due by the request's deadline, whether the server is
/// silent or trickles.
///
/// Each exchange runs on a thread of its own, the only one that touches its socket and OpenSSL
/// session; the calling task waits without holding a thread. Cancelling the task ends the
/// exchange at once.
package enum HTTP1Exchange {
    /// Sends `request` over a connection `route` describes, with TLS (verifying `serverName`)
    /// when `tls` is given.
    ///
    /// - Throws: ``TransportFailure``: the connect failures (resolution, TCP, proxy, TLS) as for
    ///   HTTP/2; ``TransportFailure/deadlineExceeded`` when the answer is not complete by the
    ///   deadline; ``TransportFailure/cancelled`` when the task is cancelled;
    ///   ``TransportFailure/responseBodyTooLarge(limit:)``,
    ///   ``TransportFailure/responseHeaderListTooLarge(limit:)`` and ``TransportFailure/protocolError(_:)``
    ///   for answers over the bounds or malformed; ``TransportFailure/connectionClosed(reason:streamWasSent:)``
    ///   for an answer cut short; ``TransportFailure/invalidRequest(_:)`` (before connecting) for a
    ///   request that cannot be written.
    package static func send(
        _ request: HTTP1Request,
        via route: ConnectionRoute,
        tls: TLSContext?,
        serverName: String
    ) async throws(TransportFailure) -> HTTP1Response {
        if Task.isCancelled { throw .cancelled }
        if let tls, tls.applicationProtocol != .http1 {
            throw .tls(TLSFailure(.invalidConfiguration, "an HTTP/1.1 exchange needs a context made for HTTP/1.1"))
        }
        let bytes = try request.serialized(defaultPort: tls == nil ? 80 : 443).get()
        let wakeup: Wakeup
        do throws(SystemCallError) {
            wakeup = try Wakeup()
        } catch {
            throw .connectionClosed(reason: error.description, streamWasSent: false)
        }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation {
                (continuation: UnsafeContinuation<Result<HTTP1Response, TransportFailure>, Never>) in
                let thread = Thread {
                    CurrentThread.setName("authrpc-http1")
                    let result = Result { () throws(TransportFailure) -> HTTP1Response in
                        try run(
                            bytes,
                            request: request,
                            route: route,
                            tls: tls,
                            serverName: serverName,
                            abortFD: wakeup.readFD
                        )
                    }
                    // Before the caller goes on: a program may exit as soon as it has the answer.
                    TLSSession.releaseThreadState()
                    ThreadSanitizerHandoff.publish(wakeup)
                    continuation.resume(returning: result)
                }
                thread.name = "authrpc-http1 \(route)"
                thread.start()
            }
        } onCancel: {
            wakeup.signal()
        }
        // The answer was made on the exchange's thread (ThreadSanitizerHandoff says why this).
        ThreadSanitizerHandoff.receive(wakeup)
        if case .failure = result, Task.isCancelled { throw .cancelled }
        return try result.get()
    }

    /// The exchange itself, on its own thread.
    private static func run(
        _ bytes: [UInt8],
        request: HTTP1Request,
        route: ConnectionRoute,
        tls context: TLSContext?,
        serverName: String,
        abortFD: Int32
    ) throws(TransportFailure) -> HTTP1Response {
        let deadline = request.deadline
        var (socket, early) = try RouteConnector.open(route, deadline: deadline, abortFD: abortFD)
        defer { socket.closeSocket() }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { scratch.deallocate() }

        let output = ByteQueue(capacity: max(bytes.count, 4096))
        var session: TLSSession?
        if let context {
            let tls = try TLSSession(context: context, serverName: serverName, output: output)
            if !early.isEmpty {
                early.withUnsafeBytes { tls.feed($0) }
                early = []
            }
            try tls.handshake(over: socket, deadline: deadline, abortFD: abortFD, scratch: scratch)
            session = tls
        }

        if let session {
            let encrypted = bytes.withUnsafeBytes { plaintext in
                Result { () throws(TransportFailure) in try session.encrypt(plaintext) }
            }
            try encrypted.get()
        } else {
            bytes.withUnsafeBytes { output.append($0) }
        }
        while !output.isEmpty {
            switch socket.send(output.readable) {
            case .bytes(let count):
                output.consume(count)
            case .wouldBlock:
                try wait(Int16(POLLOUT), on: socket, deadline: deadline, abortFD: abortFD)
            case .closed:
                throw .connectionClosed(
                    reason: "the server closed the connection before taking the request",
                    streamWasSent: false
                )
            case .failed(let reason):
                throw .connectionClosed(reason: reason, streamWasSent: false)
            }
        }

        var parser = HTTP1ResponseParser(
            limits: .init(maximumBodyBytes: request.maximumResponseBodyBytes),
            isHeadRequest: request.method == "HEAD"
        )
        var complete = try parser.receive(early) == .complete
        let plaintext = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { plaintext.deallocate() }
        while !complete {
            switch socket.receive(into: scratch) {
            case .bytes(let count):
                guard let session else {
                    complete = try parser.receive(scratch[0..<count]) == .complete
                    continue
                }
                session.feed(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                decrypting: while !complete {
                    switch session.decrypt(into: plaintext) {
                    case .bytes(let decrypted):
                        complete = try parser.receive(plaintext[0..<decrypted]) == .complete
                    case .needsInput:
                        break decrypting
                    case .closed:
                        // close_notify: the server's answer is all there is.
                        try parser.finish()
                        complete = true
                    case .failed(let reason):
                        throw .connectionClosed(reason: "TLS error: \(reason)", streamWasSent: true)
                    }
                }
            case .wouldBlock:
                try wait(Int16(POLLIN), on: socket, deadline: deadline, abortFD: abortFD)
            case .closed:
                // Without TLS's close_notify, a body that runs to the close could have been cut
                // by anyone on the path: only a body whose length was known is complete.
                if session != nil && parser.bodyRunsToClose {
                    throw .connectionClosed(
                        reason: "the server ended the TLS connection without close_notify in a body of unknown length",
                        streamWasSent: true
                    )
                }
                try parser.finish()
                complete = true
            case .failed(let reason):
                throw .connectionClosed(reason: reason, streamWasSent: true)
            }
        }
        return HTTP1Response(status: parser.status, headers: parser.headers, body: parser.body)
    }

    private static func wait(
        _ events: Int16,
        on socket: StreamSocket,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) {
        switch socket.wait(for: events, deadline: deadline, abortFD: abortFD) {
        case .ready: return
        case .timedOut: throw .deadlineExceeded
        case .aborted: throw .cancelled
        }
    }
}

extension Result where Failure == TransportFailure {
    /// The result of `body`, whose typed error becomes the failure.
    fileprivate init(_ body: () throws(TransportFailure) -> Success) {
        do throws(TransportFailure) {
            self = .success(try body())
        } catch {
            self = .failure(error)
        }
    }
}
