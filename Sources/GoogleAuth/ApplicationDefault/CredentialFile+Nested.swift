import AuthRPCSystem
import Foundation
import OAuth2

extension CredentialFile {
    /// The JSON object in field `key` (an impersonated_service_account file's
    /// `source_credentials`), read as a credential file of its own whose messages name
    /// `key in <this file>`.
    func nested(_ key: String) throws(OAuthError) -> CredentialFile {
        guard let value = object[key], !(value is NSNull) else {
            throw OAuthError(.invalidConfiguration, "\(source) has no \(key)")
        }
        guard let members = value as? [String: Any] else {
            throw OAuthError(.invalidConfiguration, "\(key) in \(source) is not a JSON object")
        }
        // The document's one private_key (a nested service account's) was taken out when it was read.
        return CredentialFile(object: members, source: "\(key) in \(source)", privateKeyPEM: privateKeyPEM)
    }

    /// The list of strings in field `key`; empty when absent or `null`.
    func strings(_ key: String, maximumCount: Int = 16) throws(OAuthError) -> [String] {
        guard let value = object[key], !(value is NSNull) else { return [] }
        guard let list = value as? [Any], list.count <= maximumCount, let strings = list as? [String] else {
            throw OAuthError(
                .invalidConfiguration,
                "\(key) in \(source) is not a list of at most \(maximumCount) strings"
            )
        }
        return strings
    }

    private init(object: [String: Any], source: String, privateKeyPEM: SecretBytes?) {
        self.source = source
        self.object = object
        self.privateKeyPEM = privateKeyPEM
    }
}
