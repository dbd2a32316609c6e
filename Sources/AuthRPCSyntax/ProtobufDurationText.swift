/// The proto3 JSON form of `google.protobuf.Duration`: an optional `-`, whole seconds, an optional
/// fraction of one to nine digits, then `s` (`"1s"`, `"0.100s"`, `".5s"` as gRPC's own parser
/// also accepts). At most 315,576,000,000 seconds, protobuf's range. Service configs write their
/// timeouts and backoffs in it.
package enum ProtobufDurationText {
    /// The duration `text` spells, or `nil` when it is not one.
    package static func parse(_ text: String) -> Duration? {
        var bytes = text.utf8[...]
        guard bytes.last == UInt8(ascii: "s") else { return nil }
        bytes = bytes.dropLast()
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        let whole = bytes.prefix { $0 != UInt8(ascii: ".") }
        var fraction = bytes.dropFirst(whole.count)
        if !fraction.isEmpty {
            fraction = fraction.dropFirst()  // the point
            guard !fraction.isEmpty, fraction.count <= 9 else { return nil }
        }
        guard !(whole.isEmpty && fraction.isEmpty), whole.count <= 12,
            whole.allSatisfy(isDigit), fraction.allSatisfy(isDigit)
        else { return nil }
        var seconds: Int64 = 0
        for byte in whole { seconds = seconds * 10 + Int64(byte - UInt8(ascii: "0")) }
        guard seconds <= 315_576_000_000 else { return nil }
        var nanoseconds: Int64 = 0
        for byte in fraction { nanoseconds = nanoseconds * 10 + Int64(byte - UInt8(ascii: "0")) }
        for _ in fraction.count..<9 { nanoseconds *= 10 }
        let duration = Duration.seconds(seconds) + .nanoseconds(nanoseconds)
        return negative ? .zero - duration : duration
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
