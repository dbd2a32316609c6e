import AuthRPC
import Foundation
import TestSupport
import Testing

@Suite("How responses become results (fault server)")
struct ResponseHandlingTests {
    @Test("Trailers-Only: its fields are trailers, headers are empty")
    func trailersOnly() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "TrailersOnly") }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message == "token expired")
        #expect(error?.headers.isEmpty == true)
        #expect(error?.trailers.firstString(forKey: "www-authenticate") == "Bearer error=\"invalid_token\"")
    }

    @Test(
        "without grpc-status the HTTP status is mapped, and the message says what came back",
        arguments: [
            (400, StatusCode.internalError), (401, .unauthenticated), (403, .permissionDenied), (404, .unimplemented),
            (429, .unavailable), (502, .unavailable), (503, .unavailable), (504, .unavailable), (431, .internalError),
            (500, .unknown), (200, .unknown),
        ]
    )
    func httpStatus(status: Int, code: StatusCode) async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions()
        options.initialMetadata.addString("\(status)", forKey: "x-fault-code")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "HTTPStatus", options: options)
        }
        #expect(error?.code == code)
        #expect(error?.message.contains("\(status)") == true)
        #expect(error?.message.contains("text/plain") == true)
    }

    @Test("a non-gRPC content-type is UNKNOWN, naming the content-type")
    func nonGRPCContentType() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "NonGRPCContentType") }
        #expect(error?.code == .unknown)
        #expect(error?.message.contains("text/html") == true)
    }

    @Test("a grpc-status that does not parse is UNKNOWN")
    func badStatus() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "BadGRPCStatus") }
        #expect(error?.code == .unknown)
        #expect(error?.message.contains("abc") == true)
    }

    @Test("a message whose prefix and body are split across many DATA frames is reassembled")
    func splitPrefix() async throws {
        let channel = try await FaultChannel.make()
        let response = try await FaultChannel.call(channel, "SplitPrefix")
        #expect(response.message == (0..<300).map { UInt8($0 % 256) })
    }

    @Test(
        "compressed flag without grpc-encoding, or with an unknown encoding, is INTERNAL",
        arguments: ["CompressedNoEncoding", "UnsupportedEncoding"]
    )
    func badCompression(scenario: String) async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, scenario) }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("grpc-encoding") == true)
    }

    @Test("a gzip-compressed response is decompressed")
    func gzipResponse() async throws {
        let channel = try await FaultChannel.make()
        let message = Array(String(repeating: "zip ", count: 500).utf8)
        let response = try await FaultChannel.call(channel, "GzipResponse", message: message)
        #expect(response.message == message)
    }

    @Test(
        "zero or two messages with OK status break unary cardinality: UNIMPLEMENTED",
        arguments: ["ZeroMessages", "TwoMessages"]
    )
    func cardinality(scenario: String) async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, scenario) }
        #expect(error?.code == .unimplemented)
    }

    @Test("a response over the size limit is RESOURCE_EXHAUSTED, and the stream is reset instead of buffered")
    func oversized() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag, CallOptions(maxResponseMessageBytes: 1 << 20))
        options.initialMetadata.addString("\(8 << 20)", forKey: "x-fault-size")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Oversized", options: options)
        }
        #expect(error?.code == .resourceExhausted)
        let events = try await FaultChannel.events(channel, tag: tag) { FaultChannel.hasReset($0) }
        #expect(FaultChannel.hasReset(events), "\(events)")
    }

    @Test("a large response under a raised limit is accepted")
    func largeUnderLimit() async throws {
        let channel = try await FaultChannel.make()
        let message = [UInt8](repeating: 7, count: 6 << 20)
        let response = try await FaultChannel.call(
            channel,
            "Echo",
            message: message,
            options: CallOptions(maxResponseMessageBytes: 8 << 20)
        )
        #expect(response.message.count == message.count)
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", message: message)
        }
        #expect(error?.code == .resourceExhausted, "the default limit is 4 MiB")
    }

    @Test(
        "RST_STREAM from the server maps per the conformance table",
        arguments: [
            (0, StatusCode.internalError), (1, .internalError), (2, .internalError), (3, .internalError),
            (4, .internalError),
            (6, .internalError), (7, .unavailable), (8, .cancelled), (9, .internalError), (10, .internalError),
            (11, .resourceExhausted), (12, .permissionDenied),
        ]
    )
    func serverReset(errorCode: Int, code: StatusCode) async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions()
        options.initialMetadata.addString("\(errorCode)", forKey: "x-fault-code")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "RstStream", options: options)
        }
        #expect(error?.code == code)
        let cause = error?.cause as? TransportError
        #expect(cause?.kind == .streamReset)
        #expect(cause?.http2ErrorCode == UInt32(errorCode))
    }

    @Test("1xx header blocks are skipped")
    func informational() async throws {
        let channel = try await FaultChannel.make()
        let response = try await FaultChannel.call(channel, "Informational")
        #expect(response.headers.firstString(forKey: "content-type") == "application/grpc")
    }

    @Test("grpc-message is percent-decoded: the special test vector exactly, malformed escapes kept")
    func messages() async throws {
        let channel = try await FaultChannel.make()
        let special = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "SpecialMessage") }
        #expect(special?.message == "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n")
        let malformed = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "MalformedMessage")
        }
        #expect(malformed?.message == "bad %zz escape \u{FFFD} and 100%")
    }

    @Test("response metadata is a multimap: duplicates and order kept, -bin decoded, status details exposed")
    func metadata() async throws {
        let channel = try await FaultChannel.make()
        let response = try await FaultChannel.call(channel, "Metadata")
        #expect(response.headers.strings(forKey: "x-dup") == ["one", "two"])
        #expect(response.headers.firstBinary(forKey: "x-bin-bin") == [0, 1, 2])
        #expect(response.headers.firstBinary(forKey: "x-bin-padded-bin") == [0xFF, 0xFE])
        #expect(response.headers.binaries(forKey: "x-multi-bin") == [[0, 1], [2, 3]])
        #expect(response.trailers.strings(forKey: "x-trailer") == ["t1", "t2"])
        #expect(response.trailers.firstBinary(forKey: "grpc-status-details-bin") != nil)
    }

    @Test("grpc-status-details-bin decodes to google.rpc.Status")
    func statusDetails() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "StatusDetails") }
        #expect(error?.code == .invalidArgument)
        let details = try #require(try error?.decodedStatusDetails())
        #expect(details.code == 3)
        #expect(details.message == "bad arg")
    }

    @Test(
        "a response header list over the channel's limit is RESOURCE_EXHAUSTED naming the limit; a raised limit accepts it"
    )
    func headerListLimit() async throws {
        func flood(_ count: Int) -> CallOptions {
            var options = CallOptions()
            options.initialMetadata.addString("\(count)", forKey: "x-fault-count")
            return options
        }
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "HeaderFlood", options: flood(20_000))
        }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message.contains("16384") == true, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .responseTooLarge)
        await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "HeaderFlood", options: flood(10)) }

        let faults = try await Peers.faultServer()
        let raised = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            maxResponseHeaderListSize: 64 << 10,
            connectionBackoff: .patient
        )
        let response = try await FaultChannel.call(raised, "HeaderFlood", options: flood(10))
        #expect(response.headers.strings(forKey: "x-flood").count == 10)
    }

    @Test(
        "a header list limit that is not a positive 32-bit size is refused when the channel is made",
        arguments: [0, -1, Int(UInt32.max) + 1]
    )
    func badHeaderListLimit(limit: Int) {
        let error = #expect(throws: RPCError.self) {
            try Channel(target: "127.0.0.1:1", transportSecurity: .plaintext, maxResponseHeaderListSize: limit)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("maxResponseHeaderListSize") == true)
    }

    @Test("a connection lost mid-response is UNAVAILABLE; the next call reconnects")
    func connectionLost() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "CloseMidStream") }
        #expect(error?.code == .unavailable)
        #expect(try await FaultChannel.call(channel, "Echo").message == Array("hello".utf8))
    }

    @Test("GOAWAY that leaves a call unprocessed: it is retried transparently on a new connection")
    func goawayRetried() async throws {
        let channel = try await FaultChannel.make("h2c_goaway_after_first")
        // Each connection answers its first stream and sends GOAWAY on its second, so the second
        // call only succeeds because it was retried on a fresh connection.
        for _ in 0..<3 {
            let response = try await FaultChannel.call(channel, "EchoRequest")
            #expect(!response.message.isEmpty)
        }
    }

    @Test("a server that never processes anything ends UNAVAILABLE (bounded transparent retries)")
    func goawayForever() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "GoawayNotProcessed") }
        #expect(error?.code == .unavailable)
        #expect(
            error?.message.contains("GOAWAY") == true || error?.message.contains("closed") == true,
            "\(String(describing: error))"
        )
    }
}
