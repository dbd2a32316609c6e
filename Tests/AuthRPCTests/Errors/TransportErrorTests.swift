import AuthRPCTransport
import Testing

@testable import AuthRPC

@Suite("TransportError and its kinds")
struct TransportErrorTests {
    /// Every kind, with the name it prints.
    static let kinds: [(TransportError.Kind, String)] = [
        (.hostNotFound, "hostNotFound"), (.connectionRefused, "connectionRefused"),
        (.connectTimeout, "connectTimeout"), (.networkUnreachable, "networkUnreachable"),
        (.proxyFailed, "proxyFailed"), (.invalidAddress, "invalidAddress"),
        (.untrustedCertificate, "untrustedCertificate"), (.hostnameMismatch, "hostnameMismatch"),
        (.certificateExpired, "certificateExpired"), (.http2NotSupported, "http2NotSupported"),
        (.tlsHandshakeFailed, "tlsHandshakeFailed"), (.invalidTLSConfiguration, "invalidTLSConfiguration"),
        (.connectionClosed, "connectionClosed"), (.goaway, "goaway"), (.streamReset, "streamReset"),
        (.keepaliveTimeout, "keepaliveTimeout"), (.responseTooLarge, "responseTooLarge"),
        (.headersTooLarge, "headersTooLarge"), (.protocolViolation, "protocolViolation"), (.other, "other"),
    ]

    @Test("each kind equals only itself, hashes apart, and prints its name")
    func kindsAreDistinct() {
        for (index, (kind, name)) in Self.kinds.enumerated() {
            #expect(kind.description == name)
            for (otherIndex, (other, _)) in Self.kinds.enumerated() {
                #expect((kind == other) == (index == otherIndex), "\(kind) vs \(other)")
            }
        }
        #expect(Set(Self.kinds.map(\.0)).count == Self.kinds.count)
    }

    @Test("every HTTP/2 failure maps to the kind it always did; only a stream reset carries an HTTP/2 error code")
    func mapsTransportFailures() {
        let tls = { (kind: TLSFailure.Kind) in TransportFailure.tls(TLSFailure(kind, "detail")) }
        let connect = { (kind: ConnectFailureKind) in
            TransportFailure.connectFailed(target: "example.com:443", reason: "reason", kind: kind)
        }
        let cases: [(TransportFailure, TransportError.Kind)] = [
            (.resolutionFailed(host: "example.com", reason: "no such host"), .hostNotFound),
            (connect(.refused), .connectionRefused), (connect(.timedOut), .connectTimeout),
            (connect(.unreachable), .networkUnreachable), (connect(.notHTTP2), .http2NotSupported),
            (connect(.abandoned), .connectionClosed), (connect(.other), .other),
            (connect(.protocolViolation), .protocolViolation),
            (.proxyFailed(proxy: "http://proxy:3128", target: "example.com:443", reason: "407"), .proxyFailed),
            (.invalidAddress("too long"), .invalidAddress), (.invalidRequest("bad header"), .other),
            (tls(.untrustedCertificate), .untrustedCertificate), (tls(.hostnameMismatch), .hostnameMismatch),
            (tls(.certificateExpired), .certificateExpired), (tls(.alpnNotNegotiated), .http2NotSupported),
            (tls(.handshakeFailed), .tlsHandshakeFailed), (tls(.invalidConfiguration), .invalidTLSConfiguration),
            (.connectionClosed(reason: "closed", streamWasSent: true), .connectionClosed),
            (.goaway(errorCode: 0, debugData: ""), .goaway), (.keepaliveTimeout, .keepaliveTimeout),
            (.responseBodyTooLarge(limit: 1), .responseTooLarge),
            (.responseHeaderListTooLarge(limit: 1), .responseTooLarge),
            (.headerListTooLarge(size: 2, limit: 1), .headersTooLarge), (.protocolError("bad"), .protocolViolation),
            (.deadlineExceeded, .other), (.cancelled, .other),
        ]
        for (failure, kind) in cases {
            let error = TransportError(failure)
            #expect(error.kind == kind, "\(failure)")
            #expect(error.http2ErrorCode == nil, "\(failure)")
            #expect(error.message == failure.description)
        }
        let reset = TransportError(TransportFailure.streamReset(errorCode: 7))
        #expect(reset.kind == .streamReset)
        #expect(reset.http2ErrorCode == 7)
        #expect(reset.description == TransportFailure.streamReset(errorCode: 7).description)
    }

    @Test("errors are equal when kind, message and HTTP/2 error code all are")
    func equality() {
        let refused = TransportError(kind: .streamReset, message: "reset", http2ErrorCode: 7)
        #expect(refused == TransportError(kind: .streamReset, message: "reset", http2ErrorCode: 7))
        #expect(refused != TransportError(kind: .streamReset, message: "reset", http2ErrorCode: 8))
        #expect(refused != TransportError(kind: .streamReset, message: "reset"))
        #expect(refused != TransportError(kind: .goaway, message: "reset", http2ErrorCode: 7))
        #expect(TransportError(kind: .other, message: "x").http2ErrorCode == nil)
        #expect(Set([refused, refused, TransportError(kind: .other, message: "reset")]).count == 2)
    }
}
