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

    @Test("httpStatus reads three ASCII digits, and is 0 for anything else")
    func httpStatus() {
        for (text, status) in [("200", 200), ("100", 100), ("503", 503), ("007", 7), ("999", 999)] {
            #expect(Self.withBytes(text) { $0.httpStatus } == status, "\(text)")
        }
        for text in ["", "20", "2000", "20a", " 200", "2 0", "+20", "-20", "٢٠٠"] {
            #expect(Self.withBytes(text) { $0.httpStatus } == 0, "\(text)")
        }
    }
}
