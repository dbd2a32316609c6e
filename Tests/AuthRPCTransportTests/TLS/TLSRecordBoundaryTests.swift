import Testing

@testable import AuthRPCTransport

@Suite("TLS record boundaries in a stream of ciphertext")
struct TLSRecordBoundaryTests {
    /// What `boundary` passes of each of `pieces`, fed in turn.
    private static func passes(_ pieces: [[UInt8]], _ boundary: inout TLSRecordBoundary) -> [Int] {
        pieces.map { piece in piece.withUnsafeBytes { boundary.pass($0) } }
    }

    @Test("bytes pass up to the end of each record, then the next record starts")
    func stopsAtEachRecord() {
        var boundary = TLSRecordBoundary()
        let stream = CiphertextBIOTests.record([1, 2]) + CiphertextBIOTests.record([3])
        let first = stream.withUnsafeBytes { boundary.pass($0) }
        #expect(first == 7)
        #expect(boundary.atRecordStart)
        let second = Array(stream[first...]).withUnsafeBytes { boundary.pass($0) }
        #expect(second == 6)
        #expect(boundary.atRecordStart)
    }

    @Test("a header and a fragment split across pieces, byte by byte")
    func splitAnywhere() {
        var boundary = TLSRecordBoundary()
        // A 300-byte fragment: the length's high byte counts.
        let record = CiphertextBIOTests.record([UInt8](repeating: 7, count: 300))
        let bytes = record.map { [$0] }
        #expect(Self.passes(bytes, &boundary) == [Int](repeating: 1, count: record.count))
        #expect(boundary.atRecordStart)
        // One byte more starts the next record.
        #expect(Self.passes([[23]], &boundary) == [1])
        #expect(!boundary.atRecordStart)
    }

    @Test("a record longer than the bytes at hand takes them all; an empty record ends at its header")
    func longAndEmptyRecords() {
        var boundary = TLSRecordBoundary()
        // Declares 16,384 bytes, of which 100 arrive, then the rest, then an empty record and one more.
        let header: [UInt8] = [23, 3, 3, 0x40, 0x00]
        let pieces = [header + [UInt8](repeating: 1, count: 100), [UInt8](repeating: 2, count: 16_284 + 5 + 3)]
        #expect(Self.passes(pieces, &boundary) == [105, 16_284])
        #expect(Self.passes([[21, 3, 3, 0, 0, 23, 3, 3]], &boundary) == [5])
    }
}
