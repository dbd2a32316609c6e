import ArgumentParser
import AuthRPC
import Foundation

/// The tool's exit codes: one per failure class, so scripts can tell them apart.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// The server answered with an error status not listed below.
    case rpcFailed = 2
    /// The call's deadline passed.
    case deadlineExceeded = 3
    /// The target's host name did not resolve.
    case hostNotFound = 10
    /// Nothing answered at the target (refused, unreachable, timed out).
    case connectionFailed = 11
    /// The server's certificate does not chain to a trusted root.
    case untrustedCertificate = 12
    /// The server's certificate is not valid for the name asked for.
    case hostnameMismatch = 13
    /// TLS or HTTP/2 negotiation failed for another reason.
    case tlsFailed = 14
    /// The connection broke during the call.
    case connectionLost = 15
    /// Credentials were refused locally: a plaintext target without --allow-insecure-credentials.
    case insecureCredentials = 20
    /// The server rejected the credentials (UNAUTHENTICATED).
    case unauthenticated = 21
    /// No signed-in session is stored.
    case noSession = 22
    /// The stored session can no longer refresh (revoked or expired grant): sign in again.
    case reauthenticate = 23
    /// The token endpoint could not be reached; the session is intact, try again later.
    case tokenEndpointUnavailable = 24
    /// The server refused the call (PERMISSION_DENIED).
    case permissionDenied = 25
    /// `--adc` found no Google credentials, or what it found cannot be used. (A file named by
    /// `--service-account-key` or `--authorized-user` that cannot be used is a usage error.)
    case googleCredentialsUnusable = 26
    /// The token endpoint refused the Google credentials (a revoked key or grant, an unknown subject).
    case googleCredentialsRefused = 27
    /// Signing in failed (denied, expired, or the issuer misbehaved).
    case signInFailed = 30
    /// The command line was invalid.
    case usage = 64
    /// Something unexpected (a bug).
    case internalError = 70

    var exitCode: ExitCode { ExitCode(rawValue) }

    /// The table shown in `--help`.
    static var helpTable: String {
        allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0)) \($0.summary)" }
            .joined(separator: "\n")
    }

    var summary: String {
        switch self {
        case .success: return "success"
        case .rpcFailed: return "the server answered with an error status"
        case .deadlineExceeded: return "deadline exceeded"
        case .hostNotFound: return "host not found"
        case .connectionFailed: return "could not connect (refused, unreachable, timed out)"
        case .untrustedCertificate: return "server certificate not trusted"
        case .hostnameMismatch: return "server certificate not valid for this name"
        case .tlsFailed: return "TLS or HTTP/2 negotiation failed"
        case .connectionLost: return "connection lost"
        case .insecureCredentials: return "credentials refused on a plaintext connection"
        case .unauthenticated: return "the server rejected the credentials"
        case .noSession: return "no stored session: sign in first"
        case .reauthenticate: return "the stored session was revoked or expired: sign in again"
        case .tokenEndpointUnavailable: return "token endpoint unreachable: try again later"
        case .permissionDenied: return "permission denied"
        case .googleCredentialsUnusable:
            return "no usable Application Default Credentials (none found, or the one found is invalid)"
        case .googleCredentialsRefused: return "the Google credentials were refused"
        case .signInFailed: return "sign-in failed"
        case .usage: return "invalid command line"
        case .internalError: return "internal error"
        }
    }
}

/// A failure the tool reports to a person: what happened, what to do, and the exit code.
struct ToolFailure: Error {
    var status: ExitStatus
    var message: String
    var hint: String?
    /// Extra lines to print (e.g. the server's challenge).
    var details: [String] = []
    /// The gRPC status of a failed call (`nil` when no call was made).
    var code: StatusCode?
}
