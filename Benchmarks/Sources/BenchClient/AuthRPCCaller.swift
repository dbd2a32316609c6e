import AuthRPC
import AuthSampleService
import Foundation
import OAuth2

/// swift-authrpc: one `Channel`, a static token or an `AuthSession` whose token is fresh.
struct AuthRPCCaller: UnaryCaller {
    let client: Grpc_Testing_TestServiceClient
    let options: CallOptions
    let request: Grpc_Testing_SimpleRequest

    init(_ setup: BenchSetup, useSession: Bool) throws {
        let security: TransportSecurity = setup.tls
            ? .tls(TLSConfiguration(trustRoots: .certificates(pem: try String(contentsOfFile: setup.caPath, encoding: .utf8))))
            : .plaintext
        let channel = try Channel(target: "\(setup.tls ? "localhost" : "127.0.0.1"):\(setup.port)", transportSecurity: security)
        var options = CallOptions(timeout: .seconds(60), allowsInsecureCredentials: true)
        if useSession {
            let state = AuthState(
                configuration: ServiceConfiguration(tokenEndpoint: URL(string: "https://issuer.invalid/token")!),
                client: OAuthClient(id: "bench"), scopes: [], grant: GrantRecord(type: .deviceCode),
                accessToken: BenchSetup.token, accessTokenExpiresAt: Date().addingTimeInterval(3600), accessTokenIssuedAt: Date())
            options.authTokenProvider = AuthSession(state: state)
        } else {
            options.oauth2AccessToken = BenchSetup.token
        }
        self.client = Grpc_Testing_TestServiceClient(channel: channel)
        self.options = options
        self.request = setup.request
    }

    func call() async throws {
        _ = try await client.unaryCall(request, options: options)
    }

    func shutdown() async {
        client.channel.close()
    }
}
