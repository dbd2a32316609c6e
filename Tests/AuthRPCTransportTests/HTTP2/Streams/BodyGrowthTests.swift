import TestSupport
import Testing

@testable import AuthRPCTransport

@Suite("A response body grows to the size its message prefix declares, within bounds")
struct BodyGrowthTests {
    /// A message's bytes behind a prefix that declares `declared` payload bytes.
    private static func prefix(declaring declared: Int) -> [UInt8] {
        [
            0, UInt8(declared >> 24 & 0xff), UInt8(declared >> 16 & 0xff), UInt8(declared >> 8 & 0xff),
            UInt8(declared & 0xff),
        ]
    }

    /// `body` appended to a fresh stream (id 1) in chunks of `chunk` bytes, as DATA frames bring
    /// it, with `spare` as the connection's kept body and `reservations` as its grants.
    private static func received(
        _ body: [UInt8],
        chunk: Int = 16_384,
        limit: Int = .max,
        spare: inout [UInt8],
        reservations: inout BodyReservations
    ) -> HTTP2Stream {
        let stream = HTTP2Stream(
            request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], maxResponseBodyBytes: limit)
        )
        stream.id = 1
        var start = 0
        while start < body.count {
            let end = min(start + chunk, body.count)
            body[start..<end].withUnsafeBytes { stream.appendBody($0, spare: &spare, reservations: &reservations) }
            start = end
        }
        return stream
    }

    /// `body` received with no spare body, on a connection that grants no growth ahead
    /// (`allowance` 0) unless told.
    private static func received(
        _ body: [UInt8],
        chunk: Int = 16_384,
        limit: Int = .max,
        allowance: Int = 0
    ) -> HTTP2Stream {
        var spare: [UInt8] = []
        var reservations = BodyReservations(allowance: allowance)
        return received(body, chunk: chunk, limit: limit, spare: &spare, reservations: &reservations)
    }

    /// `body` received with `spare` as the connection's kept body, and no growth granted ahead.
    private static func received(_ body: [UInt8], spare: inout [UInt8]) -> HTTP2Stream {
        var reservations = BodyReservations(allowance: 0)
        return received(body, spare: &spare, reservations: &reservations)
    }

    /// Where an array's elements start.
    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("without a grant, a 3 MiB message ends in a buffer of its own size, with every byte in place")
    func largeMessageEndsInItsOwnSize() {
        let payload = patternBytes(count: 3 << 20, step: 31)
        let body = Self.prefix(declaring: payload.count) + payload
        let stream = Self.received(body)
        #expect(stream.body == body)
        // Doubling alone ends in a 4 MiB buffer for these 3 MiB and 5 bytes.
        #expect(stream.body.capacity < body.count + 4096, "capacity \(stream.body.capacity)")
    }

    @Test("without a grant, a prefix that declares far more than arrives grows the body no faster than doubling")
    func declaredButNotSentHoldsLittle() {
        // The server declares 16 MiB, sends 64 KiB and stops.
        let body = Self.prefix(declaring: 16 << 20) + [UInt8](repeating: 7, count: 64 << 10)
        let stream = Self.received(body)
        #expect(stream.body == body)
        // Doubling's bound, plus the allocator's page rounding of a large block.
        #expect(stream.body.capacity <= 2 * body.count + 4096, "capacity \(stream.body.capacity)")
    }

    @Test("a declared size past the response limit is not reserved")
    func declaredPastTheLimitIsNotReserved() {
        let limit = 300_000
        // Within a quarter of the declared size, but the limit would cut it anyway.
        let body = Self.prefix(declaring: 400_000) + [UInt8](repeating: 1, count: 260_000)
        let stream = Self.received(body, limit: limit, allowance: BodyReservations.allowance)
        #expect(stream.body.capacity < limit, "capacity \(stream.body.capacity)")
    }

    @Test("bodies that are not one message, or a prefix cut across chunks, arrive unchanged")
    func otherBodiesArriveUnchanged() {
        // Two messages: the first prefix declares less than arrives.
        let two =
            Self.prefix(declaring: 3) + [1, 2, 3] + Self.prefix(declaring: 70_000)
            + [UInt8](repeating: 9, count: 70_000)
        #expect(Self.received(two, chunk: 1000).body == two)
        // The prefix split into one-byte chunks, then the payload.
        let payload = [UInt8](repeating: 5, count: 50_000)
        let one = Self.prefix(declaring: payload.count) + payload
        let stream = Self.received(one, chunk: 1)
        #expect(stream.body == one)
        #expect(stream.body.capacity < one.count + 4096, "capacity \(stream.body.capacity)")
    }

    @Test("with the connection's grant, a 3 MiB message has its own size from the first chunk and is never moved")
    func grantedMessageIsNeverMoved() {
        let payload = patternBytes(count: 3 << 20, step: 29)
        let body = Self.prefix(declaring: payload.count) + payload
        let stream = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        stream.id = 5
        var spare: [UInt8] = []
        var reservations = BodyReservations()
        var storage: Set<UInt> = []
        var start = 0
        while start < body.count {
            let end = min(start + 16_384, body.count)
            body[start..<end].withUnsafeBytes { stream.appendBody($0, spare: &spare, reservations: &reservations) }
            storage.insert(Self.address(stream.body))
            start = end
        }
        #expect(stream.body == body)
        #expect(storage.count == 1, "the body moved \(storage.count - 1) times")
        #expect(stream.body.capacity < body.count + 4096, "capacity \(stream.body.capacity)")
        #expect(reservations.reservedBytes == body.count)
    }

    @Test("past the connection's allowance a body grows a quarter at a time; a released grant serves the next")
    func allowanceBoundsGrants() {
        var spare: [UInt8] = []
        var reservations = BodyReservations()
        // The first declares the whole allowance, less the prefix, and sends 1 KiB of it.
        let first = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        first.id = 1
        let promise = Self.prefix(declaring: BodyReservations.allowance - 5) + [UInt8](repeating: 1, count: 1024)
        promise.withUnsafeBytes { first.appendBody($0, spare: &spare, reservations: &reservations) }
        #expect(first.body.capacity >= BodyReservations.allowance)
        #expect(reservations.reservedBytes == BodyReservations.allowance)
        // The second's promise finds no allowance left: no more than doubling's growth.
        let second = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        second.id = 3
        let other = Self.prefix(declaring: 1 << 20) + [UInt8](repeating: 2, count: 1024)
        other.withUnsafeBytes { second.appendBody($0, spare: &spare, reservations: &reservations) }
        #expect(second.body == other)
        #expect(second.body.capacity <= 2 * other.count + 4096, "capacity \(second.body.capacity)")
        #expect(reservations.reservedBytes == BodyReservations.allowance)
        // The first stream closes: a third is granted its size.
        reservations.release(1)
        let third = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        third.id = 5
        other.withUnsafeBytes { third.appendBody($0, spare: &spare, reservations: &reservations) }
        #expect(third.body.capacity >= (1 << 20) + 5)
        #expect(reservations.reservedBytes == (1 << 20) + 5)
    }

    @Test("a body that fits the spare grows in its storage from the first chunk, and the spare is left empty")
    func bodyTakesTheSpareOver() {
        let payload = patternBytes(count: 1 << 20, step: 13)
        let body = Self.prefix(declaring: payload.count) + payload
        var spare = [UInt8](repeating: 0xee, count: (1 << 20) + 100)
        let storage = Self.address(spare)
        let stream = Self.received(body, spare: &spare)
        #expect(stream.body == body)
        #expect(Self.address(stream.body) == storage)
        #expect(spare.isEmpty && spare.capacity == 0)
    }

    @Test("a spare whose bytes someone still holds is copied on write: their bytes stay as they were")
    func heldSpareIsNeverWritten() {
        let old = [UInt8](repeating: 0xab, count: 1 << 20)
        var spare = old
        let payload = [UInt8](repeating: 0x11, count: (1 << 20) - 5)
        let body = Self.prefix(declaring: payload.count) + payload
        let stream = Self.received(body, spare: &spare)
        #expect(stream.body == body)
        #expect(old.allSatisfy { $0 == 0xab })
        #expect(Self.address(stream.body) != Self.address(old))
    }

    @Test("a spare too small, or more than twice the declared size, is left for another body")
    func spareThatDoesNotFitStays() {
        let small = Self.prefix(declaring: 200_000) + [UInt8](repeating: 3, count: 200_000)
        var large = [UInt8](repeating: 0, count: 1 << 20)
        let largeStorage = Self.address(large)
        #expect(Self.received(small, spare: &large).body == small)
        #expect(Self.address(large) == largeStorage && large.count == 1 << 20)
        var tooSmall = [UInt8](repeating: 0, count: 100_000)
        let tooSmallStorage = Self.address(tooSmall)
        #expect(Self.received(small, spare: &tooSmall).body == small)
        #expect(Self.address(tooSmall) == tooSmallStorage && tooSmall.count == 100_000)
    }

    @Test("a 3 MiB message echoed by a real HTTP/2 peer arrives whole, in a buffer of its own size")
    func largeEchoFromPeer() async throws {
        let connection = try await FaultPeer.connect()
        let message = patternBytes(count: 3 << 20, step: 7)
        let response = try await connection.send(FaultPeer.request("Echo", message: message))
        #expect(response.status == 200)
        #expect(response.body == FaultPeer.frame(message))
        #expect(response.body.capacity < response.body.count + 4096, "capacity \(response.body.capacity)")
    }

    @Test("twelve streams of a real peer that declare 4 MiB and stall get the allowance at most, back at their end")
    func stalledPromisesAreBounded() async throws {
        let connection = try await FaultPeer.connect()
        let calls = (0..<12).map { _ in
            Task { try await connection.send(FaultPeer.request("DeclareAndStall", message: [])) }
        }
        // Each stream's DATA (the prefix and 1 KiB) has arrived once the streams hold 12 x 1029
        // bytes of body (their requests, five bytes each, are sent and let go).
        try await eventually("every stream's first DATA arrives") {
            let footprint = await connection.footprint()
            return footprint.streams == 12 && footprint.retainedBytes >= 12 * 1029
        }
        let stalled = await connection.footprint()
        // Four of the promises (4 MiB each) fill the 16 MiB allowance; the other eight hold 1 KiB
        // bodies that grow a quarter at a time.
        #expect(stalled.bytesReservedAhead == 4 * (4 << 20), "\(stalled)")
        for call in calls { call.cancel() }
        for call in calls {
            await #expect(throws: TransportFailure.cancelled) { try await call.value }
        }
        try await eventually("the cancelled streams close") { await connection.footprint().streams == 0 }
        #expect(await connection.footprint().bytesReservedAhead == 0)
        // The connection goes on: a 3 MiB answer is granted its size and arrives whole.
        let message = patternBytes(count: 3 << 20, step: 17)
        let response = try await connection.send(FaultPeer.request("Echo", message: message))
        #expect(response.body == FaultPeer.frame(message))
        #expect(response.body.capacity < response.body.count + 4096, "capacity \(response.body.capacity)")
        #expect(await connection.footprint().bytesReservedAhead == 0)
    }
}
