import AuthRPC
import AuthRPCSystem
import Foundation
import TestSupport
import Testing

/// Interceptors around real calls to the fault server: what they can change, in which order they
/// run, and what the pipeline below them reports.
@Suite("Client interceptors (fault server)")
struct InterceptorTests {
    /// Adds `x-interceptor: <name>` to the metadata and notes its name, then calls on.
    struct Tagging: ClientInterceptor {
        let name: String
        let log: Locked<[String]>

        func intercept<Request, Response>(
            request: Request,
            context: ClientInterceptorContext,
            next:
                nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                    Response
                >
        ) async throws(RPCError) -> UnaryResponse<Response> {
            log.withLock { $0.append(name) }
            var context = context
            context.metadata.addString(name, forKey: "x-interceptor")
            return try await next(request, context)
        }
    }

    /// Records every event and every context it sees.
    final class Recorder: ClientInterceptor {
        private let state = Locked<(events: [ClientCallEvent], metadata: [Metadata])>(([], []))

        var events: [ClientCallEvent] { state.withLock { $0.events } }
        var metadata: [Metadata] { state.withLock { $0.metadata } }

        func intercept<Request, Response>(
            request: Request,
            context: ClientInterceptorContext,
            next:
                nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                    Response
                >
        ) async throws(RPCError) -> UnaryResponse<Response> {
            state.withLock { $0.metadata.append(context.metadata) }
            return try await next(request, context)
        }

        func observe(_ event: ClientCallEvent, context: ClientInterceptorContext) {
            state.withLock { $0.events.append(event) }
        }
    }

    /// Replaces what the call answers: the response's message, or the error.
    struct Replacing: ClientInterceptor {
        func intercept<Request, Response>(
            request: Request,
            context: ClientInterceptorContext,
            next:
                nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                    Response
                >
        ) async throws(RPCError) -> UnaryResponse<Response> {
            do {
                var response = try await next(request, context)
                if let bytes = response.message as? [UInt8],
                    let replaced = (Array("replaced:".utf8) + bytes) as? Response
                {
                    response.message = replaced
                }
                return response
            } catch {
                throw RPCError(code: .aborted, message: "replaced: \(error.message)", cause: error)
            }
        }
    }

    /// Calls `next` again once when the first call fails `unavailable`.
    struct AgainOnce: ClientInterceptor {
        func intercept<Request, Response>(
            request: Request,
            context: ClientInterceptorContext,
            next:
                nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                    Response
                >
        ) async throws(RPCError) -> UnaryResponse<Response> {
            do {
                return try await next(request, context)
            } catch  where error.code == .unavailable {
                return try await next(request, context)
            }
        }
    }

