import AuthRPC
import Foundation
import TestSupport
import Testing

/// Retry policies against the fault server's `Retry` scenario, which fails the first attempts of a
/// tagged call and records every attempt it sees (its `grpc-previous-rpc-attempts` and
/// `grpc-timeout`, and when it arrived by the server's clock).
@Suite("Retries against the fault server (gRFC A6)")
struct RetryAgainstFaultServerTests {
    /// Up to 5 attempts, retrying UNAVAILABLE after at most a millisecond.
    static let quickPolicy = RetryPolicy(
        maxAttempts: 5,
        initialBackoff: .milliseconds(1),
        maxBackoff: .milliseconds(1),
        backoffMultiplier: 1
    )

    /// One attempt as the server recorded it.
    struct Attempt {
        var number: Int
        var previousAttempts: String?
        var timeout: Duration?
        var arrived: Double
        var body: String
    }

    /// Options for a `Retry` call of a new tag: the server fails its first `failures` attempts.
    static func options(
        _ tag: String,
        failures: Int,
        code: Int? = nil,
        pushback: String? = nil,
        headersFirst: Bool = false,
        delayMilliseconds: Int? = nil,
        policy: RetryPolicy? = quickPolicy,
        timeout: Duration = .seconds(60)
    ) -> CallOptions {
        var options = FaultChannel.tagged(tag, CallOptions(timeout: timeout, retryPolicy: policy))
        options.initialMetadata.addString("\(failures)", forKey: "x-fault-failures")
        if let code { options.initialMetadata.addString("\(code)", forKey: "x-fault-code") }
        if let pushback { options.initialMetadata.addString(pushback, forKey: "x-fault-pushback") }
        if headersFirst { options.initialMetadata.addString("1", forKey: "x-fault-headers-first") }
        if let delayMilliseconds {
            options.initialMetadata.addString("\(delayMilliseconds)", forKey: "x-fault-delay-ms")
        }
        return options
    }

    /// The attempts the server answered for `tag`, and how many requests of it arrived at all.
    static func attempts(
        _ channel: Channel,
        _ tag: String,
        atLeast count: Int = 0
    ) async throws -> (
        answered: [Attempt], arrived: Int
    ) {
        let events = try await FaultChannel.events(channel, tag: tag) { events in
            events.filter { $0["type"] as? String == "attempt" }.count >= count
        }
        let answered = events.filter { $0["type"] as? String == "attempt" }.map { event in
            Attempt(
                number: event["attempt"] as? Int ?? 0,
                previousAttempts: event["previous_rpc_attempts"] as? String,
                timeout: (event["grpc_timeout"] as? String).flatMap(parseTimeout),
                arrived: event["monotonic"] as? Double ?? 0,
                body: event["body_hex"] as? String ?? ""
            )
        }
        return (answered, events.filter { $0["type"] as? String == "headers" }.count)
    }

    /// A `grpc-timeout` value (digits and a unit) as a duration.
    static func parseTimeout(_ text: String) -> Duration? {
        guard let unit = text.last, let value = Int64(text.dropLast()) else { return nil }
        switch unit {
        case "H": return .seconds(value * 3600)
        case "M": return .seconds(value * 60)
        case "S": return .seconds(value)
        case "m": return .milliseconds(value)
        case "u": return .microseconds(value)
        case "n": return .nanoseconds(value)
        default: return nil
        }
    }

