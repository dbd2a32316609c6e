import OAuth2

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

    /// The stored state; a failure names the file and says what to do.
    func retrieve() throws(ToolFailure) -> AuthState? {
        do throws(OAuthError) {
            return try store.retrieve()
        } catch {
            throw ToolFailure(status: .internalError, message: "cannot read the stored session: \(error.message)",
                              hint: "the file was left as it is; `auth_sample logout` removes it (or fix \(path)), then sign in again")
        }
    }

    /// The stored state, or the "sign in first" failure.
    func require() throws(ToolFailure) -> AuthState {
        guard let state = try retrieve() else { throw noSession }
        return state
    }

    /// The failure for a session that is not there: sign in first.
    var noSession: ToolFailure {
        ToolFailure(status: .noSession, message: "no stored session named '\(name)' (looked in \(path))",
                    hint: "sign in first: auth_sample login --issuer URL --client-id ID" + (name == "default" ? "" : " --session \(name)"))
    }

    func save(_ state: AuthState) throws(ToolFailure) {
        do throws(OAuthError) {
            try store.save(state)
        } catch {
            throw ToolFailure(status: .internalError, message: "cannot save the session: \(error.message)")
        }
    }
}
