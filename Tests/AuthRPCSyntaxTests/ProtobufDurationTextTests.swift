import AuthRPCSyntax
import Testing

/// proto3's JSON text for a `google.protobuf.Duration`, as service configs write timeouts and
/// backoffs.
@Suite("Protobuf duration text")
struct ProtobufDurationTextTests {
    @Test("durations: proto3 JSON seconds with up to nine fractional digits")
    func durations() {
        #expect(ProtobufDurationText.parse("1s") == .seconds(1))
        #expect(ProtobufDurationText.parse("0.100s") == .milliseconds(100))
        #expect(ProtobufDurationText.parse(".5s") == .milliseconds(500))
        #expect(ProtobufDurationText.parse("3.000000007s") == .seconds(3) + .nanoseconds(7))
        #expect(ProtobufDurationText.parse("-2s") == .seconds(-2))
        #expect(ProtobufDurationText.parse("315576000000s") == .seconds(315_576_000_000))
        for text in ["", "s", "1", "1.s", "1.0000000001s", "1m", "1.5 s", " 1s", "1,5s", "-s", "315576000001s", "1e3s"]
        {
            #expect(ProtobufDurationText.parse(text) == nil, "\(text)")
        }
    }
}
