import TestSupport
import Testing

@testable import AuthRPCTransport

@Suite("A response body starts in the buffer its request brought")
struct ResponseBufferTests {
    /// Where an array's elements start.
    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// A request lending an empty buffer with room for `capacity` bytes, which nothing else
    /// holds; where that buffer's storage is.
    private static func lending(_ capacity: Int) -> (HTTP2Request, UInt) {
        var request = HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [])
        let storage = lend(capacity, to: &request)
        return (request, storage)
    }

    /// Lends `request` an empty buffer with room for `capacity` bytes, which nothing else holds;
    /// where its storage is.
    private static func lend(_ capacity: Int, to request: inout HTTP2Request) -> UInt {
        request.responseBuffer = [UInt8](repeating: 0xee, count: capacity)
        request.responseBuffer.removeAll(keepingCapacity: true)
        return address(request.responseBuffer)
    }

    private static func append(_ bytes: [UInt8], to stream: HTTP2Stream) {
        var spare: [UInt8] = []
        var reservations = BodyReservations()
        bytes.withUnsafeBytes { stream.appendBody($0, spare: &spare, reservations: &reservations) }
    }

    @Test("a new stream's body fills the lent storage in place; the request no longer holds it")
    func newStream() {
        let (request, storage) = Self.lending(256)
        let stream = HTTP2Stream(request: consume request)
        let bytes = (0..<200).map { UInt8(truncatingIfNeeded: $0) }
        Self.append(Array(bytes[..<80]), to: stream)
        Self.append(Array(bytes[80...]), to: stream)
        #expect(stream.body == bytes)
        #expect(Self.address(stream.body) == storage)
        #expect(stream.request.responseBuffer.capacity == 0)
    }

    @Test("a spare stream carrying a new request takes that request's buffer")
    func spareStream() {
        let stream = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        stream.resetForReuse()
        let (request, storage) = Self.lending(128)
        stream.carry(consume request)
        Self.append([1, 2, 3], to: stream)
        #expect(stream.body == [1, 2, 3])
        #expect(Self.address(stream.body) == storage)
    }

    @Test("a body larger than the lent buffer still arrives whole")
    func largerThanLent() {
        let stream = HTTP2Stream(request: Self.lending(32).0)
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for start in stride(from: 0, to: bytes.count, by: 1_000) {
            Self.append(Array(bytes[start..<start + 1_000]), to: stream)
        }
        #expect(stream.body == bytes)
    }

    @Test("a real HTTP/2 peer's response lands in the lent buffer's storage")
    func fromPeer() async throws {
        let connection = try await FaultPeer.connect()
        var request = FaultPeer.request("Echo", message: Array("lent".utf8))
        let storage = Self.lend(1_024, to: &request)
        // Consumed, as a call hands its request over: no copy of the buffer stays behind.
        let response = try await connection.send(consume request)
        #expect(response.status == 200)
        #expect(response.body == FaultPeer.frame(Array("lent".utf8)))
        #expect(Self.address(response.body) == storage)
        connection.close()
    }
}
