import Testing

@testable import AuthRPCTransport

@Suite("Received header bytes are compared and parsed in place")
struct ReceivedBytesTests {
    static func withBytes<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        Array(text.utf8).withUnsafeBufferPointer(body)
    }

    @Test("equals matches a literal byte for byte, length first")
    func equalsLiteral() {
        #expect(Self.withBytes(":status") { $0.equals(":status") })
        #expect(Self.withBytes("authorization") { $0.equals("authorization") })
        #expect(!Self.withBytes(":statuS") { $0.equals(":status") })
        #expect(!Self.withBytes(":statu") { $0.equals(":status") })
        #expect(!Self.withBytes(":status ") { $0.equals(":status") })
        #expect(UnsafeBufferPointer<UInt8>(start: nil, count: 0).equals(""))
        #expect(!UnsafeBufferPointer<UInt8>(start: nil, count: 0).equals("cookie"))
    }

    @Test("equals(utf8Of:) matches a string's UTF-8 byte for byte, small, large or bridged from bytes")
    func equalsString() {
        let large = String(repeating: "grpc-", count: 20)
        for text in ["", "0", "grpc-status", "identity, deflate, gzip", "é", large] {
            #expect(Self.withBytes(text) { $0.equals(utf8Of: text) }, "\(text)")
            #expect(Self.withBytes(text) { $0.equals(utf8Of: String(decoding: Array(text.utf8), as: UTF8.self)) })
            #expect(!Self.withBytes(text + "x") { $0.equals(utf8Of: text) }, "\(text)")
            #expect(!Self.withBytes("x" + text.dropFirst()) { $0.equals(utf8Of: text) } || text.isEmpty)
        }
        #expect(!Self.withBytes("e\u{301}") { $0.equals(utf8Of: "é") }, "compared as bytes, not as characters")
        #expect(UnsafeBufferPointer<UInt8>(start: nil, count: 0).equals(utf8Of: ""))
    }

    @Test("httpStatus reads three ASCII digits, and is 0 for anything else")
    func httpStatus() {
        for (text, status) in [("200", 200), ("100", 100), ("503", 503), ("007", 7), ("999", 999)] {
            #expect(Self.withBytes(text) { $0.httpStatus } == status, "\(text)")
        }
        for text in ["", "20", "2000", "20a", " 200", "2 0", "+20", "-20", "٢٠٠"] {
            #expect(Self.withBytes(text) { $0.httpStatus } == 0, "\(text)")
        }
    }

    @Test("received text reads as the bytes decoded, whether it is one of gRPC's own texts or not")
    func receivedText() {
        let common = [
            "content-type", "application/grpc", "application/grpc+proto", "grpc-accept-encoding",
            "identity, deflate, gzip", "grpc-encoding", "gzip", "grpc-status", "grpc-message", "0",
        ]
        // Near misses: the same length as a common text, one byte off.
        let nearMisses = common.map { String($0.dropLast()) + "X" }
        var inputs: [[UInt8]] = (common + nearMisses + ["", "1", "x-custom", String(repeating: "v", count: 300)])
            .map { Array($0.utf8) }
        inputs.append([0xFF, 0xFE, 0x41])  // not UTF-8: repaired, as String(decoding:) does
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            inputs.append(
                (0..<Int.random(in: 0...30, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
                }
            )
        }
        for bytes in inputs {
            let text = bytes.withUnsafeBufferPointer { ReceivedHeaderText.string($0) }
            #expect(text == String(decoding: bytes, as: UTF8.self), "\(bytes)")
            #expect(Array(text.utf8) == Array(String(decoding: bytes, as: UTF8.self).utf8))
        }
    }
}
