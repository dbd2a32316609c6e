import AuthRPCSystem
import Foundation
import OAuth2

/// The file source: the token is a file's text or a JSON field of it (a Kubernetes projected
/// service account token, a token another tool refreshes). The file is read anew for every
/// exchange, since whoever writes it renews it.
enum SubjectTokenFile {
    /// The token in the file at `path`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when the file cannot be read, is not a
    ///   regular file, is larger than ``SubjectTokenText/maximumSize`` or holds no token.
    static func token(at path: String, format: ExternalAccountCredentialSource.Format) throws(OAuthError) -> String {
        let bytes: Data
        do { bytes = try read(path) } catch {
            throw OAuthError(.invalidConfiguration, "cannot read \(path): \(error)")
        }
        return try SubjectTokenText.token(in: bytes, format: format, from: path)
    }

    /// The bytes of the regular file at `path`, at most ``SubjectTokenText/maximumSize`` of them,
    /// read through ``BoundedFile``: symbolic links followed (a projected token is
    /// `token -> ..data/token`), one open, the type checked on the descriptor, never waiting.
    static func read(_ path: String) throws(BoundedFile.Failure) -> Data {
        try BoundedFile.read(path, limit: SubjectTokenText.maximumSize).withUnsafeBytes { Data($0) }
    }
}
