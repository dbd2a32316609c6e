import Testing

@testable import AuthRPC

@Suite("Content codings")
struct ContentCodingTests {
    @Test("gzip and deflate round-trip", arguments: ContentCoding.allCases)
    func roundTrip(coding: ContentCoding) throws {
        let input = Array(String(repeating: "compress me ", count: 1000).utf8)
        let compressed = coding.compress(input)
        #expect(compressed.count < input.count)
        #expect(try coding.decompress(compressed[...], limit: input.count) == input)
    }

    @Test("gzip output has the gzip magic; deflate has a zlib header")
    func formats() {
        #expect(Array(ContentCoding.gzip.compress([1, 2, 3]).prefix(2)) == [0x1F, 0x8B])
        #expect(ContentCoding.deflate.compress([1, 2, 3]).first == 0x78)
    }

    @Test("output past the limit stops (decompression bombs), corrupt and truncated input fail")
    func limits() {
        let bomb = ContentCoding.gzip.compress([UInt8](repeating: 0, count: 10 << 20))
        #expect(throws: ContentCoding.Failure.tooLarge(limit: 1 << 20)) {
            try ContentCoding.gzip.decompress(bomb[...], limit: 1 << 20)
        }
        #expect(throws: ContentCoding.Failure.self) {
            try ContentCoding.gzip.decompress([1, 2, 3, 4][...], limit: 100)
        }
        let good = ContentCoding.gzip.compress(Array("hello".utf8))
        #expect(throws: ContentCoding.Failure.self) { try ContentCoding.gzip.decompress(good.dropLast(6), limit: 100) }
    }
}
