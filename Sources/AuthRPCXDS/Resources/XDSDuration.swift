internal import SwiftProtobuf

/// A `google.protobuf.Duration` from the control plane, checked as the proto says.
enum XDSDuration {
    /// The duration, if its seconds are in 0...315,576,000,000 and its nanos in 0..<10⁹; a
    /// negative or malformed duration NACKs.
    static func validated(_ value: Google_Protobuf_Duration) throws(XDSResourceError) -> Duration {
        guard (0...315_576_000_000).contains(value.seconds), (0..<1_000_000_000).contains(value.nanos) else {
            throw XDSResourceError("", "invalid duration (\(value.seconds) s, \(value.nanos) ns)")
        }
        return .seconds(value.seconds) + .nanoseconds(value.nanos)
    }
}
