/// The `grpc-timeout` header: at most eight ASCII digits and a unit (`H M S m u n`).
enum GRPCTimeout {
    private static let maxValue: Int64 = 99_999_999
    private static let subSecondUnits: [(nanoseconds: Int64, symbol: String)] = [
        (1, "n"), (1_000, "u"), (1_000_000, "m"),
    ]
    private static let secondUnits: [(seconds: Int64, symbol: String)] = [(1, "S"), (60, "M"), (3_600, "H")]

    /// Encodes the time remaining in the finest unit whose count fits in eight digits, rounding
    /// up so the server never sees less time than the client allows. Non-positive times become `1n`.
    static func encode(_ remaining: Duration) -> String {
        let (seconds, attoseconds) = remaining.components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return "1n" }
        let fraction = (attoseconds + 999_999_999) / 1_000_000_000  // nanoseconds, rounded up
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (nanoseconds, sumOverflow) = whole.addingReportingOverflow(fraction)
        if !overflow && !sumOverflow {
            for unit in subSecondUnits {
                let count = nanoseconds / unit.nanoseconds + (nanoseconds % unit.nanoseconds == 0 ? 0 : 1)
                if count <= maxValue { return "\(count)\(unit.symbol)" }
            }
        }
        // ceil((seconds + f) / u) for 0 < f < 1 equals ceil((seconds + 1) / u). Int64.max seconds is
        // far past the largest timeout, so it needs no rounding (and could not take it).
        let roundedSeconds = fraction > 0 && seconds < .max ? seconds + 1 : seconds
        for unit in secondUnits {
            let count = roundedSeconds / unit.seconds + (roundedSeconds % unit.seconds == 0 ? 0 : 1)
            if count <= maxValue { return "\(count)\(unit.symbol)" }
        }
        return "\(maxValue)H"
    }
}
