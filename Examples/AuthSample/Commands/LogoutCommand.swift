import ArgumentParser
import OAuth2

/// `auth_sample logout`: forgets the stored session, optionally revoking it at the issuer first.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove the stored session (with --revoke, revoke its grant at the issuer first).",
        discussion: "A session file that cannot be read is removed all the same, with a warning (it cannot be revoked)."
    )

    @Flag(name: .long, help: "Revoke the refresh token at the issuer (RFC 7009) before removing the session.")
    var revoke = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --revoke: also trust this CA (PEM file) for the revocation endpoint.",
            valueName: "file"
        )
    )
    var caCert: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        try await runReportingFailures { () async throws(ToolFailure) in
            let handle = try common.store()
            let stored: AuthState?
            do throws(ToolFailure) {
                stored = try handle.retrieve()
            } catch {
                // Logging out must work whatever is in the file: it is removed unread.
                Output.warning(
                    error.message
                        + (revoke
                            ? "; so it could not be revoked at the issuer (revoke the grant there if it may still be valid)"
                            : "")
                        + "; removing it anyway"
                )
                try remove(handle)
                return
            }
            guard let state = stored else { throw handle.noSession }
            if revoke {
                let session = AuthSession(
                    state: state,
                    transport: try OAuthTrust.transport(caCert: caCert),
                    logger: common.logger(label: "auth_sample.session")
                )
                do throws(OAuthError) {
                    try await session.revoke()
                } catch {
                    let status: ExitStatus = error.isTransient ? .tokenEndpointUnavailable : .signInFailed
                    throw ToolFailure(
                        status: status,
                        message: "could not revoke the session: \(error.message)",
                        hint: "the stored session was kept; try again, or log out without --revoke"
                    )
                }
                Output.line("Revoked the grant at the issuer.")
            }
            try remove(handle)
        }
    }

    private func remove(_ handle: FileStoreHandle) throws(ToolFailure) {
        do throws(OAuthError) {
            try handle.store.remove()
        } catch {
            throw ToolFailure(status: .internalError, message: "could not remove the stored session: \(error.message)")
        }
        Output.line("Removed session '\(handle.name)' (\(handle.path)).")
    }
}
