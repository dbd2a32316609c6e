import Testing

@testable import AuthRPC

/// The check every call makes of its token before it goes into a header, eight bytes at a time,
/// against the byte-by-byte rule it must equal.
@Suite("Token text check")
struct TokenTextTests {
    static func byteByByte(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    @Test("every byte value at every position of a word and of the tail agrees with the byte rule")
    func everyByteEverywhere() {
        // 19 bytes: two whole words and a three-byte tail.
        let valid = Array("abcdefghijklmnopqrs".utf8)
        for position in valid.indices {
            for byte in UInt8.min...UInt8.max {
                var bytes = valid
                bytes[position] = byte
                let fast = bytes.withUnsafeBufferPointer(TokenResolution.isTokenText)
                #expect(fast == Self.byteByByte(bytes), "byte 0x\(String(byte, radix: 16)) at \(position)")
            }
        }
    }

    @Test("the edges of the range, all in one word, and every length up to 40")
    func edgesAndLengths() {
        #expect([UInt8](repeating: 0x21, count: 8).withUnsafeBufferPointer(TokenResolution.isTokenText))
        #expect([UInt8](repeating: 0x7E, count: 8).withUnsafeBufferPointer(TokenResolution.isTokenText))
        #expect(![UInt8](repeating: 0x20, count: 8).withUnsafeBufferPointer(TokenResolution.isTokenText))
        #expect(![UInt8](repeating: 0x7F, count: 8).withUnsafeBufferPointer(TokenResolution.isTokenText))
        #expect(![UInt8](repeating: 0xFF, count: 8).withUnsafeBufferPointer(TokenResolution.isTokenText))
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(0x21 + $0 % 94) }
            #expect(bytes.withUnsafeBufferPointer(TokenResolution.isTokenText), "length \(length)")
            #expect(Self.byteByByte(bytes))
        }
    }
}
