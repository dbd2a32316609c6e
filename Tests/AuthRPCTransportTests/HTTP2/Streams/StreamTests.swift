import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@Suite("HTTP/2 streams against the fault server")
struct StreamTests {
    @Test("a request leaves as one header block, pseudo-headers first, then the body, byte for byte")
    func requestOnTheWire() async throws {
        let connection = try await FaultPeer.connect()
        let headers = [
            HTTP2HeaderField(name: "x-one", value: "1"), HTTP2HeaderField(name: "x-dup", value: "a"),
            HTTP2HeaderField(name: "x-dup", value: "b"),
        ]
        let message = Array((0..<300).map { UInt8($0 % 251) })
        let response = try await connection.send(FaultPeer.request("EchoRequest", headers: headers, message: message))
        #expect(response.status == 200)
        let echoed = try FaultPeer.json(response)
        let fields = (echoed["headers"] as? [[String]] ?? []).map { "\($0[0])=\($0[1])" }
        #expect(
            Array(fields.prefix(4)) == [
                ":method=POST", ":scheme=http", ":path=/fault.Fault/EchoRequest", ":authority=faults.test",
            ]
        )
        #expect(
            Array(fields.dropFirst(4)) == [
                "content-type=application/grpc", "te=trailers", "x-one=1", "x-dup=a", "x-dup=b",
            ]
        )
        let hex = FaultPeer.frame(message).map { String(format: "%02x", $0) }.joined()
        #expect(echoed["body_hex"] as? String == hex)
        #expect(response.trailers == [HTTP2HeaderField(name: "grpc-status", value: "0")])
        #expect(!response.endedWithHeaders)
    }

    @Test("many concurrent streams share one connection, each getting its own answer")
    func concurrentStreams() async throws {
        let connection = try await FaultPeer.connect()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<300 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    let response = try await connection.send(FaultPeer.request("Echo", message: message))
                    return Array(response.body.dropFirst(5)) == message
                }
            }
            for try await matched in group { #expect(matched) }
        }
    }

    @Test("a burst written in groups, cut by a GOAWAY: the first stream is answered, every other fails retry-safe")
    func burstCutByGoaway() async throws {
        // Far more requests than one write carries (`ConnectionLoop.submitsPerWrite`): the
        // loop writes the first groups while it still submits the rest, and the server's GOAWAY
        // (sent when the second stream's HEADERS arrive) meets requests in every state.
        let connection = try await FaultPeer.connect("h2c_goaway_after_first")
        let outcomes = try await withThrowingTaskGroup(of: Result<Int, TransportFailure>.self) { group in
            for _ in 0..<600 {
                group.addTask {
                    do throws(TransportFailure) {
                        return .success(try await connection.send(FaultPeer.request("EchoRequest")).status)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let answered = outcomes.compactMap { try? $0.get() }
        #expect(answered == [200])
        for case .failure(let failure) in outcomes {
            #expect(failure.isRetrySafe, "\(failure)")
        }
    }

    @Test("the peer's MAX_CONCURRENT_STREAMS (2) is respected: extra streams wait instead of failing")
    func concurrencyLimit() async throws {
        let connection = try await FaultPeer.connect("h2c_limited")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await connection.send(
                        FaultPeer.request("Echo", headers: [HTTP2HeaderField(name: "x-fault-delay-ms", value: "5")])
                    ).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
    }

    @Test("1xx header blocks are skipped; the final response is what comes back")
    func informational() async throws {
        let connection = try await FaultPeer.connect()
        let response = try await connection.send(FaultPeer.request("Informational"))
        #expect(response.status == 200)
        #expect(response.headers.contains(HTTP2HeaderField(name: "content-type", value: "application/grpc")))
        #expect(try FaultPeer.json(response)["headers"] != nil)
    }

    @Test("a response that ends on its header block (Trailers-Only) says so")
    func trailersOnly() async throws {
        let connection = try await FaultPeer.connect()
        let response = try await connection.send(FaultPeer.request("TrailersOnly"))
        #expect(response.endedWithHeaders)
        #expect(response.body.isEmpty && response.trailers.isEmpty)
        #expect(response.headers.contains(HTTP2HeaderField(name: "grpc-status", value: "16")))
    }

    @Test("DATA split into 1-byte and 7-byte frames is reassembled exactly")
    func splitData() async throws {
        let connection = try await FaultPeer.connect()
        let response = try await connection.send(FaultPeer.request("SplitPrefix"))
        #expect(response.body == FaultPeer.frame((0..<300).map { UInt8($0 % 256) }))
    }

    @Test(
        "RST_STREAM from the server fails the stream with its code; only REFUSED_STREAM is retry-safe",
        arguments: [2, 7, 8, 11, 12]
    )
    func serverReset(code: Int) async throws {
        let connection = try await FaultPeer.connect()
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(
                FaultPeer.request("RstStream", headers: [HTTP2HeaderField(name: "x-fault-code", value: "\(code)")])
            )
        }
        #expect(error == .streamReset(errorCode: UInt32(code)))
        #expect(error?.isRetrySafe == (code == 7))
        // The connection survives a stream error.
        #expect(try await connection.send(FaultPeer.request("Echo")).status == 200)
    }

    @Test("GOAWAY below the stream's id: not processed, safe to retry, and the connection takes no new streams")
    func goawayNotProcessed() async throws {
        let connection = try await FaultPeer.connect()
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(FaultPeer.request("GoawayNotProcessed"))
        }
        guard case .goaway(let code, _)? = error else {
            Issue.record("expected GOAWAY, got \(String(describing: error))")
            return
        }
        #expect(code == 0)
        #expect(error?.isRetrySafe == true)
        #expect(!connection.isAcceptingStreams)
        let refused = await #expect(throws: TransportFailure.self) {
            try await connection.send(FaultPeer.request("Echo"))
        }
        #expect(refused?.isRetrySafe == true)
    }

    @Test("GOAWAY at the stream's id: that stream still completes")
    func goawayThenComplete() async throws {
        let connection = try await FaultPeer.connect()
        let response = try await connection.send(FaultPeer.request("GoawayThenComplete"))
        #expect(response.body == FaultPeer.frame(Array("done".utf8)))
        #expect(!connection.isAcceptingStreams)
    }

    @Test("a connection lost mid-response fails the stream as sent (not retry-safe)")
    func closedMidStream() async throws {
        let connection = try await FaultPeer.connect()
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(FaultPeer.request("CloseMidStream"))
        }
        guard case .connectionClosed(_, let sent)? = error else {
            Issue.record("expected connectionClosed, got \(String(describing: error))")
            return
        }
        #expect(sent)
        #expect(error?.isRetrySafe == false)
        #expect(!connection.isAcceptingStreams)
    }

    @Test("cancelling the task resets the stream with CANCEL and frees the caller at once")
    func cancellation() async throws {
        let connection = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        let call = Task { try await connection.send(FaultPeer.request("Hang", tag: tag)) }
        _ = try await FaultPeer.events(tag: tag, on: connection) {
            $0.contains { $0["type"] as? String == "end_stream" }
        }
        call.cancel()
        let result = await call.result
        #expect(throws: TransportFailure.cancelled) { try result.get() }
        let events = try await FaultPeer.events(tag: tag, on: connection) { FaultPeer.hasReset($0, code: 8) }
        #expect(FaultPeer.hasReset(events, code: 8), "\(events)")
    }

    @Test("a task cancelled before sending never opens a stream")
    func cancelledBeforeSend() async throws {
        let connection = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await connection.send(FaultPeer.request("Echo", tag: tag))
        }
        await #expect(throws: TransportFailure.cancelled) { try await call.value }
        let events = try await FaultPeer.events(tag: tag, on: connection)
        #expect(events.isEmpty)
    }

    @Test("a passed deadline resets the stream with CANCEL")
    func deadline() async throws {
        let connection = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        await #expect(throws: TransportFailure.deadlineExceeded) {
            try await connection.send(FaultPeer.request("Hang", tag: tag, deadline: .now + .milliseconds(300)))
        }
        let events = try await FaultPeer.events(tag: tag, on: connection) { FaultPeer.hasReset($0, code: 8) }
        #expect(FaultPeer.hasReset(events, code: 8), "\(events)")
    }

    @Test("a body past the limit resets the stream instead of buffering it")
    func bodyLimit() async throws {
        let connection = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        await #expect(throws: TransportFailure.responseBodyTooLarge(limit: 64 << 10)) {
            try await connection.send(
                FaultPeer.request(
                    "Oversized",
                    tag: tag,
                    headers: [HTTP2HeaderField(name: "x-fault-size", value: "\(8 << 20)")],
                    maxBody: 64 << 10
                )
            )
        }
        let events = try await FaultPeer.events(tag: tag, on: connection) { FaultPeer.hasReset($0, code: 8) }
        #expect(FaultPeer.hasReset(events, code: 8), "\(events)")
    }

    @Test(
        "a body that crosses the limit in its last frame, read together with END_STREAM, still fails: never a truncated response"
    )
    func bodyLimitCrossedAtTheEnd() async throws {
        let connection = try await FaultPeer.connect()
        for size in [100, 20_000, 1 << 20] {
            // Prefix (5 bytes) + `size` bytes: one byte over a limit of size + 4.
            await #expect(throws: TransportFailure.responseBodyTooLarge(limit: size + 4)) {
                try await connection.send(
                    FaultPeer.request(
                        "Oversized",
                        headers: [HTTP2HeaderField(name: "x-fault-size", value: "\(size)")],
                        maxBody: size + 4
                    )
                )
            }
        }
        #expect(try await connection.send(FaultPeer.request("Echo")).status == 200)
    }

    @Test("a header list over the peer's SETTINGS_MAX_HEADER_LIST_SIZE is refused before sending")
    func headerListLimit() async throws {
        let connection = try await FaultPeer.connect("h2c_small_header_list")
        let big = HTTP2HeaderField(name: "x-big", value: String(repeating: "v", count: 2000))
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(FaultPeer.request("Echo", headers: [big]))
        }
        guard case .headerListTooLarge(_, let limit)? = error else {
            Issue.record("expected headerListTooLarge, got \(String(describing: error))")
            return
        }
        #expect(limit == 1024)
        #expect(try await connection.send(FaultPeer.request("Echo")).status == 200)
    }

    @Test("4 MiB and larger bodies go out and come back whole, back to back on one connection")
    func largeBodies() async throws {
        let connection = try await FaultPeer.connect()
        // Sizes around the loop's 4 MiB gathering bound: a body whose last frame lies just past it
        // must still be sent even when the socket takes everything gathered at once.
        for size in [4 << 20, 4 << 20, (4 << 20) - 5, 6 << 20, 4 << 20] {
            let message = [UInt8](repeating: 0x5A, count: size)
            let response = try await connection.send(
                FaultPeer.request("Echo", message: message, deadline: .now + .seconds(20))
            )
            #expect(response.body.count == size + 5)
            // Compared as arrays: a per-byte closure in a debug build would hold a thread of the
            // cooperative pool for seconds (see patternBytes).
            #expect(Array(response.body.dropFirst(5)) == message)
        }
    }

    @Test(
        "a body larger than the gathering bound goes out whole though the server sends nothing until it ends",
        arguments: [1, 16 << 10]
    )
    func bodyPastTheGatheringBound(bound: Int) async throws {
        // The server gives no window back (its 16 MiB stream window covers the body), so no
        // frame arrives while the body goes out: after the socket refuses a write, the loop must
        // keep gathering from nghttp2 by itself once the backlog has gone out.
        let connection = try await FaultPeer.connect { $0.maxUnsentBytes = bound }
        let size = 12 << 20
        let response = try await connection.send(
            FaultPeer.request(
                "QuietSink",
                message: [UInt8](repeating: 0x33, count: size),
                deadline: .now + .seconds(30)
            )
        )
        #expect(String(decoding: response.body.dropFirst(5), as: UTF8.self) == "\(size + 5)")
    }

    @Test("keepalive: PINGs go out while a stream waits, and an unanswered one ends the connection")
    func keepalive() async throws {
        // A generous timeout for the answered PINGs: the fault server shares two cores with the
        // whole suite, and a late acknowledgement is not what this part tests.
        let answered = try await FaultPeer.connect {
            $0.keepaliveInterval = .milliseconds(100)
            $0.keepaliveTimeout = .seconds(10)
        }
        let tag = FaultPeer.newTag()
        let waiting = Task { try await answered.send(FaultPeer.request("Hang", tag: tag)) }
        let events = try await FaultPeer.events(tag: tag, on: answered) {
            $0.filter { $0["type"] as? String == "ping" }.count >= 3
        }
        #expect(events.filter { $0["type"] as? String == "ping" }.count >= 3, "\(events)")
        #expect(answered.isAcceptingStreams, "answered PINGs keep the connection")
        waiting.cancel()

        let silent = try await FaultPeer.connect("h2c_no_ping_ack") {
            $0.keepaliveInterval = .milliseconds(100)
            $0.keepaliveTimeout = .milliseconds(300)
        }
        await #expect(throws: TransportFailure.keepaliveTimeout) { try await silent.send(FaultPeer.request("Hang")) }
        #expect(!silent.isAcceptingStreams)
    }
}
