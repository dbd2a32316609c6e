import Foundation
import OAuth2

/// Where an `external_account` file's subject token comes from: its `credential_source`.
///
/// One of four kinds (``Kind``): a file, a URL, an executable, or AWS. The properties say where
/// the token is read; nothing here is a secret (the file names places, not tokens).
public struct ExternalAccountCredentialSource: Sendable, CustomStringConvertible {
    /// The kinds of subject-token source.
    ///
    /// A struct rather than an enum so that later versions can add kinds (an X.509 certificate,
    /// ...) without breaking code that compares them. Compare with `==`, or `switch` with a
    /// `default` case.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Wrapped: String, Sendable, Hashable {
            case file, url, executable, aws
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// A file holding the token (`credential_source.file`): a Kubernetes projected service
        /// account token, a token another tool writes.
        public static let file = Self(.file)
        /// A URL answering with the token (`credential_source.url`): GitHub Actions' OIDC token,
        /// Azure's instance metadata service.
        public static let url = Self(.url)
        /// A program printing the token (`credential_source.executable`).
        public static let executable = Self(.executable)
        /// A signed AWS `GetCallerIdentity` request, made with the environment's AWS credentials
        /// or the instance metadata service's (`credential_source.environment_id` `aws1`).
        public static let aws = Self(.aws)

        /// `file`, `url`, `executable` or `aws`.
        public var description: String { wrapped.rawValue }
    }

    /// How the token is read from a file or a URL's answer.
    enum Format: Sendable, Equatable {
        /// The whole text is the token.
        case text
        /// The text is a JSON object; the token is the string field named here.
        case json(field: String)
    }

    /// An executable source's settings.
    struct Executable: Sendable {
        /// The program's absolute path, then its arguments (the `command` split).
        var command: [String]
        /// How long it may run (`timeout_millis`; 5 to 120 s, 30 s by default).
        var timeout: Duration
        /// Where it caches its answer (`output_file`), read before running it.
        var outputFile: String?
    }

    /// An AWS source's settings: the URLs the file names.
    struct AWS: Sendable {
        /// `regional_cred_verification_url`, with `{region}` in it.
        var verificationURLTemplate: String
        /// `region_url`: the instance metadata path of the availability zone.
        var regionURL: URL?
        /// `url`: the instance metadata path of the role's credentials.
        var credentialsURL: URL?
        /// `imdsv2_session_token_url`: where an IMDSv2 session token is asked for first.
        var sessionTokenURL: URL?
    }

    enum Wrapped: Sendable {
        case file(path: String, format: Format)
        case url(URL, headers: [(name: String, value: String)], format: Format)
        case executable(Executable)
        case aws(AWS)
    }

    let wrapped: Wrapped

    init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    /// The kind of source.
    public var kind: Kind {
        switch wrapped {
        case .file: return .file
        case .url: return .url
        case .executable: return .executable
        case .aws: return .aws
        }
    }

    /// Where the token is read: the file's path, the URL (without its query), the program's path,
    /// or, for AWS, the credentials' metadata URL (`environment` when the file names none).
    public var location: String {
        switch wrapped {
        case .file(let path, _): return path
        case .url(let url, _, _): return GrantRequest.redacted(url)
        case .executable(let executable): return executable.command.first ?? ""
        case .aws(let aws): return aws.credentialsURL.map(GrantRequest.redacted) ?? "environment"
        }
    }

    /// The kind and where the token is read.
    public var description: String {
        switch wrapped {
        case .file(let path, _): return "file \(path)"
        case .url(let url, _, _): return "url \(GrantRequest.redacted(url))"
        case .executable(let executable): return "executable \(executable.command.first ?? "")"
        case .aws(let aws):
            return
                "aws (\(aws.credentialsURL.map { "instance metadata at \(GrantRequest.redacted($0))" } ?? "environment credentials"))"
        }
    }
}
