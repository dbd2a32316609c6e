import ArgumentParser
import AuthRPC
import Foundation
import Logging

/// `interop_client`: gRPC's cross-language interop test client, for any gRPC interop server.
@main
struct InteropClient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "interop_client",
        abstract: "Runs one of gRPC's interop test cases (doc/interop-test-descriptions.md) against a server.",
        discussion: """
            Flags take gRPC's spelling: --server_port=8080, --use_tls=true. The exit status is 0 \
            when the case passed, 1 when it failed (what was expected and what was seen go to \
            stderr), 2 when it could not start (credentials, files), 64 for a usage error.

            Supported cases:
            \(TestCase.helpList)

            Out of scope: the streaming cases (\(TestCase.streaming.joined(separator: ", "))), as \
            this library makes unary calls only, and cacheable_unary (GET requests through a \
            caching proxy). custom_metadata and status_code_and_message run \
            their unary half. google_default_credentials and compute_engine_channel_credentials \
            always use TLS: there is no ALTS here.
            """
    )

    @OptionGroup var flags: InteropFlags

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let testCase = try flags.selectedCase
        let runner = testCase.runner
        let sources = CredentialSources(flags: flags, environment: ProcessInfo.processInfo.environment)
        do {
            let credentials = try await runner.channelCredentials(sources)
            let channels = ChannelFactory(flags: flags, channelCredentials: credentials, forcesTLS: runner.forcesTLS)
            let channel = try channels.makeChannel()
            let context = CaseContext(flags: flags, sources: sources, channels: channels, channel: channel)
            let outcome: (any Error)?
            do {
                try await runner.run(context)
                outcome = nil
            } catch {
                outcome = error
            }
            await channel.shutdown()
            if let outcome { throw outcome }
        } catch let failure as CaseFailure {
            printError("interop_client: \(testCase.rawValue) FAILED: \(failure)")
            throw ExitCode(1)
        } catch let failure as SetupFailure {
            printError("interop_client: \(testCase.rawValue) could not start: \(failure)")
            throw ExitCode(2)
        }
        print("\(testCase.rawValue): passed")
    }
}
