import Foundation
import OAuth2
import TestSupport
import Testing

/// Device authorization answers with numbers no server should send: the flow clamps them instead
/// of trapping or polling in a tight loop.
@Suite("Device flow bounds against the hostile peer")
struct DeviceFlowBoundsTests {
    static let client = OAuthClient(id: "device-bounds-client")

    func start(interval: String? = nil, expiresIn: String? = nil) async throws -> DeviceAuthorizationFlow.Authorization
    {
        let peer = try await HostilePeer.shared()
        var fields = [
            #""device_code":"dc-1""#, #""user_code":"ABCD-EFGH""#,
            #""verification_uri":"https://verify.example.invalid/device""#,
        ]
        if let interval { fields.append(#""interval":\#(interval)"#) }
        if let expiresIn { fields.append(#""expires_in":\#(expiresIn)"#) }
        let device = try await peer.json("{" + fields.joined(separator: ",") + "}")
        let configuration = ServiceConfiguration(
            tokenEndpoint: device.url.appendingPathComponent("token"),
            deviceAuthorizationEndpoint: device.url
        )
        return try await DeviceAuthorizationFlow(configuration: configuration, client: Self.client, scopes: ["s"])
            .start()
    }

    @Test(
        "the polling interval is clamped to 1...60 s; absent or not a number means the RFC's 5 s",
        arguments: [
            ("1e300", 60), ("\"1e400\"", 60), ("1000000000000000000000000000000", 60), ("3600", 60),
            ("\"NaN\"", 5), ("\"inf\"", 5), ("\"Infinity\"", 5), ("true", 5), ("\"soon\"", 5),
            ("-3", 1), ("0", 1), ("0.2", 1), ("7", 7), ("\"10\"", 10),
        ]
    )
    func intervalIsClamped(interval: String, seconds: Int) async throws {
        let authorization = try await start(interval: interval, expiresIn: "600")
        #expect(authorization.interval == .seconds(seconds), "interval \(interval)")
    }

    @Test(
        "the codes' lifetime is clamped to 1 s...1 h; absent or not a number means 30 minutes",
        arguments: [
            ("1e300", 3600.0), ("\"1e400\"", 3600.0), ("86400", 3600.0), ("\"NaN\"", 1800.0), ("\"inf\"", 1800.0),
            ("{}", 1800.0), (nil, 1800.0),
            ("-10", 1.0), ("0", 1.0), ("900", 900.0),
        ]
    )
    func lifetimeIsClamped(expiresIn: String?, seconds: Double) async throws {
        let before = Date()
        let authorization = try await start(interval: "5", expiresIn: expiresIn)
        let after = Date()
        // The codes expire `seconds` after the answer arrived, which was between `before` and `after`.
        let earliest = before.addingTimeInterval(seconds)
        let latest = after.addingTimeInterval(seconds)
        #expect(
            authorization.expiresAt >= earliest.addingTimeInterval(-0.001)
                && authorization.expiresAt <= latest.addingTimeInterval(0.001),
            "expires_in \(expiresIn ?? "absent"): \(authorization.expiresAt) not in \(earliest)...\(latest)"
        )
    }
}
