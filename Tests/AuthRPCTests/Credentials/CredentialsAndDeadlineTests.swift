import AuthRPC
import AuthRPCSystem
import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@Suite("Credentials, deadlines and cancellation (fault server)")
struct CredentialsAndDeadlineTests {
    private func insecure(_ credentials: CallCredentials, timeout: Duration? = nil, tag: String) -> CallOptions {
        FaultChannel.tagged(
            tag,
            CallOptions(timeout: timeout, credentials: credentials, allowsInsecureCredentials: true)
        )
    }

    @Test("a token provider that hangs ends DEADLINE_EXCEEDED at the deadline, and nothing is sent")
    func hangingProvider() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let provider = ScriptedProvider(.hang)
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Echo",
                options: insecure(.provider(provider), timeout: .milliseconds(300), tag: tag)
            )
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message.contains("access token") == true)
        #expect(provider.tokenCalls == 1)
        #expect(!FaultChannel.sawRequest(try await FaultChannel.events(channel, tag: tag)))
    }

    @Test("a task cancelled while its provider hangs ends CANCELLED at once")
    func cancelWhileResolving() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let provider = ScriptedProvider(.hang)
        let options = insecure(.provider(provider), tag: tag)
        let call = Task { try await FaultChannel.call(channel, "Echo", options: options) }
        while provider.tokenCalls == 0 { try await Task.sleep(for: .milliseconds(5)) }
        call.cancel()
        let error = await #expect(throws: RPCError.self) { try await call.value }
        #expect(error?.code == .cancelled)
    }

    @Test(
        "a provider that throws fails UNAUTHENTICATED with the cause kept; transient failures are UNAVAILABLE",
        arguments: [
            ("permanent", StatusCode.unauthenticated), ("transient", .unavailable), ("plain", .unauthenticated),
            ("rpc", .permissionDenied),
        ]
    )
    func throwingProvider(kind: String, code: StatusCode) async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let failure: any Error
        switch kind {
        case "permanent": failure = RevokedGrant()
        case "transient": failure = TransientFailure()
        case "rpc": failure = RPCError(code: .permissionDenied, message: "no")
        default: failure = CocoaError(.userCancelled)
        }
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Echo",
                options: insecure(.provider(ScriptedProvider(.fail(failure))), tag: tag)
            )
        }
        #expect(error?.code == code)
        if kind == "permanent" { #expect(error?.cause is RevokedGrant) }
        if kind == "transient" { #expect(error?.cause is TransientFailure) }
        #expect(!FaultChannel.sawRequest(try await FaultChannel.events(channel, tag: tag)))
    }

    @Test("a token that cannot be a header value is refused without echoing it")
    func badToken() async throws {
        let channel = try await FaultChannel.make()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Echo",
                options: insecure(.accessToken("evil\r\nx-injected: 1"), tag: FaultChannel.newTag())
            )
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.description.contains("evil") == false)
    }

    @Test("the callback adapter: called once per call; a second callback is ignored; no token is UNAUTHENTICATED")
    func callbackProvider() async throws {
        let channel = try await FaultChannel.make()
        let calls = Locked(0)
        let doubleCaller = CallbackAuthTokenProvider { handler in
            calls.withLock { $0 += 1 }
            handler("cb-token", nil)
            handler("second-token", nil)
        }
        var options = CallOptions(credentials: .provider(doubleCaller), allowsInsecureCredentials: true)
        let echoed = try await FaultChannel.echoRequest(channel, options: options)
        #expect(echoed.values("authorization") == ["Bearer cb-token"])
        #expect(calls.withLock { $0 } == 1)

        options.authTokenProvider = CallbackAuthTokenProvider { handler in
            DispatchQueue.global().async { handler(nil, nil) }
        }
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        #expect(error?.code == .unauthenticated)
    }

    @Test("a callback that never answers ends at the deadline")
    func silentCallback() async throws {
        let channel = try await FaultChannel.make()
        let silent = CallbackAuthTokenProvider { _ in }
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Echo",
                options: CallOptions(
                    timeout: .milliseconds(200),
                    credentials: .provider(silent),
                    allowsInsecureCredentials: true
                )
            )
        }
        #expect(error?.code == .deadlineExceeded)
    }

    @Test("the deadline covers the exchange: DEADLINE_EXCEEDED and RST_STREAM(CANCEL) on the wire")
    func deadlineOnTheWire() async throws {
        let channel = try await FaultChannel.make()
        try await FaultChannel.call(channel, "Echo")  // connected, so the deadline is spent on the exchange
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "Hang",
                options: FaultChannel.tagged(tag, CallOptions(timeout: .milliseconds(300)))
            )
        }
        #expect(error?.code == .deadlineExceeded)
        let events = try await FaultChannel.events(channel, tag: tag) { FaultChannel.hasReset($0) }
        #expect(FaultChannel.hasReset(events), "\(events)")
    }

    @Test("cancelling the caller's task: CANCELLED and RST_STREAM(CANCEL) on the wire")
    func cancellationOnTheWire() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let options = FaultChannel.tagged(tag)
        let call = Task { try await FaultChannel.call(channel, "Hang", options: options) }
        _ = try await FaultChannel.events(channel, tag: tag) { $0.contains { $0["type"] as? String == "end_stream" } }
        call.cancel()
        let error = await #expect(throws: RPCError.self) { try await call.value }
        #expect(error?.code == .cancelled)
        let events = try await FaultChannel.events(channel, tag: tag) { FaultChannel.hasReset($0) }
        #expect(FaultChannel.hasReset(events), "\(events)")
    }

    @Test("UNAUTHENTICATED from the server: an invalidatable provider's token is invalidated and the call retried once")
    func unauthenticatedRetry() async throws {
        let channel = try await FaultChannel.make()
        let provider = ScriptedProvider(.answer("first"), then: ["second", "third"])
        let options = CallOptions(credentials: .provider(provider), allowsInsecureCredentials: true)
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "TrailersOnly", options: options)
        }
        #expect(error?.code == .unauthenticated)
        #expect(provider.tokenCalls == 2, "asked again once after invalidating")
        #expect(provider.invalidated == ["first"])

        var noRetry = options
        noRetry.retriesUnauthenticatedOnce = false
        let once = ScriptedProvider(.answer("only"))
        noRetry.authTokenProvider = once
        _ = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "TrailersOnly", options: noRetry)
        }
        #expect(once.tokenCalls == 1 && once.invalidated.isEmpty)
    }

    @Test("a provider whose invalidate(token:) never returns: the call still ends at its deadline, or when cancelled")
    func invalidationIsBoundedByTheDeadline() async throws {
        let channel = try await FaultChannel.make()
        let provider = ScriptedProvider(.answer("first"), then: ["second"], invalidationHangs: true)
        // Connected first, so the deadline is spent on the exchange and the invalidation, not on
        // connecting while the machine is busy starting every suite's peers.
        try await FaultChannel.call(channel, "Echo")
        let options = CallOptions(
            // Long enough for the call to reach the invalidation on a busy machine.
            timeout: .seconds(15),
            credentials: .provider(provider),
            allowsInsecureCredentials: true
        )
        let call = Task { () -> RPCError? in
            do throws(RPCError) {
                try await FaultChannel.call(channel, "TrailersOnly", options: options)
                return nil
            } catch { return error }
        }
        let outcome = await value(of: call, waitingAtMost: .seconds(60))
        #expect(outcome != nil, "the call was still waiting for invalidate(token:) after 60 s")
        #expect(outcome??.code == .deadlineExceeded, "\(String(describing: outcome))")
        #expect(provider.invalidated == ["first"])

        var noDeadline = options
        noDeadline.timeout = nil
        let cancelled = Task { () -> RPCError? in
            do throws(RPCError) {
                try await FaultChannel.call(channel, "TrailersOnly", options: noDeadline)
                return nil
            } catch { return error }
        }
        // Cancel once the call is inside the invalidation (the provider has recorded it).
        try await eventually("the second call reaches the invalidation") { provider.invalidated.count >= 2 }
        cancelled.cancel()
        let cancelledOutcome = await value(of: cancelled, waitingAtMost: .seconds(60))
        #expect(cancelledOutcome != nil, "a cancelled call was still waiting for invalidate(token:) after 60 s")
        #expect(cancelledOutcome??.code == .cancelled, "\(String(describing: cancelledOutcome))")
    }
}
