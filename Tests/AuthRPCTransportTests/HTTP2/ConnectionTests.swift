import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@Suite("Connecting: TCP, TLS, ALPN")
struct ConnectionTests {
    private func tlsConfiguration(
        trustingSandboxCA: Bool,
        serverName: String? = nil
    ) async throws -> HTTP2ConnectionConfiguration {
        let sandbox = try await Peers.sandbox()
        var tls = TLSClientConfiguration()
        if trustingSandboxCA {
            tls.trustsSystemRoots = false
            tls.additionalTrustRootsPEM = [sandbox.caCertificatePEM]
        }
        var configuration = HTTP2ConnectionConfiguration()
        configuration.tls = try TLSContext(tls)
        configuration.tlsServerNameOverride = serverName
        return configuration
    }

    private func connectTLS(
        _ personality: String,
        host: String = "127.0.0.1",
        _ configuration: HTTP2ConnectionConfiguration
    ) async throws -> HTTP2Connection {
        let faults = try await Peers.faultServer()
        return try await HTTP2Connection.connect(
            to: HostAndPort(host: host, port: faults.port(personality)),
            configuration: configuration
        )
    }

    @Test("TLS with the generated CA, verified by DNS name (SNI) and by IP address, negotiates h2")
    func tlsHappyPath() async throws {
        for (host, name) in [("127.0.0.1", "localhost"), ("127.0.0.1", nil as String?), ("localhost", nil)] {
            let configuration = try await tlsConfiguration(trustingSandboxCA: true, serverName: name)
            let connection = try await connectTLS("tls", host: host, configuration)
            let response = try await connection.send(FaultPeer.request("EchoRequest", scheme: "https"))
            let fields = try FaultPeer.json(response)["headers"] as? [[String]] ?? []
            #expect(fields.contains([":scheme", "https"]), "\(host) \(String(describing: name))")
            connection.close()
        }
    }

    @Test("a certificate from an unknown CA fails as untrusted")
    func untrusted() async throws {
        let configuration = try await tlsConfiguration(trustingSandboxCA: false, serverName: "localhost")
        let error = await #expect(throws: TransportFailure.self) { try await connectTLS("tls", configuration) }
        guard case .tls(let failure)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(failure.kind == .untrustedCertificate)
        #expect(error?.description.contains("not trusted") == true)
    }

    @Test("a trusted certificate for another name fails as a hostname mismatch")
    func hostnameMismatch() async throws {
        for name in ["wrong.example", "10.9.8.7"] {
            let configuration = try await tlsConfiguration(trustingSandboxCA: true, serverName: name)
            let error = await #expect(throws: TransportFailure.self) { try await connectTLS("tls", configuration) }
            guard case .tls(let failure)? = error else {
                Issue.record("got \(String(describing: error))")
                return
            }
            #expect(failure.kind == .hostnameMismatch, "\(name)")
            #expect(error?.description.contains("hostname mismatch") == true)
            #expect(error?.description.contains(name) == true)
        }
    }

    @Test("a TLS server that does not select ALPN h2 is refused")
    func noALPN() async throws {
        let configuration = try await tlsConfiguration(trustingSandboxCA: true, serverName: "localhost")
        let error = await #expect(throws: TransportFailure.self) { try await connectTLS("tls_no_alpn", configuration) }
        guard case .tls(let failure)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(failure.kind == .alpnNotNegotiated || failure.kind == .handshakeFailed)
        #expect(error?.description.contains("h2") == true || error?.description.contains("protocol") == true)
    }

    @Test("bad PEM is a clear configuration error")
    func badPEM() {
        var tls = TLSClientConfiguration()
        tls.additionalTrustRootsPEM = ["not a certificate"]
        #expect(throws: TransportFailure.tls(TLSFailure(.invalidConfiguration, "no PEM certificate found"))) {
            try TLSContext(tls)
        }
        var mtls = TLSClientConfiguration()
        mtls.certificateChainPEM = "x"
        #expect(throws: TransportFailure.self) { try TLSContext(mtls) }
    }

    @Test("a refused port fails with 'connection refused', naming the address")
    func refused() async throws {
        let port = Ports.closed()
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                to: HostAndPort(host: "127.0.0.1", port: port),
                configuration: HTTP2ConnectionConfiguration()
            )
        }
        guard case .connectFailed(let target, let reason, let kind)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(target == "127.0.0.1:\(port)")
        #expect(kind == .refused)
        #expect(reason.contains("connection refused"))
        #expect(error?.isRetrySafe == true)
    }

    @Test("an unknown host fails resolution")
    func unknownHost() async {
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                to: HostAndPort(host: "no-such-host.invalid", port: 443),
                configuration: HTTP2ConnectionConfiguration()
            )
        }
        guard case .resolutionFailed(let host, _)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(host == "no-such-host.invalid")
    }

    @Test("h2c to a server that speaks HTTP/1.1 fails the connect, saying so")
    func notHTTP2() async throws {
        let sandbox = try await Peers.sandbox()
        let issuer = URL(string: sandbox.issuer)!
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                to: HostAndPort(host: issuer.host!, port: issuer.port!),
                configuration: HTTP2ConnectionConfiguration()
            )
        }
        guard case .connectFailed(_, let reason, let kind)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(kind == .notHTTP2)
        #expect(reason.contains("HTTP/2") || reason.contains("closed"), "\(reason)")
    }

    @Test("h2c to a server that answers in HTTP/1.1 and keeps the connection open is not HTTP/2, at once")
    func notHTTP2WithoutClose() async throws {
        let server = try RawAnswerServer(answer: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        defer { server.stop() }
        var configuration = HTTP2ConnectionConfiguration()
        configuration.connectTimeout = .seconds(60)
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                to: HostAndPort(host: "127.0.0.1", port: server.port),
                configuration: configuration
            )
        }
        guard case .connectFailed(_, let reason, let kind)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        // Before: nghttp2's GOAWAY for the unreadable "frame" made this a protocol violation.
        #expect(kind == .notHTTP2)
        #expect(reason.contains("did not speak HTTP/2"), "\(reason)")
    }

    @Test("close() fails open streams at once; graceful close lets them finish")
    func closing() async throws {
        let connection = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        let slow = Task {
            try await connection.send(
                FaultPeer.request(
                    "Echo",
                    tag: tag,
                    headers: [HTTP2HeaderField(name: "x-fault-delay-ms", value: "5000")]
                )
            )
        }
        // Closed once the server has the whole request (it answers 5 s later), however late a
        // loaded machine runs the task that sends it.
        _ = try await FaultPeer.events(tag: tag, on: connection) {
            $0.contains { $0["type"] as? String == "end_stream" }
        }
        connection.close(graceful: true)
        // The I/O thread takes the close up on its next turn: a loaded machine can run the
        // caller first, so the flag is waited for rather than read once.
        try await eventually("the gracefully closed connection stops taking streams") {
            !connection.isAcceptingStreams
        }
        #expect(try await slow.value.status == 200)

        let other = try await FaultPeer.connect()
        let hanging = Task { try await other.send(FaultPeer.request("Hang")) }
        try await Task.sleep(for: .milliseconds(50))
        other.close()
        await #expect(throws: TransportFailure.self) { try await hanging.value }
    }
}
