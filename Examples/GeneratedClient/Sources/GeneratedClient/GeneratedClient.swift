import AuthRPC
import Foundation

/// Calls the sandbox's grpc.testing.TestService through the client the AuthRPCGenerator plugin
/// generated from `sandbox/test_service.proto` at build time.
///
///     AUTHRPC_TOKEN=... generated-client localhost:PORT CA.pem
///
/// The token comes from the environment, never the command line (where `ps` would show it).
@main
struct GeneratedClient {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let token = ProcessInfo.processInfo.environment["AUTHRPC_TOKEN"], !token.isEmpty
        else {
            FileHandle.standardError.write(Data("usage: AUTHRPC_TOKEN=... GeneratedClient HOST:PORT CA.pem\n".utf8))
            exit(2)
        }
        do {
            let caPEM = try String(contentsOfFile: arguments[2], encoding: .utf8)
            let channel = try Channel(
                target: arguments[1],
                transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: caPEM))),
                defaultCallOptions: CallOptions(credentials: .accessToken(token))
            )
            // Awaited before the program exits, so the connection ends cleanly.
            do {
                try await callService(channel)
            } catch {
                await channel.shutdown()
                throw error
            }
            await channel.shutdown()
        } catch let error as RPCError {
            FileHandle.standardError.write(Data("call failed: \(error)\n".utf8))
            exit(1)
        } catch {
            FileHandle.standardError.write(Data("failed: \(error)\n".utf8))
            exit(1)
        }
    }

    static func callService(_ channel: Channel) async throws {
        let client = Grpc_Testing_TestServiceClient(channel: channel)
        _ = try await client.emptyCall()
        var request = Sandbox_Identity_WhoAmIRequest()
        request.fillUser = true
        request.fillScope = true
        let response = try await client.unaryCall(request)
        print("Used scope: \(response.message.scope) on behalf of user \(response.message.user)")
        print(
            "Called \(Grpc_Testing_TestServiceClient.Methods.unaryCall.path) (grpc-status \(response.trailers.firstString(forKey: "grpc-status") ?? "?"))"
        )
    }
}
