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
            throw OAuthError(.invalidConfiguration, "cannot read \(path): \(error.reason)")
        }
        return try SubjectTokenText.token(in: bytes, format: format, from: path)
    }

    struct Failure: Error {
        var reason: String
    }

    /// The bytes of the regular file at `path` (symbolic links followed), at most
    /// ``SubjectTokenText/maximumSize`` of them.
    static func read(_ path: String) throws(Failure) -> Data {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            throw Failure(reason: FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw Failure(reason: "it is not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Failure(reason: "it cannot be opened") }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: SubjectTokenText.maximumSize + 1) ?? Data() else {
            throw Failure(reason: "it cannot be read")
        }
        guard data.count <= SubjectTokenText.maximumSize else {
            throw Failure(reason: "it is larger than \(SubjectTokenText.maximumSize) bytes")
        }
        return data
    }
}