    @Test("the channel's interceptors run first, then the call's, each adding metadata the server sees")
    func orderAndMetadata() async throws {
        let faults = try await Peers.faultServer()
        let log = Locked<[String]>([])
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            defaultCallOptions: CallOptions(interceptors: [Tagging(name: "default", log: log)]),
            connectionBackoff: .patient,
            interceptors: [Tagging(name: "channel-1", log: log), Tagging(name: "channel-2", log: log)]
        )
        let echoed = try await FaultChannel.echoRequest(
            channel,
            options: CallOptions(interceptors: [Tagging(name: "call", log: log)])
        )
        #expect(log.withLock { $0 } == ["channel-1", "channel-2", "call"])
        #expect(echoed.values("x-interceptor") == ["channel-1", "channel-2", "call"])
        // Without options of its own, the call runs the channel's defaults' interceptors.
        log.withLock { $0 = [] }
        let defaulted = try await FaultChannel.echoRequest(channel)
        #expect(log.withLock { $0 } == ["channel-1", "channel-2", "default"])
        #expect(defaulted.values("x-interceptor") == ["channel-1", "channel-2", "default"])
    }

    @Test("an interceptor can replace the response and the error")
    func replaceResponseAndError() async throws {
        let channel = try await FaultChannel.make()
        let options = CallOptions(interceptors: [Replacing()])
        let response = try await FaultChannel.call(channel, "Echo", message: Array("abc".utf8), options: options)
        #expect(response.message == Array("replaced:abc".utf8))
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "TrailersOnly", options: options)
        }
        #expect(error?.code == .aborted)
        #expect(error?.message == "replaced: token expired")
        #expect((error?.cause as? RPCError)?.code == .unauthenticated)
    }

    @Test("an interceptor can call next again: the whole call runs twice")
    func callsNextAgain() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag, CallOptions(interceptors: [AgainOnce()]))
        options.initialMetadata.addString("1", forKey: "x-fault-failures")
        let response = try await FaultChannel.call(channel, "Retry", options: options)
        #expect(String(decoding: response.message, as: UTF8.self) == #"{"attempt": 2}"#)
        let events = try await FaultChannel.events(channel, tag: tag)
        #expect(events.filter { $0["type"] as? String == "headers" }.count == 2)
    }

    @Test("the pipeline reports attempts, retries and token requests; interceptors never see the token")
    func events() async throws {
        let channel = try await FaultChannel.make()
        let recorder = Recorder()
        let provider = ScriptedProvider(.answer("secret-token-1"))
        var options = FaultChannel.tagged(
            FaultChannel.newTag(),
            CallOptions(
                timeout: .seconds(60),
                credentials: .provider(provider),
                allowsInsecureCredentials: true,
                retryPolicy: RetryPolicy(
                    maxAttempts: 5,
                    initialBackoff: .milliseconds(1),
                    maxBackoff: .milliseconds(1),
                    backoffMultiplier: 1
                ),
                interceptors: [recorder]
            )
        )
        options.initialMetadata.addString("2", forKey: "x-fault-failures")
        try await FaultChannel.call(channel, "Retry", options: options)
        let kinds = recorder.events.map { "\($0.kind) \($0.attempt)" }
        #expect(
            kinds == [
                "tokenRequested 1", "attemptStarted 1", "retryScheduled 1",
                "tokenRequested 2", "attemptStarted 2", "retryScheduled 2",
                "tokenRequested 3", "attemptStarted 3",
            ]
        )
        #expect(recorder.events.filter { $0.kind == .retryScheduled }.allSatisfy { $0.delay != nil })
        #expect(provider.tokenCalls == 3)
        for metadata in recorder.metadata {
            #expect(!metadata.contains(key: "authorization"))
            #expect(!"\(metadata)".contains("secret-token"))
        }
    }

    @Test("a rejected token is reported as invalidated before the fresh one is asked for")
    func tokenInvalidated() async throws {
        let channel = try await FaultChannel.make()
        let recorder = Recorder()
        let provider = ScriptedProvider(.answer("first"), then: ["second"])
        let options = CallOptions(
            credentials: .provider(provider),
            allowsInsecureCredentials: true,
            interceptors: [recorder]
        )
        await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "TrailersOnly", options: options) }
        #expect(
            recorder.events.map { "\($0.kind) \($0.attempt)" } == [
                "tokenRequested 1", "attemptStarted 1", "tokenInvalidated 1", "tokenRequested 2", "attemptStarted 2",
            ]
        )
        #expect(provider.invalidated == ["first"])
    }

    @Test("interceptors run before the service config's defaults: they see the caller's options")
    func beforeServiceConfig() async throws {
        let faults = try await Peers.faultServer()
        let recorder = Recorder()
        let config = try ServiceConfig(json: #"{"methodConfig": [{"name": [{}], "timeout": "120s"}]}"#)
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            connectionBackoff: .patient,
            interceptors: [recorder],
            serviceConfig: config
        )
        struct TimeoutProbe: ClientInterceptor {
            let seen: Locked<[Duration?]>
            func intercept<Request, Response>(
                request: Request,
                context: ClientInterceptorContext,
                next:
                    nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                        Response
                    >
            ) async throws(RPCError) -> UnaryResponse<Response> {
                seen.withLock { $0.append(context.options.timeout) }
                return try await next(request, context)
            }
        }
        let seen = Locked<[Duration?]>([])
        let echoed = try await FaultChannel.echoRequest(
            channel,
            options: CallOptions(interceptors: [TimeoutProbe(seen: seen)])
        )
        #expect(seen.withLock { $0 } == [nil])
        // ... and the call below them got the config's timeout.
        let timeout = try #require(echoed.values("grpc-timeout").first)
        #expect(
            RetryAgainstFaultServerTests.parseTimeout(timeout).map { $0 <= .seconds(120) && $0 > .seconds(60) } == true
        )
    }
}
