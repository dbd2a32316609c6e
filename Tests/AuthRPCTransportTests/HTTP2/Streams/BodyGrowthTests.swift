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

    /// `body` appended to a fresh stream in chunks of `chunk` bytes, as DATA frames bring it,
    /// with `spare` as the connection's kept body.
    private static func received(
        _ body: [UInt8],
        chunk: Int = 16_384,
        limit: Int = .max,
        spare: inout [UInt8]
    ) -> HTTP2Stream {
        let stream = HTTP2Stream(
            request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], maxResponseBodyBytes: limit)
        )
        var start = 0
        while start < body.count {
            let end = min(start + chunk, body.count)
            body[start..<end].withUnsafeBytes { stream.appendBody($0, spare: &spare) }
            start = end
        }
        return stream
    }

    /// `body` received with no spare body.
    private static func received(_ body: [UInt8], chunk: Int = 16_384, limit: Int = .max) -> HTTP2Stream {
        var spare: [UInt8] = []
        return received(body, chunk: chunk, limit: limit, spare: &spare)
    }

    /// Where an array's elements start.
    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("a 3 MiB message ends in a buffer of its own size, with every byte in place")
    func largeMessageEndsInItsOwnSize() {
        let payload = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let body = Self.prefix(declaring: payload.count) + payload
        let stream = Self.received(body)
        #expect(stream.body == body)
        // Doubling alone ends in a 4 MiB buffer for these 3 MiB and 5 bytes.
        #expect(stream.body.capacity < body.count + 4096, "capacity \(stream.body.capacity)")
    }

    @Test("a prefix that declares far more than arrives grows the body no faster than doubling would")
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
        let stream = Self.received(body, limit: limit)
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

    @Test("a body that fits the spare grows in its storage from the first chunk, and the spare is left empty")
    func bodyTakesTheSpareOver() {
        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
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
        let message = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let response = try await connection.send(FaultPeer.request("Echo", message: message))
        #expect(response.status == 200)
        #expect(response.body == FaultPeer.frame(message))
        #expect(response.body.capacity < response.body.count + 4096, "capacity \(response.body.capacity)")
    }
}
