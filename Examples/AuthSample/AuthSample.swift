import ArgumentParser
import Foundation
import Logging

/// `auth_sample`: sign in with OAuth 2.0, then call gRPC's auth test service and show which user
/// and scope the server saw.
@main
struct AuthSample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth_sample",
        abstract: "Sign in with OAuth 2.0 and call grpc.testing.TestService/UnaryCall with the token.",
        discussion: """
            Sessions are kept in $XDG_CONFIG_HOME/swift-authrpc/<name>.json (else ~/.config/...), \
            mode 0600, in a 0700 directory; a file or directory open to others is used with a \
            warning. Tokens and secrets are never printed; text from servers and issuers is shown \
            with control characters escaped.

            Exit codes:
            \(ExitStatus.helpTable)
            """,
        subcommands: [LoginCommand.self, CallCommand.self, StatusCommand.self, LogoutCommand.self],
        defaultSubcommand: CallCommand.self
    )
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "The stored session's name.")
    var session: String = "default"

    @Flag(name: .long, help: "Log what the library does (connections, refreshes) to stderr. Never tokens.")
    var verbose = false

    /// A logger on stderr: errors only (failures are reported as messages), everything with --verbose.
    func logger(label: String) -> Logger {
        var logger = Logger(label: label) { PrintableLogHandler(label: $0) }
        logger.logLevel = verbose ? .debug : .error
        return logger
    }

    /// The file store holding the named session.
    func store() throws(ToolFailure) -> FileStoreHandle {
        try FileStoreHandle(name: session)
    }
}

/// Runs `body`, turning every failure into a message and an exit code.
func runReportingFailures(json: Bool = false, _ body: () async throws(ToolFailure) -> Void) async throws {
    do {
        try await body()
    } catch {
        Output.report(error, json: json)
        throw error.status.exitCode
    }
}
