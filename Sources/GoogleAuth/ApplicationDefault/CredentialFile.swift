import AuthRPCSystem
import Foundation
import OAuth2

/// A Google credential file read as a JSON object, with field access whose errors name the file
/// and the field but never quote a value (the file holds private keys and refresh tokens).
///
/// The file's bytes live in ``SecretBytes`` (cleared when released). A `private_key` is taken out
/// of them before the JSON is parsed (``JSONSecretField``): its text never becomes a Swift string,
/// and it is handed to OpenSSL from memory that is cleared afterwards.
struct CredentialFile {
    /// Credential files are a few kilobytes; anything much larger is not one.
    static let maximumSize = 64 * 1024

    /// Where the JSON came from, for messages (a path, or "the JSON given").
    let source: String
    let object: [String: Any]
    /// The decoded `private_key`, when the file has one.
    let privateKeyPEM: SecretBytes?

    /// Parses `data` (a copy of it is taken and cleared after parsing).
    init(json data: Data, source: String) throws(OAuthError) {
        guard data.count <= Self.maximumSize else {
            throw OAuthError(
                .invalidConfiguration,
                "\(source) is \(data.count) bytes; a Google credential file is at most \(Self.maximumSize)"
            )
        }
        try self.init(bytes: SecretBytes(copying: data), source: source)
    }

    /// Parses `bytes`, taking the private key out first.
    init(bytes: SecretBytes, source: String) throws(OAuthError) {
        self.source = source
        privateKeyPEM = JSONSecretField.take("private_key", from: bytes)
        let parsed = bytes.withUnsafeBytes { buffer -> Any? in
            guard let base = buffer.baseAddress else { return nil }
            let data = Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: base),
                count: buffer.count,
                deallocator: .none
            )
            return try? JSONSerialization.jsonObject(with: data)
        }
        guard let object = parsed as? [String: Any] else {
            throw OAuthError(.invalidConfiguration, "\(source) is not a JSON object")
        }
        self.object = object
    }

    /// Reads and parses the file at `path`: a regular file (symbolic links followed) of at most
    /// ``maximumSize`` bytes, opened once and checked on the opened descriptor.
    init(contentsOfFile path: String) throws(OAuthError) {
        try self.init(bytes: Self.read(path), source: path)
    }

    /// The bytes of the regular file at `path`, at most ``maximumSize`` of them (``BoundedFile``).
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the path and what is
    ///   wrong: no such file, not a regular file (a directory, a FIFO), too large, unreadable.
    static func read(_ path: String) throws(OAuthError) -> SecretBytes {
        do {
            return try BoundedFile.read(path, limit: maximumSize)
        } catch {
            throw OAuthError(.invalidConfiguration, "cannot read \(path): \(error)", underlying: error)
        }
    }

    /// The `type` field (`service_account`, `authorized_user`, ...).
    func type() throws(OAuthError) -> String {
        try requiredString("type")
    }

    /// A `type` value as messages show it: itself (in quotes if `quoted`) when it reads as a type
    /// name, at most 64 ASCII letters, digits, `_` or `-` (`external_account`); otherwise only its
    /// length, since a corrupt or shifted file can hold key material there.
    static func shown(type: String, quoted: Bool = false) -> String {
        let isName =
            (1...64).contains(type.utf8.count)
            && type.utf8.allSatisfy {
                $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0)
                    || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
        guard isName else { return "<\(type.count) characters that are not a type name>" }
        return quoted ? "\"\(type)\"" : type
    }

    /// A string field that must be present and non-empty.
    func requiredString(_ key: String) throws(OAuthError) -> String {
        guard let value = try optionalString(key) else {
            throw OAuthError(.invalidConfiguration, "\(source) has no \(key)")
        }
        return value
    }

    /// A string field that may be absent (or empty, which counts as absent).
    func optionalString(_ key: String) throws(OAuthError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else {
            throw OAuthError(.invalidConfiguration, "\(key) in \(source) is not a string")
        }
        return text.isEmpty ? nil : text
    }

    /// A field that goes into a header, a URL or a JWT: printable ASCII without spaces or
    /// quotes, at most `maximumLength` characters. The value is never quoted in the error.
    func token(_ key: String, maximumLength: Int = 256, required: Bool = true) throws(OAuthError) -> String? {
        guard let value = required ? try requiredString(key) : try optionalString(key) else { return nil }
        guard value.count <= maximumLength,
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(key) in \(source) is not a plain token of at most \(maximumLength) printable characters"
            )
        }
        return value
    }
}
