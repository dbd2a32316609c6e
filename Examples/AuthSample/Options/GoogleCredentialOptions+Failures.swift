import OAuth2

extension GoogleCredentialOptions {
    /// A file named on the command line, read by `body`: a file that cannot be read or is not
    /// such a credential is a usage error naming the option, as for `--token-file` and `--ca-cert`.
    static func readFile<T>(
        _ option: String,
        _ path: String,
        hint: String,
        _ body: () throws(OAuthError) -> T
    ) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch {
            throw ToolFailure(status: .usage, message: "\(option): \(error.message)", hint: hint)
        }
    }

    /// `body`, building credentials from a file named on the command line and the other
    /// options: what is left to refuse (a scope, an endpoint) came from the command line.
    static func commandLine<T>(_ body: () throws(OAuthError) -> T) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch { throw ToolFailure(status: .usage, message: error.message) }
    }

    /// `body`, finding or building Application Default Credentials: a failure says what was
    /// found, or looked at, in the environment.
    static func setUp<T>(_ body: () throws(OAuthError) -> T) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch { throw Failures.googleSetup(error) }
    }
}
