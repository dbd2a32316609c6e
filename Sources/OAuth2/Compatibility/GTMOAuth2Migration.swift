import AuthRPCSystem
public import Foundation

/// Where an old GTMOAuth2 keychain string is kept: a keychain item on Apple platforms
/// (`GTMOAuth2KeychainSource`), a file elsewhere (``GTMOAuth2FileSource``).
public protocol GTMOAuth2ItemSource: Sendable {
    /// The stored GTMOAuth2 string, or `nil` when there is none.
    func read() throws(OAuthError) -> String?
    /// Removes the stored string; removing nothing is not an error.
    func remove() throws(OAuthError)
}

/// A GTMOAuth2 string kept in a file (UTF-8; surrounding whitespace and newlines are ignored).
public struct GTMOAuth2FileSource: GTMOAuth2ItemSource {
    /// The file.
    public let fileURL: URL

    /// The largest item read: a GTMOAuth2 keychain string is a few hundred bytes.
    static let maximumFileSize = 64 * 1024

    /// A source reading the file at `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// The file's text, or `nil` when the file does not exist.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` naming the path when it cannot be read or is not UTF-8.
    public func read() throws(OAuthError) -> String? {
        let bytes: SecretBytes
        do {
            bytes = try BoundedFile.read(fileURL.path, limit: Self.maximumFileSize)
        } catch {
            if error.reason == .notFound { return nil }
            throw OAuthError(.storage, "could not read the GTMOAuth2 item \(fileURL.path): \(error)", underlying: error)
        }
        let data = bytes.withUnsafeBytes { Data($0) }
        guard let text = String(data: data, encoding: .utf8) else {
            throw OAuthError(.storage, "the GTMOAuth2 item \(fileURL.path) is not UTF-8 text")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Deletes the file; a missing file is not an error.
    public func remove() throws(OAuthError) {
        do {
            try FileManager.default.removeItem(at: fileURL)
        } catch CocoaError.fileNoSuchFile {
            return
        } catch {
            throw OAuthError(
                .storage,
                "could not remove the GTMOAuth2 item \(fileURL.path): \(error.localizedDescription)"
            )
        }
    }
}

/// Moves a session from GTMOAuth2's keychain string to an ``AuthSessionStore``.
public enum GTMOAuth2Migration {
    /// Reads the old item, saves its session in `store`, then removes the old item.
    ///
    /// The old item is removed only after the save succeeded, so a failure never loses the
    /// credential. Call it when `store` holds no session yet: it replaces what `store` holds.
    ///
    /// - Parameters:
    ///   - source: Where the old GTMOAuth2 string is.
    ///   - client: The client the old tokens were issued to (the old app's id and secret).
    ///   - configuration: The endpoints the tokens are refreshed at; Google's by default.
    ///   - fallbackScopes: The scopes to assume when the old string has none.
    ///   - store: Where the session goes.
    /// - Returns: The migrated session with the identity GTMOAuth2 kept, or `nil` when there was
    ///   no old item (then nothing is changed).
    /// - Throws: ``OAuthError/Kind/storage`` when the old item cannot be read or decoded (nothing
    ///   is changed), when the save fails (the old item stays), or when the old item cannot be
    ///   removed after the save (the new session is saved).
    @discardableResult
    public static func migrate(
        from source: any GTMOAuth2ItemSource,
        client: OAuthClient,
        configuration: ServiceConfiguration = .google,
        fallbackScopes: [String] = [],
        to store: any AuthSessionStore
    ) throws(OAuthError) -> GTMOAuth2Item? {
        guard let string = try source.read() else { return nil }
        let item = try GTMOAuth2Format.decode(
            string,
            client: client,
            configuration: configuration,
            fallbackScopes: fallbackScopes
        )
        try store.save(item.state)
        do {
            try source.remove()
        } catch {
            throw OAuthError(
                .storage,
                "the migrated session was saved, but the old GTMOAuth2 item remains: \(error.message)",
                underlying: error
            )
        }
        return item
    }
}
