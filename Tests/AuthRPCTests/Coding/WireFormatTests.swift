import AuthRPCSyntax
import AuthRPCTransport
import Testing

@testable import AuthRPC

@Suite("grpc-message percent-decoding")
struct PercentEncodingTests {
    @Test("the conformance test vector decodes exactly, whitespace kept")
    func specialMessage() {
        let wire = "%09%0Atest with whitespace%0D%0Aand Unicode BMP %E2%98%BA and non-BMP %F0%9F%98%88%09%0A"
        #expect(
            PercentEncoding.decodeMessage(wire) == "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"
        )
    }

    @Test(
        "malformed escapes are kept as written; invalid UTF-8 becomes U+FFFD; never fails",
        arguments: [
            ("100%", "100%"),
            ("%zz", "%zz"),
            ("%4", "%4"),
            ("a%2", "a%2"),
            ("%41%42", "AB"),
            ("%E2%98", "\u{FFFD}"),
            ("plain text", "plain text"),
        ]
    )
    func malformed(wire: String, expected: String) {
        #expect(PercentEncoding.decodeMessage(wire) == expected)
    }
}

@Suite("Message framing")
struct FramingTests {
    @Test("a frame is flag, big-endian length, message")
    func frame() {
        #expect(Framing.frame([0xAA, 0xBB], compressed: false) == [0, 0, 0, 0, 2, 0xAA, 0xBB])
        #expect(Framing.frame([], compressed: true) == [1, 0, 0, 0, 0])
        #expect(Framing.frame(Array(repeating: 7, count: 0x010203), compressed: false).prefix(5) == [0, 0, 1, 2, 3])
    }

    @Test("one message is found; zero, two, truncated, oversized and bad flags are told apart")
    func singleMessage() {
        func check(_ body: [UInt8], limit: Int = 100) -> Result<[UInt8], Framing.Problem> {
            Framing.singleMessage(in: body, limit: limit).map { Array($0.bytes) }
        }
        #expect(check([0, 0, 0, 0, 1, 9]) == .success([9]))
        #expect(check([0, 0, 0, 0, 0]) == .success([]))
        #expect(check([]) == .failure(.noMessage))
        #expect(check([0, 0, 0]) == .failure(.truncated(expected: 5, received: 3)))
        #expect(check([0, 0, 0, 0, 3, 1]) == .failure(.truncated(expected: 3, received: 1)))
        #expect(check([0, 0, 0, 0, 1, 9, 0, 0, 0, 0, 1, 8]) == .failure(.moreThanOneMessage))
        #expect(check([0, 0, 0, 1, 0], limit: 255) == .failure(.tooLarge(length: 256, limit: 255)))
        #expect(check([2, 0, 0, 0, 0]) == .failure(.invalidFlag(2)))
    }
}

@Suite("Status codes")
struct StatusCodeTests {
    @Test("grpc-status parses digits 0-16 only")
    func parsing() {
        #expect(StatusCode(grpcStatus: "0") == .ok)
        #expect(StatusCode(grpcStatus: "16") == .unauthenticated)
        #expect(StatusCode(grpcStatus: "007") == .permissionDenied)
        for bad in ["", "17", "-1", "+1", "abc", " 1", "1 ", "0x1", "0016", "99999999999999999999", "1\u{0}", "١"] {
            #expect(StatusCode(grpcStatus: bad) == nil, "\(bad)")
        }
    }

    @Test(
        "HTTP status mapping when grpc-status is absent",
        arguments: [
            (400, StatusCode.internalError), (401, .unauthenticated), (403, .permissionDenied), (404, .unimplemented),
            (429, .unavailable), (502, .unavailable), (503, .unavailable), (504, .unavailable), (431, .internalError),
            (200, .unknown), (500, .unknown), (302, .unknown),
        ]
    )
    func httpMapping(status: Int, code: StatusCode) {
        #expect(ResponseDecoder.httpStatusCode(status) == code)
    }

    @Test(
        "RST_STREAM codes map per the conformance table",
        arguments: [
            (HTTP2ErrorCode.noError, StatusCode.internalError), (HTTP2ErrorCode.protocolError, .internalError),
            (HTTP2ErrorCode.internalError, .internalError), (HTTP2ErrorCode.flowControlError, .internalError),
            (HTTP2ErrorCode.settingsTimeout, .internalError), (HTTP2ErrorCode.frameSizeError, .internalError),
            (HTTP2ErrorCode.compressionError, .internalError), (HTTP2ErrorCode.connectError, .internalError),
            (HTTP2ErrorCode.refusedStream, .unavailable), (HTTP2ErrorCode.cancel, .cancelled),
            (HTTP2ErrorCode.enhanceYourCalm, .resourceExhausted),
            (HTTP2ErrorCode.inadequateSecurity, .permissionDenied),
        ]
    )
    func resetMapping(errorCode: UInt32, code: StatusCode) {
        #expect(StatusCode(transportFailure: .streamReset(errorCode: errorCode)) == code)
    }

    @Test("a CANCEL that arrives after the deadline reads as DEADLINE_EXCEEDED")
    func cancelAfterDeadline() {
        let past = ContinuousClock.now - .seconds(1)
        #expect(
            RPCError(transportFailure: .streamReset(errorCode: HTTP2ErrorCode.cancel), deadline: past).code
                == .deadlineExceeded
        )
        #expect(
            RPCError(transportFailure: .streamReset(errorCode: HTTP2ErrorCode.cancel), deadline: .now + .seconds(60))
                .code == .cancelled
        )
    }
}
