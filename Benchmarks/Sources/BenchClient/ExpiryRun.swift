import Foundation
import OAuth2
import Synchronization

/// Calls made across a token expiry while the token endpoint takes its time (issue 15, item 6):
/// calls start at a steady rate, whether or not earlier ones have finished (as independent
/// requests arrive), and each one's latency counts from when it was due, so calls held up by a
/// refresh are all counted.
///
/// The session's token (shortened to fit a run of seconds) stops being usable `usableFor` after
/// the session is made; with a stale window, it turns stale `staleWindow` before its expiry
/// (the expiry margin is 1 s here). The token endpoint is `DelayedTokenEndpoint`.
enum ExpiryRun {
    /// The session the `authrpc-expiring` implementation calls with.
    static func makeSession(usableFor: Duration, staleWindow: Duration, endpoint: DelayedTokenEndpoint) -> AuthSession {
        let margin = Duration.seconds(1)
        let now = Date()
        let state = AuthState(
            configuration: ServiceConfiguration(tokenEndpoint: URL(string: "https://issuer.invalid/token")!),
            client: OAuthClient(id: "bench"),
            scopes: [],
            grant: GrantRecord(type: .deviceCode),
            accessToken: BenchSetup.token,
            accessTokenExpiresAt: now.addingTimeInterval((usableFor + margin).seconds),
            // An hour's token, so no cap of half the lifetime applies.
            accessTokenIssuedAt: now.addingTimeInterval((usableFor + margin).seconds - 3600),
            refreshToken: "bench-refresh-token"
        )
        return AuthSession(state: state, transport: endpoint, expiryTolerance: margin, staleWindow: staleWindow)
    }

    /// `rate` calls a second for `seconds`, after `warmup` calls one at a time.
    static func run(
        _ caller: any UnaryCaller,
        endpoint: DelayedTokenEndpoint,
        madeAt: ContinuousClock.Instant,
        usableFor: Duration,
        rate: Int,
        seconds: Int,
        warmup: Int
    ) async throws -> [String: Any] {
        for _ in 0..<warmup { try await caller.call() }
        let clock = ContinuousClock()
        let count = rate * seconds
        let interval = Duration.seconds(1) / rate
        let latencies = Latencies(count: count)
        let start = clock.now
        try await withThrowingDiscardingTaskGroup { group in
            for index in 0..<count {
                let due = start + interval * index
                try await clock.sleep(until: due)
                group.addTask {
                    try await caller.call()
                    let latency = (clock.now - due).seconds * 1e6
                    latencies.record(latency, at: index)
                }
            }
        }
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        return [
            "calls": count, "rate": rate,
            "p50_us": percentile(0.5), "p99_us": percentile(0.99), "max_us": sorted.last ?? 0,
            "calls_over_100ms": sorted.filter { $0 > 100_000 }.count,
            "token_requests": endpoint.requests,
            "expiry_after_start_s": (madeAt + usableFor - start).seconds,
        ]
    }
}

/// Each call's latency, in microseconds, by its number.
private final class Latencies: Sendable {
    private let values: Mutex<[Double]>

    init(count: Int) {
        values = Mutex([Double](repeating: 0, count: count))
    }

    func record(_ latency: Double, at index: Int) {
        values.withLock { $0[index] = latency }
    }

    func sorted() -> [Double] {
        values.withLock { $0 }.sorted()
    }
}

/// A token endpoint in the process that answers every refresh after `delay` with a new hour-long
/// token: the bench server accepts any token, so only the endpoint's latency matters here.
final class DelayedTokenEndpoint: OAuthTransport {
    let delay: Duration
    private let count = Atomic<Int>(0)

    init(delay: Duration) {
        self.delay = delay
    }

    var requests: Int { count.load(ordering: .relaxed) }

    func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        let number = count.wrappingAdd(1, ordering: .relaxed).newValue
        try await Task.sleep(for: delay)
        let body = #"{"access_token":"bench-token-refreshed-\#(number)","token_type":"Bearer","expires_in":3600}"#
        return OAuthHTTPResponse(statusCode: 200, headers: ["content-type": "application/json"], body: Data(body.utf8))
    }
}
