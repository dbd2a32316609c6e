import Foundation
import OAuth2

/// Reading `credential_source`: exactly one of `file`, `url`, `executable` or an AWS
/// `environment_id`, each checked as google-auth checks it, and more strictly where a field
/// would otherwise be used blindly (header names and values, the command's program).
extension ExternalAccountCredentials {
    /// The bounds of an executable's `timeout_millis`, and its default.
    static let executableTimeouts: ClosedRange<Duration> = .seconds(5) ... .seconds(120)
    static let defaultExecutableTimeout: Duration = .seconds(30)
    /// The bounds of `interactive_timeout_millis` (read and checked; interactive mode, which needs
    /// a terminal, is not supported).
    static let interactiveTimeouts: ClosedRange<Duration> = .seconds(30) ... .seconds(1800)

    static func credentialSource(
        _ fields: ConfigurationFields,
        subjectTokenType: String
    ) throws(OAuthError) -> ExternalAccountCredentialSource {
        // An AWS source names its role-credentials `url` too: `environment_id` makes it AWS's.
        let kinds =
            fields.has("environment_id")
            ? ["file", "executable", "environment_id", "certificate"] : ["file", "url", "executable", "certificate"]
        let present = kinds.filter(fields.has)
        guard present.count == 1, let kind = present.first else {
            throw OAuthError(
                .invalidConfiguration,
                present.isEmpty
                    ? "\(fields.place("file")): the credential_source names no file, url, executable or AWS environment_id"
                    : "credential_source in \(fields.source) names \(present.joined(separator: " and ")); give exactly one"
            )
        }
        let isAWSType = subjectTokenType == awsSubjectTokenType
        if isAWSType != (kind == "environment_id") {
            throw OAuthError(
                .invalidConfiguration,
                isAWSType
                    ? "\(fields.source): subject_token_type is AWS's, but the credential_source has no AWS environment_id"
                    : "\(fields.source): an AWS credential_source (environment_id) needs subject_token_type \(awsSubjectTokenType)"
            )
        }
        switch kind {
        case "file":
            let path = try fields.string("file", required: true)!
            return ExternalAccountCredentialSource(.file(path: path, format: try format(fields)))
        case "url":
            let url = try fields.url("url", required: true)!
            return ExternalAccountCredentialSource(
                .url(url, headers: try headers(fields), format: try format(fields))
            )
        case "executable":
            return ExternalAccountCredentialSource(.executable(try executable(fields.nested("executable")!)))
        case "environment_id":
            return ExternalAccountCredentialSource(.aws(try aws(fields)))
        default:
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("certificate")): X.509 certificate sources (mutual TLS to the Security Token Service) are not supported"
            )
        }
    }

    private static func format(
        _ fields: ConfigurationFields
    ) throws(OAuthError) -> ExternalAccountCredentialSource.Format {
        guard let format = try fields.nested("format") else { return .text }
        switch try format.string("type") ?? "text" {
        case "text":
            return .text
        case "json":
            guard let field = try format.string("subject_token_field_name") else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\(format.source) has format type json but no \(format.qualified("subject_token_field_name"))"
                )
            }
            return .json(field: field)
        default:
            throw OAuthError(.invalidConfiguration, "\(format.place("type")) is neither text nor json")
        }
    }

    /// The url source's headers, sorted by name: RFC 9110 token names, values without control
    /// characters, at most 32 of them.
    private static func headers(_ fields: ConfigurationFields) throws(OAuthError) -> [(name: String, value: String)] {
        guard let map = try fields.stringMap("headers") else { return [] }
        guard map.count <= 32 else {
            throw OAuthError(.invalidConfiguration, "\(fields.place("headers")) has more than 32 headers")
        }
        for (name, value) in map {
            let isToken =
                !name.isEmpty && name.utf8.count <= 256
                && name.utf8.allSatisfy { byte in
                    byte > 0x20 && byte < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
                }
            guard isToken else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\(fields.place("headers")) has a header name that is not a token"
                )
            }
            guard value.utf8.count <= 8192, value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\(fields.place("headers")) has a value for \(name) with control characters or of more than 8192 bytes"
                )
            }
        }
        return map.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }

    private static func executable(
        _ fields: ConfigurationFields
    ) throws(OAuthError) -> ExternalAccountCredentialSource.Executable {
        let command = try fields.string("command", required: true)!
        let words: [String]
        do { words = try CommandWords.split(command) } catch {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("command")) cannot be split into words: \(error == .unclosedQuote ? "a quote is not closed" : "it ends with a backslash")"
            )
        }
        guard let program = words.first, program.hasPrefix("/") else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("command")) must start with the program's absolute path (no PATH search, no shell)"
            )
        }
        guard !words.contains(where: { $0.utf8.contains(0) }) else {
            throw OAuthError(.invalidConfiguration, "\(fields.place("command")) contains a NUL character")
        }
        var timeout = defaultExecutableTimeout
        if let millis = try fields.integer("timeout_millis") {
            timeout = .milliseconds(millis)
            guard executableTimeouts.contains(timeout) else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\(fields.place("timeout_millis")) is \(millis); it must be 5000 to 120000 milliseconds"
                )
            }
        }
        if let millis = try fields.integer("interactive_timeout_millis"),
            !interactiveTimeouts.contains(.milliseconds(millis))
        {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("interactive_timeout_millis")) is \(millis); it must be 30000 to 1800000 milliseconds"
            )
        }
        return ExternalAccountCredentialSource.Executable(
            command: words,
            timeout: timeout,
            outputFile: try fields.string("output_file")
        )
    }

    private static func aws(_ fields: ConfigurationFields) throws(OAuthError) -> ExternalAccountCredentialSource.AWS {
        let environment = try fields.string("environment_id", required: true)!
        guard environment.hasPrefix("aws"), let version = Int(environment.dropFirst(3)),
            environment.dropFirst(3).allSatisfy(\.isASCII)
        else {
            throw OAuthError(.invalidConfiguration, "\(fields.place("environment_id")) is not awsN")
        }
        guard version == 1 else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("environment_id")) asks for AWS version \(version); only aws1 is supported"
            )
        }
        guard let template = try fields.string("regional_cred_verification_url") else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.source) has no credential_source.regional_cred_verification_url"
            )
        }
        let sample = template.replacingOccurrences(of: "{region}", with: "us-east-1")
        guard template.utf8.count <= 2048, template.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let url = URL(string: sample), url.scheme?.lowercased() == "https", url.host?.isEmpty == false,
            url.user == nil, url.password == nil
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("regional_cred_verification_url")) is not an https URL (with {region} for the region): it is the AWS STS request that is signed"
            )
        }
        let source = ExternalAccountCredentialSource.AWS(
            verificationURLTemplate: template,
            regionURL: try fields.url("region_url"),
            credentialsURL: try fields.url("url"),
            sessionTokenURL: try fields.url("imdsv2_session_token_url")
        )
        // The IMDSv2 session token one host gives goes with every request to the others, and
        // the role's keys come back from them: they must be one service.
        let named =
            [("region_url", source.regionURL), ("url", source.credentialsURL)]
            + [("imdsv2_session_token_url", source.sessionTokenURL)]
        let places = named.compactMap { name, url in url.map { (name, Self.authority(of: $0)) } }
        if let first = places.first, let other = places.first(where: { $0.1 != first.1 }) {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.source): credential_source.\(first.0) and credential_source.\(other.0) name different hosts (\(first.1), \(other.1)); the AWS metadata URLs must name one instance metadata service"
            )
        }
        return source
    }

    /// `scheme://host:port` of `url`, lower case, the port the scheme's default when absent.
    private static func authority(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let host = (url.host ?? "").lowercased()
        return "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\(port)"
    }
}
