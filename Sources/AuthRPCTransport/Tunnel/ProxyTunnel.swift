#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a tunnel through an HTTP proxy: `CONNECT host:port HTTP/1.1` with `Host` (and the
/// proxy's own credentials, if any), then the proxy's answer, read with ``ProxyConnectAnswer``'s
/// bounds and the connection's deadline, so neither garbage, an endless header nor a trickle of
/// bytes outlasts the connect timeout.
enum ProxyTunnel {
    /// Asks the proxy at the other end of `socket` for a tunnel to `target`.
    ///
    /// - Returns: What the proxy sent after its answer: the first bytes from the server, through
    ///   the tunnel (an h2c server's SETTINGS may come in the same read as the proxy's answer).
    /// - Throws: ``TransportFailure/proxyFailed(proxy:target:reason:)`` naming what the proxy said (or
    ///   did not say) when the tunnel is not open by `deadline`;
    ///   ``TransportFailure/connectFailed(target:reason:kind:)`` (abandoned) when `abortFD` fires.
    static func open(
        over socket: StreamSocket,
        to target: HostAndPort,
        proxy: ProxyServer,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) -> [UInt8] {
        func failure(_ reason: String) -> TransportFailure {
            .proxyFailed(proxy: proxy.description, target: target.description, reason: reason)
        }
        func wait(_ events: Int16, _ doing: @autoclosure () -> String) throws(TransportFailure) {
            switch socket.wait(for: events, deadline: deadline, abortFD: abortFD) {
            case .ready:
                return
            case .timedOut:
                throw failure("timed out \(doing())")
            case .aborted:
                throw .connectFailed(
                    target: "\(target) via \(proxy)",
                    reason: "connection attempt abandoned",
                    kind: .abandoned
                )
            }
        }

        guard let request = request(for: target, authorization: proxy.authorization) else {
            throw failure("the target's host or the proxy credentials hold bytes an HTTP request line cannot carry")
        }
        var sent = 0
        while sent < request.count {
            let result = request.withUnsafeBytes { socket.send(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            switch result {
            case .bytes(let count):
                sent += count
            case .wouldBlock:
                try wait(Int16(POLLOUT), "sending CONNECT")
            case .closed:
                throw failure("the proxy closed the connection before taking the CONNECT request")
            case .failed(let reason):
                throw failure("sending CONNECT failed: \(reason)")
            }
        }

        var answer = ProxyConnectAnswer()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
            let outcome: ProxyConnectAnswer.Outcome
            switch result {
            case .bytes(let count):
                outcome = answer.receive(buffer[0..<count])
            case .wouldBlock:
                try wait(Int16(POLLIN), "waiting for the proxy's answer to CONNECT\(heard(answer))")
                continue
            case .closed:
                throw failure("the proxy closed the connection before answering CONNECT\(heard(answer))")
            case .failed(let reason):
                throw failure("reading the proxy's answer failed (\(reason))\(heard(answer))")
            }
            switch outcome {
            case .needsMore:
                continue
            case .established(let tunnelStart):
                return Array(answer.received[tunnelStart...])
            case .refused(let status, let statusLine):
                // 407 is the standard answer; tinyproxy answers wrong credentials with 401.
                let hint =
                    status == 407 || status == 401
                    ? (proxy.authorization == nil
                        ? " (the proxy wants credentials: put user:password@ in the proxy URL)"
                        : " (the proxy did not accept the credentials in the proxy URL)")
                    : ""
                throw failure("the proxy refused CONNECT: \(statusLine)\(hint)")
            case .malformed(let reason):
                throw failure(reason)
            }
        }
    }

    /// What the proxy sent so far, for a message about an answer that never completed.
    private static func heard(_ answer: ProxyConnectAnswer) -> String {
        answer.received.isEmpty
            ? " (nothing received)"
            : " (received \(answer.received.count) bytes: '\(Printable.bytes(answer.received, limit: 120))')"
    }

    /// The request, or nil when the authority or the credentials would not stay one line each.
    static func request(for target: HostAndPort, authorization: String?) -> [UInt8]? {
        let authority = target.description
        guard isFieldText(authority), authority.utf8.allSatisfy({ $0 != UInt8(ascii: " ") }) else { return nil }
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization {
            guard isFieldText(authorization) else { return nil }
            text += "Proxy-Authorization: \(authorization)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Visible ASCII and spaces only: nothing that could end a line or a field.
    private static func isFieldText(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
