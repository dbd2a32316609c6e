import Foundation
import OAuth2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CLI's view of a named session in the file store.
struct FileStoreHandle {
    let name: String
    let store: FileAuthSessionStore

    init(name: String) throws(ToolFailure) {
        self.name = name
        do throws(OAuthError) {
            store = try FileAuthSessionStore(name: name)
        } catch {
            throw ToolFailure(status: .usage, message: "--session \(name): \(error.message)")
        }
    }

    var path: String { store.fileURL.path }

    /// The stored state; a failure names the file and says what to do. A file or directory
    /// that others may open is read all the same, with a warning.
    func retrieve() throws(ToolFailure) -> AuthState? {
        warnIfOpenToOthers()
        do throws(OAuthError) {
            return try store.retrieve()
        } catch {
            throw ToolFailure(
                status: .internalError,
                message: "cannot read the stored session: \(error.message)",
                hint: "the file was left as it is; `auth_sample logout` removes it (or fix \(path)), then sign in again"
            )
        }
    }

    /// The stored state, or the "sign in first" failure.
    func require() throws(ToolFailure) -> AuthState {
        guard let state = try retrieve() else { throw noSession }
        return state
    }

    /// The failure for a session that is not there: sign in first.
    var noSession: ToolFailure {
        ToolFailure(
            status: .noSession,
            message: "no stored session named '\(name)' (looked in \(path))",
            hint: "sign in first: auth_sample login --issuer URL --client-id ID"
                + (name == "default" ? "" : " --session \(name)")
        )
    }

    /// Warns, as ssh does for private keys, when the session's directory or file grants any
    /// access to group or others: the file holds tokens. (Saving a session sets 0700 and 0600.)
    private func warnIfOpenToOthers() {
        let directory = store.fileURL.deletingLastPathComponent().path
        for (path, kind, wanted) in [(directory, "directory", "700"), (path, "file", "600")] {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 != 0 else { continue }
            let octal = String(mode, radix: 8)
            let shownMode = "0" + String(repeating: "0", count: max(0, 3 - octal.count)) + octal
            Output.warning(
                "the session \(kind) \(path) is open to others (mode \(shownMode)) and the session holds tokens;"
                    + " run: chmod \(wanted) \(path)"
            )
        }
    }

    func save(_ state: AuthState) throws(ToolFailure) {
        do throws(OAuthError) {
            try store.save(state)
        } catch {
            throw ToolFailure(status: .internalError, message: "cannot save the session: \(error.message)")
        }
    }
}
