import Foundation
import OAuth2

@testable import GoogleAuth

/// The string members of a credential file: what must never be quoted back.
private func credentialSecrets(_ bytes: [UInt8]) -> [String] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return [] }
    return ["private_key", "client_secret", "refresh_token"].compactMap { object[$0] as? String }
}

/// The first 24 characters of each base64 line of the file's `private_key`: a message quoting
/// any part of a line is caught, not only one quoting the whole key.
private func keyLineStarts(_ bytes: [UInt8]) -> [String] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
        let key = object["private_key"] as? String
    else { return [] }
    return key.split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 24 }.map { String($0.prefix(24)) }
}

/// `ServiceAccountKey(json:source:)`: a service-account key file, its RSA private key parsed by
/// OpenSSL. Neither an error nor the key's description quotes the private key.
enum ServiceAccountKeyTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let secrets = credentialSecrets(bytes)
        switch Result(catching: { () throws(OAuthError) in try ServiceAccountKey(json: Data(bytes), source: nil) }) {
        case .success(let key):
            try require(key.clientEmail.contains("@"), "a client_email without @ was taken")
            let scheme = key.tokenURI.scheme?.lowercased()
            try require(
                scheme == "https" || (scheme == "http" && key.tokenURI.host.map(LoopbackHost.contains) == true),
                "an insecure token_uri was taken"
            )
            try requireNoSecret(key.description, secrets, "the key's description")
            try require(!key.description.contains("PRIVATE KEY"), "the key's description shows the private key")
            _ = key.identity
        case .failure(let error):
            try requireNoSecret(error.message, secrets + keyLineStarts(bytes), "a refused key file's message")
            try require(
                !error.message.contains("PRIVATE KEY-----"),
                "a refused key file's message quotes the private key"
            )
        }
    }
}

/// `AuthorizedUserCredentials(json:source:)`: gcloud's authorized_user file. Neither an error nor
/// the description quotes the client secret or the refresh token.
enum AuthorizedUserTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let secrets = credentialSecrets(bytes)
        let parsed = Result { () throws(OAuthError) in
            try AuthorizedUserCredentials(json: Data(bytes), source: nil)
        }
        switch parsed {
        case .success(let credentials):
            try requireNoSecret(
                credentials.description,
                secrets + [credentials.clientSecret, credentials.refreshToken],
                "the credentials' description"
            )
            _ = credentials.identity
        case .failure(let error):
            try requireNoSecret(error.message, secrets, "a refused authorized_user file's message")
        }
    }
}

/// `ApplicationDefaultCredentials.resolve(in:)` reading what it finds on disk: the input as the
/// file `GOOGLE_APPLICATION_CREDENTIALS` names, then as gcloud's well-known file, and as the DMI
/// product-name file with its first line as `GCE_METADATA_HOST`.
enum ADCFileTarget {
    /// One directory per process; the files in it are rewritten for each input.
    private static let directory = scratchDirectory("adc-file")

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let file = directory.appendingPathComponent("credentials.json")
        let wellKnown = directory.appendingPathComponent(ApplicationDefaultCredentials.wellKnownFileName)
        try writeScratchFile(bytes, to: file)
        try writeScratchFile(bytes, to: wellKnown)
        let secrets = credentialSecrets(bytes)
        var input = FuzzInput(bytes)
        let firstLine = String(decoding: input.line(), as: UTF8.self)
        // The first two read the input as a credential file, whose secrets no message may quote;
        // the others read it as the product-name file and a host, which messages do quote.
        let environments: [(ApplicationDefaultCredentials.Environment, holdsSecrets: Bool)] = [
            (.init(variables: ["GOOGLE_APPLICATION_CREDENTIALS": file.path], productNamePath: "/nonexistent"), true),
            (.init(variables: ["CLOUDSDK_CONFIG": directory.path], productNamePath: "/nonexistent"), true),
            (
                .init(variables: ["HOME": "/nonexistent", "GCE_METADATA_HOST": firstLine], productNamePath: file.path),
                false
            ),
            (.init(variables: ["HOME": "/nonexistent"], productNamePath: file.path), false),
        ]
        for (environment, holdsSecrets) in environments {
            switch Result(catching: { () throws(OAuthError) in
                try ApplicationDefaultCredentials.resolve(in: environment)
            }) {
            case .success(let resolved):
                try requireNoSecret(resolved.description, secrets, "the resolved credential's description")
                if let host = resolved.credential.metadataHost {
                    try require(
                        ServiceHost.host(ofAuthority: host) != nil,
                        "a metadata host that is not HOST[:PORT] was taken"
                    )
                }
                _ = resolved.identity
            case .failure(let error):
                if holdsSecrets { try requireNoSecret(error.message, secrets, "an ADC error message") }
            }
        }
    }
}
