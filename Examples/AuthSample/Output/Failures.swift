import AuthRPC
import GoogleAuth
import OAuth2

/// Turns library errors into what a person can act on, with the exit code of their class.
enum Failures {
    /// A failed call, carrying its gRPC status code whatever the class.
    static func call(_ error: RPCError, target: String, credentials: ResolvedCredentials) -> ToolFailure {
        var failure = classify(error, target: target, credentials: credentials)
        failure.code = error.code
        return failure
    }

    private static func classify(_ error: RPCError, target: String, credentials: ResolvedCredentials) -> ToolFailure {
        if let oauth = error.cause as? OAuthError {
            if let google = credentials.google { return self.google(oauth, google) }
            return session(oauth, name: credentials.sessionName ?? "default")
        }
        if let transport = error.cause as? TransportError {
            return self.transport(transport, error: error, target: target)
        }
        switch error.code {
        case .deadlineExceeded:
            return ToolFailure(
                status: .deadlineExceeded,
                message: "the call took longer than its deadline: \(error.message)",
                hint: "raise --timeout, or check that the server at \(target) is responsive"
            )
        case .unauthenticated:
            var failure = ToolFailure(
                status: .unauthenticated,
                message: "the server rejected the credentials: \(error.message)",
                hint: unauthenticatedHint(credentials)
            )
            if let challenge =
                (error.trailers.firstString(forKey: "www-authenticate")
                    ?? error.headers.firstString(forKey: "www-authenticate"))
            {
                failure.details.append("Server challenge: www-authenticate: \(challenge)")
            }
            return failure
        case .permissionDenied:
            return ToolFailure(
                status: .permissionDenied,
                message: "the server refused the call: \(error.message)",
                hint:
                    "the token's user or scope is not allowed to call this method; sign in with the right account or scope"
            )
        case .unavailable:
            return ToolFailure(
                status: .connectionFailed,
                message: "the server is unavailable: \(error.message)",
                hint: "try again later"
            )
        default:
            return ToolFailure(status: .rpcFailed, message: "the call failed with \(error.code): \(error.message)")
        }
    }

    private static func unauthenticatedHint(_ credentials: ResolvedCredentials) -> String {
        if let google = credentials.google {
            return
                "the server refused the token of \(google.credentials.identity); check the scopes (--scope) and that the account may call this service"
        }
        if let name = credentials.sessionName {
            return "the stored session's token was refused even after a refresh; sign in again: auth_sample login ..."
                + (name == "default" ? "" : " --session \(name)")
        }
        if credentials.value == nil {
            return "this server needs a token: sign in with auth_sample login, or pass --token"
        }
        return "the token from \(credentials.source) is invalid or expired; get a new one, or use a stored session"
    }

    private static func transport(_ cause: TransportError, error: RPCError, target: String) -> ToolFailure {
        switch cause.kind {
        case .hostNotFound:
            return ToolFailure(
                status: .hostNotFound,
                message: "cannot find the host of \(target): \(cause.message)",
                hint: "check the --target host name"
            )
        case .connectionRefused, .connectTimeout, .networkUnreachable:
            return ToolFailure(
                status: .connectionFailed,
                message: "cannot connect to \(target): \(cause.message)",
                hint: "check the --target port and that the server runs"
            )
        case .proxyFailed:
            return ToolFailure(
                status: .connectionFailed,
                message: "cannot reach \(target) through the HTTP proxy: \(cause.message)",
                hint: "check the proxy settings (grpc_proxy, https_proxy, no_proxy) and the proxy's credentials"
            )
        case .untrustedCertificate:
            return ToolFailure(
                status: .untrustedCertificate,
                message: "the server's certificate is not trusted: \(cause.message)",
                hint: "for a private CA, pass its certificate with --ca-cert FILE"
            )
        case .hostnameMismatch:
            return ToolFailure(
                status: .hostnameMismatch,
                message: "the server's certificate is not valid for this name: \(cause.message)",
                hint: "connect by a name the certificate carries, or name it with --authority"
            )
        case .certificateExpired, .http2NotSupported, .tlsHandshakeFailed, .invalidTLSConfiguration:
            return ToolFailure(
                status: .tlsFailed,
                message: "TLS with \(target) failed: \(cause.message)",
                hint: "check that \(target) speaks gRPC over TLS (use --plaintext for an h2c server)"
            )
        default:
            if error.code == .deadlineExceeded {
                return ToolFailure(
                    status: .deadlineExceeded,
                    message: "the call took longer than its deadline: \(error.message)",
                    hint: "raise --timeout"
                )
            }
            return ToolFailure(
                status: .connectionLost,
                message: "the connection to \(target) failed during the call: \(error.message)",
                hint: "try again"
            )
        }
    }

