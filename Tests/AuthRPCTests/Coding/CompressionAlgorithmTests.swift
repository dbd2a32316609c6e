import Testing

@testable import AuthRPC

@Suite("CompressionAlgorithm")
struct CompressionAlgorithmTests {
    @Test("each algorithm is named as in grpc-encoding, and a name gives back the algorithm")
    func names() {
        #expect(CompressionAlgorithm.gzip.rawValue == "gzip")
        #expect(CompressionAlgorithm.deflate.rawValue == "deflate")
        #expect(CompressionAlgorithm.gzip.description == "gzip")
        #expect(CompressionAlgorithm(rawValue: "gzip") == .gzip)
        #expect(CompressionAlgorithm(rawValue: "deflate") == .deflate)
        #expect(CompressionAlgorithm.allCases == [.gzip, .deflate])
        #expect(CompressionAlgorithm.gzip != .deflate)
    }

    @Test(
        "a name this version does not support is no algorithm: identity, another case, another coding",
        arguments: ["identity", "GZIP", "Deflate", "snappy", "zstd", ""]
    )
    func unsupportedNames(name: String) {
        #expect(CompressionAlgorithm(rawValue: name) == nil)
    }

    @Test("each algorithm codes with its own zlib format")
    func coding() {
        #expect(CompressionAlgorithm.gzip.coding == .gzip)
        #expect(CompressionAlgorithm.deflate.coding == .deflate)
    }
}
