import AuthRPCSystem
import AuthRPCTransport
import Foundation
import GoogleAuth
import OAuth2
import Testing

@testable import AuthRPC

// What the fuzzers found, stated as behaviour. The inputs themselves are in Fuzz/Regressions and
// replayed by CorpusReplayTests; these say what the fix guarantees.

@Suite("Fuzz findings: grpc-timeout")
struct GRPCTimeoutFindingTests {
    @Test(
        "a remaining time whose nanoseconds or rounded-up seconds pass Int64.max is counted as Int64.max nanoseconds, in hours, instead of trapping",
        arguments: [
            // 292 years: seconds × 10^9 fits in Int64, adding the fraction did not.
            Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 900_000_000_000_000_000),
            // Int64.max seconds and a fraction: rounding the seconds up did not fit.
            Duration(secondsComponent: .max, attosecondsComponent: 1),
            Duration(secondsComponent: .max, attosecondsComponent: 0),
        ]
    )
    func hugeRemainingTime(remaining: Duration) {
        let nanoseconds = ContinuousTime.nanoseconds(roundingUp: remaining)
        #expect(nanoseconds == .max)
        #expect(GRPCTimeout(nanoseconds: nanoseconds).description == "2562048H")
    }
}

@Suite("Fuzz findings: service-account-key")
struct ServiceAccountKeyFindingTests {
    @Test("a key file whose type holds key material is refused naming the type's length, without quoting it")
    func typeHoldingKeyMaterial() throws {
        let file = CorpusReplayTests.fuzzDirectory.appendingPathComponent(
            "Regressions/service-account-key/type-holding-key-material"
        )
        let json = try Data(contentsOf: file)
        let error = try #require(throws: OAuthError.self) { try ServiceAccountKey(json: json) }
        #expect(error.message.contains("characters that are not a type name"), "\(error.message)")
        #expect(!error.message.contains("PRIVATE KEY") && !error.message.contains("MIIEow"), "\(error.message)")
    }
}
