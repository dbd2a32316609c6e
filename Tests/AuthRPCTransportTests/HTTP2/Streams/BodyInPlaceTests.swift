import TestSupport
import Testing

@testable import AuthRPCTransport

@Suite("A large response's DATA is read straight into its body")
struct BodyInPlaceTests {
    /// A fresh stream whose body holds `body`, with `limit` as the call's response limit.
    private static func stream(holding body: [UInt8], limit: Int = .max) -> HTTP2Stream {
        let stream = HTTP2Stream(
            request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], maxResponseBodyBytes: limit)
        )
        stream.id = 1
        var spare: [UInt8] = []
        var reservations = BodyReservations(allowance: 0)
        body.withUnsafeBytes { stream.appendBody($0, spare: &spare, reservations: &reservations) }
        return stream
    }

    /// `stream`'s room in place for a frame with `frameLeft` payload bytes still to come, on a
    /// connection that grants no growth ahead unless `reservations` says otherwise.
    private static func room(
        _ stream: HTTP2Stream,
        frameLeft: Int,
        reservations: inout BodyReservations
    ) -> Int {
        stream.roomInPlace(frameLeft: frameLeft, minimum: minimum, reservations: &reservations)
    }

    private static func room(_ stream: HTTP2Stream, frameLeft: Int) -> Int {
        var none = BodyReservations(allowance: 0)
        return room(stream, frameLeft: frameLeft, reservations: &none)
    }

    private static func prefix(declaring declared: Int) -> [UInt8] {
        [
            0, UInt8(declared >> 24 & 0xff), UInt8(declared >> 16 & 0xff), UInt8(declared >> 8 & 0xff),
            UInt8(declared & 0xff),
        ]
    }

    private static let minimum = ConnectionLoop.inPlaceMinimum

    /// A request for a fault-server scenario that gives up after a minute rather than hang.
    private static func request(_ scenario: String, tag: String? = nil, message: [UInt8] = [1]) -> HTTP2Request {
        FaultPeer.request(scenario, tag: tag, message: message, deadline: .now + .seconds(60))
    }

    @Test("room in place needs the message prefix, and stays within the declared size, the limit and the frame")
    func roomIsBounded() {
        // No prefix yet: nothing to size the body by.
        #expect(Self.room(Self.stream(holding: [0, 0, 1]), frameLeft: 1 << 20) == 0)
        // 100,000 bytes declared, 30,005 here: the room is at most the 69,995 still to come.
        let declared = Self.stream(holding: Self.prefix(declaring: 99_995) + [UInt8](repeating: 1, count: 30_000))
        let room = Self.room(declared, frameLeft: 1 << 20)
        #expect(room >= Self.minimum && room <= 69_995, "room \(room)")
        // A frame with less than the minimum left is read the usual way.
        #expect(Self.room(declared, frameLeft: Self.minimum - 1) == 0)
        // A declared size past the call's limit is never read into.
        let limited = Self.stream(holding: Self.prefix(declaring: 400_000) + [1, 2, 3], limit: 300_000)
        #expect(Self.room(limited, frameLeft: 1 << 20) == 0)
        // A body that already holds the declared size takes nothing more in place.
        let whole = Self.stream(holding: Self.prefix(declaring: 20_000) + [UInt8](repeating: 2, count: 20_000))
        #expect(Self.room(whole, frameLeft: 1 << 20) == 0)
    }

    @Test("without a grant, room in place grows the body to no more than four times the bytes received")
    func growthIsBounded() {
        // The server declares 16 MiB and announces a 256 KiB frame, but 40 KiB have arrived.
        let received = Self.prefix(declaring: 16 << 20) + [UInt8](repeating: 7, count: 40 << 10)
        let stream = Self.stream(holding: received)
        let room = Self.room(stream, frameLeft: 256 << 10)
        #expect(room >= Self.minimum)
        #expect(stream.body.capacity <= 4 * received.count + 4096, "capacity \(stream.body.capacity)")
        #expect(stream.body == received)
    }

    @Test("with the connection's grant, room in place grows the body to its declared size at once")
    func grantedGrowth() {
        let received = Self.prefix(declaring: 1 << 20) + [UInt8](repeating: 7, count: 40 << 10)
        let stream = Self.stream(holding: received)
        var reservations = BodyReservations()
        let room = Self.room(stream, frameLeft: 2 << 20, reservations: &reservations)
        // The rest of the message, which the frame covers, fits where it will stay.
        #expect(room == (1 << 20) + 5 - received.count)
        #expect(stream.body.capacity >= (1 << 20) + 5, "capacity \(stream.body.capacity)")
        #expect(reservations.reservedBytes == (1 << 20) + 5)
        #expect(stream.body == received)
    }

    @Test("bytes read in place join the body; those withdrawn leave it as it was")
    func placeAndWithdraw() throws {
        guard #available(macOS 26, *) else { return }
        let start = Self.prefix(declaring: 1 << 20) + [UInt8](repeating: 3, count: 64 << 10)
        let stream = Self.stream(holding: start)
        let room = Self.room(stream, frameLeft: 1 << 20)
        try #require(room >= Self.minimum)
        let written = patternBytes(count: room, step: 11)
        stream.receiveInPlace(count: room) { target in
            #expect(target.count == room)
            written.prefix(room / 2).withUnsafeBytes { target.copyMemory(from: $0) }
            return room / 2
        }
        #expect(stream.body == start + written.prefix(room / 2))
        stream.withdrawPlaced(100)
        #expect(stream.body == start + written.prefix(room / 2 - 100))
    }

    @Test("the client announces frames of 256 KiB (SETTINGS_MAX_FRAME_SIZE)")
    func announcesLargeFrames() async throws {
        let connection = try await FaultPeer.connect()
        let settings = try FaultPeer.json(try await connection.send(Self.request("ClientSettings")))
        #expect(settings["max_frame_size"] as? Int == 256 << 10, "\(settings)")
    }

    @Test("a 3 MiB response from a real HTTP/2 peer is read into its body in place, byte for byte")
    func largeResponseInPlace() async throws {
        let connection = try await FaultPeer.connect()
        let message = patternBytes(count: 3 << 20, step: 7)
        let response = try await connection.send(Self.request("Echo", message: message))
        #expect(response.body == FaultPeer.frame(message))
        let footprint = await connection.footprint()
        // Most of it (h2 writes frames of 256 KiB, as the client allows): not the first read,
        // the start of each frame, nor what arrives while the body still grows. On a quiet
        // machine 2.1 to 2.9 MiB; how reads fall depends on timing, so a sixth at least.
        #expect(footprint.bytesReadInPlace >= 512 << 10, "\(footprint)")
        #expect(footprint.streams == 0 && footprint.retainedBytes == 0, "\(footprint)")
    }

    @Test("over TLS, a 3 MiB response is decrypted into its body in place, byte for byte")
    func largeResponseInPlaceOverTLS() async throws {
        let sandbox = try await Peers.sandbox()
        var tls = TLSClientConfiguration()
        tls.trustsSystemRoots = false
        tls.additionalTrustRootsPEM = [sandbox.caCertificatePEM]
        let context = try TLSContext(tls)
        let connection = try await FaultPeer.connect("tls") { $0.tls = context }
        let message = patternBytes(count: 3 << 20, step: 9)
        let response = try await connection.send(
            FaultPeer.request("Echo", message: message, scheme: "https", deadline: .now + .seconds(60))
        )
        #expect(response.body == FaultPeer.frame(message))
        let footprint = await connection.footprint()
        // A record at a time: each frame's start comes with its header, the rest in place (a
        // sixth at least, as for h2c).
        #expect(footprint.bytesReadInPlace >= 512 << 10, "\(footprint)")
    }

    @Test("large responses whose frames interleave on one connection each arrive whole")
    func interleavedResponses() async throws {
        let connection = try await FaultPeer.connect()
        let messages = (0..<3).map { seed in
            patternBytes(count: (3 << 20) + seed * 1000, step: seed + 3)
        }
        // The peer frames its streams in turns, a frame each: their 256 KiB frames alternate.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for message in messages {
                group.addTask {
                    try await connection.send(Self.request("Echo", message: message)).body
                        == FaultPeer.frame(message)
                }
            }
            for try await arrivedWhole in group { #expect(arrivedWhole) }
        }
        let footprint = await connection.footprint()
        // How much depends on how the streams' frames fall into reads: 1.8 to 8.3 of the 9 MiB
        // on a quiet machine.
        #expect(footprint.bytesReadInPlace > 0, "\(footprint)")
    }

    @Test("a stream that ends with a frame read in place is let go as the feed ends; the next calls reuse it")
    func streamEndingInPlace() async throws {
        let connection = try await FaultPeer.connect()
        // END_STREAM on the last DATA frame: nghttp2 closes the stream inside the feed of the
        // bytes read into its body, and the stream is left as a spare for the next call. The
        // framed message is four whole frames of 256 KiB, so the last one is read in place.
        for seed in 0..<4 {
            let message = patternBytes(count: (1 << 20) - 5, step: seed + 1)
            let response = try await connection.send(Self.request("EchoEndingInData", message: message))
            #expect(response.body == FaultPeer.frame(message))
            #expect(!response.endedWithHeaders)
        }
        let footprint = await connection.footprint()
        #expect(footprint.streams == 0 && footprint.retainedBytes == 0, "\(footprint)")
        #expect(footprint.bytesReadInPlace > 0, "\(footprint)")
    }

    @Test("padded DATA frames are read the usual way, and arrive whole")
    func paddedFrames() async throws {
        let connection = try await FaultPeer.connect()
        let message = patternBytes(count: 1 << 20, step: 5)
        let response = try await connection.send(Self.request("PaddedEcho", message: message))
        #expect(response.body == FaultPeer.frame(message))
        #expect(await connection.footprint().bytesReadInPlace == 0)
    }

    @Test("DATA read in place that the HTTP/2 layer refuses leaves the body, the stream and the connection sound")
    func refusedDataIsWithdrawn() async throws {
        let connection = try await FaultPeer.connect()
        // Asked on another connection: until the frame is all written, anything the server sent
        // on the first would land inside it.
        let observer = try await FaultPeer.connect()
        let tag = FaultPeer.newTag()
        await #expect(throws: TransportFailure.self) {
            try await connection.send(Self.request("ContentLengthOverrun", tag: tag))
        }
        // The client reset the stream itself (PROTOCOL_ERROR); the server wrote the whole frame.
        let events = try await FaultPeer.events(tag: tag, on: observer) { events in
            FaultPeer.hasReset(events, code: 1) && events.contains { $0["type"] as? String == "frame_written" }
        }
        #expect(FaultPeer.hasReset(events, code: 1), "\(events)")
        // The stream left nothing behind. Only bytes nghttp2 took count as read in place, so
        // fewer than the content-length (some may have been, when the rest came in pieces).
        let refused = await connection.footprint()
        #expect(refused.streams == 0 && refused.deadlines == 0 && refused.retainedBytes == 0, "\(refused)")
        #expect(refused.bytesReadInPlace < 100_000, "\(refused)")
        // The connection goes on, and a large response after it is read in place, whole.
        let message = patternBytes(count: 2 << 20, step: 3)
        #expect(try await connection.send(Self.request("Echo", message: message)).body == FaultPeer.frame(message))
        let footprint = await connection.footprint()
        #expect(footprint.streams == 0 && footprint.retainedBytes == 0, "\(footprint)")
        #expect(footprint.bytesReadInPlace > 0, "\(footprint)")
    }
}