    /// A session that could not produce a token.
    static func session(_ error: OAuthError, name: String) -> ToolFailure {
        let login = "auth_sample login ..." + (name == "default" ? "" : " --session \(name)")
        switch error.kind {
        case .authorization, .noRefreshToken:
            return ToolFailure(
                status: .reauthenticate,
                message: "the stored session '\(name)' can no longer get tokens: \(error.message)",
                hint: "sign in again: \(login) (the stored session was kept; `auth_sample logout` removes it)"
            )
        case .transient:
            return ToolFailure(
                status: .tokenEndpointUnavailable,
                message: "cannot refresh the access token now: \(error.message)",
                hint: "the session is intact; try again later"
            )
        default:
            return ToolFailure(status: .internalError, message: "the session failed: \(error.message)")
        }
    }

    /// Google credentials that could not produce a token for a call.
    static func google(_ error: OAuthError, _ google: GoogleSelection) -> ToolFailure {
        let who = "\(google.credentials.identity)"
        switch error.kind {
        case .authorization, .noRefreshToken:
            let identity = google.credentials.identity
            let hint: String
            if identity.kind == .impersonatedServiceAccount {
                hint =
                    "check that \(identity.chain.dropLast().joined(separator: " -> ")) may impersonate the next account "
                    + "(roles/iam.serviceAccountTokenCreator on each link) and that the source credentials are still valid"
            } else if identity.kind == .authorizedUser {
                hint = "sign in again: gcloud auth application-default login"
            } else {
                hint =
                    "check that the key is still valid and enabled, the clock is right, and any subject is allowed (domain-wide delegation)"
            }
            return ToolFailure(
                status: .googleCredentialsRefused,
                message: "the Google credentials \(who) were refused: \(error.message)",
                hint: hint
            )
        case .transient:
            return ToolFailure(
                status: .tokenEndpointUnavailable,
                message: "cannot get an access token for \(who) now: \(error.message)",
                hint: "try again later"
            )
        default:
            return ToolFailure(
                status: .googleCredentialsUnusable,
                message: "the Google credentials \(who) cannot get a token: \(error.message)"
            )
        }
    }

    /// Application Default Credentials that could not be found, read or used.
    static func googleSetup(_ error: OAuthError) -> ToolFailure {
        if let report = error.underlying as? ApplicationDefaultCredentials.SearchReport {
            return ToolFailure(
                status: .googleCredentialsUnusable,
                message: "no Google Application Default Credentials found",
                hint:
                    "set GOOGLE_APPLICATION_CREDENTIALS to a key file, run `gcloud auth application-default login`, or pass --service-account-key FILE or --authorized-user FILE",
                details: ["Looked at:"]
                    + report.attempts.enumerated().map {
                        "  \($0.offset + 1). \($0.element.place): \($0.element.outcome)"
                    }
            )
        }
        return ToolFailure(
            status: .googleCredentialsUnusable,
            message: "cannot use the Application Default Credentials: \(error.message)"
        )
    }

    /// A sign-in that did not complete.
    static func signIn(_ error: OAuthError) -> ToolFailure {
        if error.isTransient {
            return ToolFailure(
                status: .tokenEndpointUnavailable,
                message: "cannot reach the authorization server: \(error.message)",
                hint: "try again later"
            )
        }
        let hint: String?
        switch error.oauthErrorCode {
        case "access_denied": hint = "the sign-in was refused; run login again to retry"
        case "expired_token": hint = "the code expired; run login again and approve sooner"
        case "invalid_client", "unauthorized_client": hint = "check --client-id and --client-secret"
        case "invalid_scope": hint = "check --scope"
        default: hint = nil
        }
        return ToolFailure(status: .signInFailed, message: "sign-in failed: \(error.message)", hint: hint)
    }
}