    @Test("UNAVAILABLE twice, then OK: 3 attempts, the retries carrying grpc-previous-rpc-attempts 1 and 2")
    func retriedUntilSuccess() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let response = try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 2))
        #expect(String(decoding: response.message, as: UTF8.self) == #"{"attempt": 3}"#)
        // The client says how many attempts came before the answer.
        #expect(response.headers.firstString(forKey: "grpc-previous-rpc-attempts") == "2")
        let (attempts, arrived) = try await Self.attempts(channel, tag, atLeast: 3)
        #expect(attempts.map(\.number) == [1, 2, 3])
        #expect(attempts.map(\.previousAttempts) == [nil, "1", "2"])
        #expect(arrived == 3)
    }

    @Test("the request is serialized once: every attempt carries the same bytes")
    func sameBytesEveryAttempt() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let message = Array((0..<4096).map { UInt8($0 % 251) })
        try await FaultChannel.call(channel, "Retry", message: message, options: Self.options(tag, failures: 2))
        let (attempts, _) = try await Self.attempts(channel, tag, atLeast: 3)
        let framed = ([0, 0, 0, 0x10, 0] + message).map { String(format: "%02x", $0) }.joined()
        #expect(attempts.count == 3)
        #expect(attempts.allSatisfy { $0.body == framed })
    }

    @Test("a status the policy does not retry: one attempt")
    func notRetryable() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 2, code: 3))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "attempt 1 failed")
        let (attempts, arrived) = try await Self.attempts(channel, tag, atLeast: 1)
        #expect(attempts.count == 1)
        #expect(arrived == 1)
    }

    @Test("every attempt failing: maxAttempts attempts, then the last status")
    func attemptsExhausted() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var policy = Self.quickPolicy
        policy.maxAttempts = 3
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 100, policy: policy))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "attempt 3 failed")
        #expect(error?.headers.firstString(forKey: "grpc-previous-rpc-attempts") == "2")
        let (attempts, _) = try await Self.attempts(channel, tag, atLeast: 3)
        #expect(attempts.count == 3)
    }

    @Test("without a policy, UNAVAILABLE is not retried and no grpc-previous-rpc-attempts is sent")
    func noPolicy() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 1, policy: nil))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.headers.isEmpty == true)
        let (attempts, arrived) = try await Self.attempts(channel, tag, atLeast: 1)
        #expect(attempts.map(\.previousAttempts) == [nil])
        #expect(arrived == 1)
    }

    @Test("pushback -1 (or a malformed one): no retry")
    func pushbackStops() async throws {
        let channel = try await FaultChannel.make()
        for pushback in ["-1", "soon"] {
            let tag = FaultChannel.newTag()
            let error = await #expect(throws: RPCError.self) {
                try await FaultChannel.call(
                    channel,
                    "Retry",
                    options: Self.options(tag, failures: 2, pushback: pushback)
                )
            }
            #expect(error?.code == .unavailable)
            let (attempts, arrived) = try await Self.attempts(channel, tag, atLeast: 1)
            #expect(attempts.count == 1)
            #expect(arrived == 1)
        }
    }

    @Test("pushback 500 ms: the retry waits that long, though the backoff is a millisecond")
    func pushbackHonoured() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let response = try await FaultChannel.call(
            channel,
            "Retry",
            options: Self.options(tag, failures: 1, pushback: "500")
        )
        #expect(String(decoding: response.message, as: UTF8.self) == #"{"attempt": 2}"#)
        let (attempts, _) = try await Self.attempts(channel, tag, atLeast: 2)
        #expect(attempts.count == 2)
        // By the server's own clock, the retry came no sooner than the pushback allowed.
        #expect(attempts[1].arrived - attempts[0].arrived >= 0.5)
    }

    @Test("response headers, then UNAVAILABLE: the call is committed and not retried")
    func committedNotRetried() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 2, headersFirst: true))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.headers.firstString(forKey: "content-type") == "application/grpc")
        let (attempts, arrived) = try await Self.attempts(channel, tag, atLeast: 1)
        #expect(attempts.count == 1)
        #expect(arrived == 1)
    }

    @Test("a connection lost after the response headers is not retried either")
    func committedByHeadersThenConnectionLoss() async throws {
        // CloseMidStream sends headers and part of a message, then closes the connection: the
        // call is committed, although the failure (UNAVAILABLE) is one the policy retries.
        let channel = try await FaultChannel.make()
        let observer = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "CloseMidStream",
                options: FaultChannel.tagged(tag, CallOptions(timeout: .seconds(60), retryPolicy: Self.quickPolicy))
            )
        }
        #expect(error?.code == .unavailable)
        let events = try await FaultChannel.events(observer, tag: tag)
        #expect(events.filter { $0["type"] as? String == "headers" }.count == 1)
    }

    @Test("a connection lost before any headers is retried under the policy")
    func connectionLossBeforeHeadersRetried() async throws {
        // CloseAfterRequest: the request arrived (so it is not a transparent retry) and the
        // connection closed without an answer: UNAVAILABLE, not committed, so retried until
        // maxAttempts.
        let channel = try await FaultChannel.make()
        let observer = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var policy = Self.quickPolicy
        policy.maxAttempts = 3
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "CloseAfterRequest",
                options: FaultChannel.tagged(tag, CallOptions(timeout: .seconds(60), retryPolicy: policy))
            )
        }
        #expect(error?.code == .unavailable)
        let events = try await FaultChannel.events(observer, tag: tag) { events in
            events.filter { $0["type"] as? String == "headers" }.count >= 3
        }
        #expect(events.filter { $0["type"] as? String == "headers" }.count == 3)
    }

    @Test("throttling stops retries after repeated failures, and successes let them resume")
    func throttling() async throws {
        // A channel whose service config gives fault.Fault/Retry the quick policy and throttles
        // with 4 tokens (retries only above 2) and a ratio of 1.
        let faults = try await Peers.faultServer()
        let config = try ServiceConfig(
            json: """
                {"methodConfig": [{"name": [{"service": "fault.Fault", "method": "Retry"}],
                                   "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
                                                   "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}],
                 "retryThrottling": {"maxTokens": 4, "tokenRatio": 1}}
                """
        )
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            serviceConfig: config
        )
        func attemptsOf(failures: Int) async throws -> (Int, StatusCode) {
            let tag = FaultChannel.newTag()
            var code = StatusCode.ok
            do {
                try await FaultChannel.call(
                    channel,
                    "Retry",
                    options: Self.options(tag, failures: failures, policy: nil)
                )
            } catch {
                code = error.code
            }
            return (try await Self.attempts(channel, tag).arrived, code)
        }
        // 4 tokens: the first failure leaves 3 (retry), the second 2 (no retry).
        #expect(try await attemptsOf(failures: 100) == (2, .unavailable))
        // 1 token left: no retry at all.
        #expect(try await attemptsOf(failures: 100) == (1, .unavailable))
        // Three successes bring it back to 4 ...
        for _ in 0..<3 { #expect(try await attemptsOf(failures: 0) == (1, .ok)) }
        // ... so a failure leaves 3 and is retried again.
        #expect(try await attemptsOf(failures: 1) == (2, .ok))
    }

    @Test("one deadline spans every attempt: each is sent with less time left, and the call ends at it")
    func deadlineSpansAttempts() async throws {
        let channel = try await FaultChannel.make()
        // Connected first: the second is for the attempts, not for connecting on a busy machine.
        try await FaultChannel.call(channel, "Echo")
        let tag = FaultChannel.newTag()
        // Each attempt takes the server 400 ms to fail; the deadline is 1 s for all of them.
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Retry",
                options: Self.options(tag, failures: 100, delayMilliseconds: 400, timeout: .seconds(1))
            )
        }
        // The call ends at the deadline; or, when an attempt's failure is handled with no time
        // left for another (a loaded machine runs the client late), with that failure, as gRFC
        // A6 says. Which of the two depends on when the client runs, not on the library.
        let endedAtDeadline = error?.code == .deadlineExceeded
        let endedWithLastFailure = error?.code == .unavailable && error?.message.hasPrefix("attempt ") == true
        #expect(endedAtDeadline || endedWithLastFailure, "\(String(describing: error))")
        let (attempts, arrived) = try await Self.attempts(channel, tag)
        // At most three attempts fit in one second when each takes 400 ms.
        #expect(arrived <= 3)
        #expect(attempts.count <= 2)
        let timeouts = attempts.compactMap(\.timeout)
        #expect(timeouts.count == attempts.count)
        #expect(timeouts.allSatisfy { $0 <= .seconds(1) })
        for (earlier, later) in zip(timeouts, timeouts.dropFirst()) {
            // The later attempt left at least 400 ms after the earlier one (the server's delay).
            #expect(later <= earlier - .milliseconds(399))
        }
    }

    @Test("a deadline that would pass during the backoff ends the call at once with the last status")
    func backoffBeyondDeadline() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Retry",
                options: Self.options(tag, failures: 2, pushback: "60000", timeout: .seconds(30))
            )
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "attempt 1 failed")
    }

    @Test("RetryPolicy.disabled turns off the retries a service config gives the method")
    func disabledOverridesConfig() async throws {
        let faults = try await Peers.faultServer()
        let config = try ServiceConfig(
            json: """
                {"methodConfig": [{"name": [{"service": "fault.Fault"}],
                                   "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
                                                   "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
                """
        )
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            serviceConfig: config
        )
        let retried = FaultChannel.newTag()
        try await FaultChannel.call(channel, "Retry", options: Self.options(retried, failures: 1, policy: nil))
        #expect(try await Self.attempts(channel, retried).arrived == 2)
        let disabled = FaultChannel.newTag()
        await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Retry",
                options: Self.options(disabled, failures: 1, policy: .disabled)
            )
        }
        #expect(try await Self.attempts(channel, disabled).arrived == 1)
    }

    @Test("an invalid policy fails the call with invalidArgument before anything is sent")
    func invalidPolicy() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var policy = Self.quickPolicy
        policy.retryableStatusCodes = []
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Retry", options: Self.options(tag, failures: 0, policy: policy))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("retryableStatusCodes") == true)
        #expect(try await Self.attempts(channel, tag).arrived == 0)
    }
}
