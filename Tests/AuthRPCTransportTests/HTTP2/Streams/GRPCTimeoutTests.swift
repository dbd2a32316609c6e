import AuthRPCSystem
import AuthRPCTransport
import Testing

@Suite("grpc-timeout")
struct GRPCTimeoutTests {
    @Test(
        "finest unit that fits in eight digits, rounded up",
        arguments: [
            (Duration.nanoseconds(1), "1n"),
            (.nanoseconds(99_999_999), "99999999n"),
            (.nanoseconds(100_000_000), "100000u"),
            (.milliseconds(100), "100000u"),
            (.seconds(1), "1000000u"),
            (.nanoseconds(100_000_001), "100001u"),
            (.seconds(100), "100000m"),
            (.seconds(100_000), "100000S"),
            (.seconds(100_000_000), "1666667M"),
            (.seconds(10_000_000_000), "2562048H"),
            (.nanoseconds(Int64.max), "2562048H"),
            (.zero, "1n"),
            (.seconds(-5), "1n"),
        ]
    )
    func encoding(duration: Duration, expected: String) {
        #expect(GRPCTimeout(nanoseconds: ContinuousTime.nanoseconds(roundingUp: duration)).description == expected)
    }

    @Test("never more than eight digits")
    func digits() {
        for exponent in 0..<19 {
            var value: Int64 = 1
            for _ in 0..<exponent { value *= 10 }
            let text = GRPCTimeout(nanoseconds: value).description
            #expect(text.dropLast().count <= 8, "\(text)")
        }
    }

    @Test("the finest unit that fits, and the least count in it that covers the time")
    func property() throws {
        // Each unit in nanoseconds, finest first.
        let units: [(symbol: Character, nanoseconds: Int128)] = [
            ("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000),
            ("H", 3_600_000_000_000),
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            // Spread over every unit: up to Int64.max nanoseconds (about 292 years).
            let exponent = Int.random(in: 0...19, using: &generator)
            let limit = exponent == 19 ? Int64.max : (0..<exponent).reduce(Int64(1)) { value, _ in value * 10 }
            let nanoseconds = Int64.random(in: 1...limit, using: &generator)
            let text = GRPCTimeout(nanoseconds: nanoseconds).description
            let unitIndex = try #require(units.firstIndex { $0.symbol == text.last })
            let count = try #require(Int128(String(text.dropLast())))
            let unit = units[unitIndex].nanoseconds
            #expect(count <= 99_999_999, "\(nanoseconds) ns → \(text)")
            #expect(count * unit >= Int128(nanoseconds), "\(nanoseconds) ns → \(text) is less")
            #expect((count - 1) * unit < Int128(nanoseconds), "\(nanoseconds) ns → \(text) is not the least count")
            if unitIndex > 0 {
                let finer = units[unitIndex - 1].nanoseconds
                #expect(
                    (Int128(nanoseconds) + finer - 1) / finer > 99_999_999,
                    "\(nanoseconds) ns → \(text): a finer unit fits"
                )
            }
        }
    }
}
