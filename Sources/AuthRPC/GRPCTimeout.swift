/// The `grpc-timeout` header: at most eight ASCII digits and a unit (`H M S m u n`).
enum GRPCTimeout {
    private static let maxValue: Int64 = 99_999_999
    // Units from finest to coarsest, as nanoseconds per unit.
    private static let units: [(nanoseconds: Int64, symbol: String)] = [
        (1, "n"), (1_000, "u"), (1_000_000, "m"), (1_000_000_000, "S"), (60_000_000_000, "M"), (3_600_000_000_000, "H"),
    ]

    /// Encodes the time remaining in the finest unit whose count fits in eight digits, rounding
    /// up so the server never sees less time than the client allows. Non-positive times become `1n`.
    static func encode(_ remaining: Duration) -> String {
        let (seconds, attoseconds) = remaining.components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return "1n" }
        // Durations past ~292 years saturate: they cannot be expressed anyway.
        let nanoseconds = seconds > Int64.max / 1_000_000_000
            ? Int64.max
            : seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000
        for unit in units {
            let count = (nanoseconds + unit.nanoseconds - 1) / unit.nanoseconds
            if count <= maxValue { return "\(count)\(unit.symbol)" }
        }
        return "\(maxValue)H"
    }
}
