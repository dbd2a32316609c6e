import Foundation
import OAuth2

/// One JSON object of an external_account file (the file itself, its `credential_source`, a
/// `format`, `headers`, `service_account_impersonation`), with typed field access whose errors
/// name the field and the file but never quote a value.
struct ConfigurationFields {
    /// Where the JSON came from (a path, or "the JSON given").
    let source: String
    /// Where this object is in the file (`credential_source.format`); `nil` for the file itself.
    let path: String?
    private let object: [String: Any]

    /// The fields of a credential file.
    init(_ file: CredentialFile) {
        source = file.source
        path = nil
        object = file.object
    }

    private init(object: [String: Any], path: String, source: String) {
        self.object = object
        self.path = path
        self.source = source
    }

    /// Where a field is, for messages: `credential_source.format.type in /path/file.json`.
    func place(_ key: String) -> String {
        "\(qualified(key)) in \(source)"
    }

    /// The field's name with the objects it is in: `credential_source.format.type`.
    func qualified(_ key: String) -> String {
        path.map { "\($0).\(key)" } ?? key
    }

    /// Whether the object has `key` with a value other than JSON `null`.
    func has(_ key: String) -> Bool {
        guard let value = object[key] else { return false }
        return !(value is NSNull)
    }

    /// A nested object, or `nil` when the field is absent.
    func nested(_ key: String) throws(OAuthError) -> ConfigurationFields? {
        guard has(key) else { return nil }
        guard let value = object[key] as? [String: Any] else {
            throw OAuthError(.invalidConfiguration, "\(place(key)) is not a JSON object")
        }
        return ConfigurationFields(object: value, path: qualified(key), source: source)
    }

    /// A whole number, or `nil` when the field is absent.
    func integer(_ key: String) throws(OAuthError) -> Int? {
        guard has(key) else { return nil }
        // JSON true and false are NSNumbers too; their type code is "c".
        guard let number = object[key] as? NSNumber, String(cString: number.objCType) != "c",
            let value = object[key] as? Int
        else {
            throw OAuthError(.invalidConfiguration, "\(place(key)) is not a whole number")
        }
        return value
    }

    /// A string field: `nil` when absent (an error when `required`); an empty string counts as
    /// absent.
    func string(_ key: String, required: Bool = false) throws(OAuthError) -> String? {
        guard has(key) else {
            if required { throw OAuthError(.invalidConfiguration, "\(source) has no \(qualified(key))") }
            return nil
        }
        guard let text = object[key] as? String else {
            throw OAuthError(.invalidConfiguration, "\(place(key)) is not a string")
        }
        if text.isEmpty {
            if required { throw OAuthError(.invalidConfiguration, "\(place(key)) is empty") }
            return nil
        }
        return text
    }

    /// A field that goes into a header, a form or a URL: printable ASCII without spaces, quotes
    /// or backslashes, at most `maximumLength` characters. The value is never quoted in the error.
    func token(_ key: String, maximumLength: Int = 256, required: Bool = false) throws(OAuthError) -> String? {
        guard let value = try string(key, required: required) else { return nil }
        guard value.utf8.count <= maximumLength, value.utf8.allSatisfy(Self.isTokenByte) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(place(key)) is not a plain token of at most \(maximumLength) printable characters"
            )
        }
        return value
    }

    /// An `http` or `https` URL with a host and no user information, or `nil` when the field is
    /// absent. Whether plain http may be used is the caller's decision.
    func url(_ key: String, required: Bool = false) throws(OAuthError) -> URL? {
        guard let text = try string(key, required: required) else { return nil }
        guard text.utf8.count <= 2048, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.user == nil, url.password == nil
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(place(key)) is not an http or https URL with a host (and no user or password)"
            )
        }
        return url
    }

    /// A JSON object of strings (`headers`), or `nil` when the field is absent.
    func stringMap(_ key: String) throws(OAuthError) -> [String: String]? {
        guard has(key) else { return nil }
        guard let object = object[key] as? [String: Any] else {
            throw OAuthError(.invalidConfiguration, "\(place(key)) is not a JSON object")
        }
        var map: [String: String] = [:]
        for (name, value) in object {
            guard let text = value as? String else {
                throw OAuthError(.invalidConfiguration, "\(place(key)) has a value that is not a string")
            }
            map[name] = text
        }
        return map
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
