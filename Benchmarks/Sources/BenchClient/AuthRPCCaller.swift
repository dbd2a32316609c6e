import AuthRPC
import AuthSampleService
import Foundation
import OAuth2

/// swift-authrpc: one `Channel`, a static token or an `AuthSession` whose token is fresh; its
/// tasks on the default executor, or on the channel's (the connection's I/O thread); with or
/// without a retry policy (which the calls never need: they succeed at once).
struct AuthRPCCaller: UnaryCaller {
    let client: Grpc_Testing_TestServiceClient
    let options: CallOptions
    /// `options` plus the metadata that has the server park the call.
    let heldOptions: CallOptions
    let request: Grpc_Testing_SimpleRequest
    let preferredExecutor: (any TaskExecutor)?

    init(_ setup: BenchSetup, useSession: Bool, onChannelExecutor: Bool = false, retryPolicy: RetryPolicy? = nil) throws
    {
        try self.init(
            setup,
            session: useSession ? Self.freshSession() : nil,
            onChannelExecutor: onChannelExecutor,
            retryPolicy: retryPolicy
        )
    }

    /// An `AuthSession` holding an hour-long token.
    static func freshSession() -> AuthSession {
        let state = AuthState(
            configuration: ServiceConfiguration(tokenEndpoint: URL(string: "https://issuer.invalid/token")!),
            client: OAuthClient(id: "bench"),
            scopes: [],
            grant: GrantRecord(type: .deviceCode),
            accessToken: BenchSetup.token,
            accessTokenExpiresAt: Date().addingTimeInterval(3600),
            accessTokenIssuedAt: Date()
        )
        return AuthSession(state: state)
    }

    /// Calls with `session` as the token provider, or with a static token when `nil`.
    init(
        _ setup: BenchSetup,
        session: AuthSession?,
        onChannelExecutor: Bool = false,
        retryPolicy: RetryPolicy? = nil
    ) throws {
        let trustRoots = TLSConfiguration.TrustRoots.certificates(
            pem: setup.tls ? try String(contentsOfFile: setup.caPath, encoding: .utf8) : ""
        )
        let channel: Channel
        if let target = setup.target {
            // h2c only: the bench's xDS cluster names the servers' h2c ports.
            channel = try Channel(target: target, transportSecurity: .plaintext)
        } else if setup.ports.isEmpty {
            channel = try Channel(
                target: "\(setup.tls ? "localhost" : "127.0.0.1"):\(setup.port)",
                transportSecurity: setup.tls ? .tls(TLSConfiguration(trustRoots: trustRoots)) : .plaintext
            )
        } else {
            // Several servers on 127.0.0.1, one connection each (or the first, with pick-first).
            channel = try Channel(
                target: "ipv4:" + setup.ports.map { "127.0.0.1:\($0)" }.joined(separator: ","),
                transportSecurity: setup.tls
                    ? .tls(TLSConfiguration(trustRoots: trustRoots, serverHostnameOverride: "localhost")) : .plaintext,
                loadBalancing: setup.loadBalancing == "round_robin" ? .roundRobin : .pickFirst
            )
        }
        var options = CallOptions(
            timeout: .seconds(120),
            maxResponseMessageBytes: BenchSetup.maxMessageBytes,
            allowsInsecureCredentials: true,
            retryPolicy: retryPolicy
        )
        if let session {
            options.authTokenProvider = session
        } else {
            options.oauth2AccessToken = BenchSetup.token
        }
        self.client = Grpc_Testing_TestServiceClient(channel: channel)
        self.options = options
        var held = options
        held.initialMetadata.addString("1", forKey: BenchSetup.holdKey)
        self.heldOptions = held
        self.request = setup.makeRequest()
        self.preferredExecutor = onChannelExecutor ? channel.executor : nil
    }

    nonisolated(nonsending) func call() async throws {
        _ = try await client.unaryCall(request, options: options)
    }

    func heldCall() async throws {
        _ = try await client.unaryCall(request, options: heldOptions)
    }

    func control(_ command: String) async throws -> Int {
        var control = options
        control.initialMetadata.addString(command, forKey: BenchSetup.controlKey)
        let answer = try await client.unaryCall(Grpc_Testing_SimpleRequest(), options: control).message.username
        guard let count = Int(answer) else {
            throw BenchFailure(description: "the server answered \(command) with \(answer.debugDescription)")
        }
        return count
    }

    func shutdown() async {
        client.channel.close()
    }
}
