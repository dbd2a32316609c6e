import OAuth2
import Synchronization

/// A token source whose universe is known only by asking a server (the metadata server's
/// `universe/universe-domain`).
protocol UniverseDomainDiscovery: GoogleTokenSource {
    /// The universe the server says the credential belongs to.
    func universeDomain() async throws(OAuthError) -> String
}

/// The check ``GoogleCredentials`` makes, once, before the first token of a source that must be
/// asked for its universe: the server's answer against the universe expected. A failure to ask
/// is not remembered (the next token request asks again); a mismatch fails every request, as it
/// would not change until the credentials are made again.
final class PendingUniverseCheck: Sendable {
    let source: any UniverseDomainDiscovery
    let expected: String
    /// `true` once the server's universe was found to be ``expected``; the error once it was not.
    private let outcome = Mutex<Result<Bool, OAuthError>>(.success(false))

    init(source: any UniverseDomainDiscovery, expected: String) {
        self.source = source
        self.expected = expected
    }

    /// Returns once the source's universe is known to be ``expected``; throws the mismatch (an
    /// ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming both) or why the server could not
    /// say.
    func confirm(identity: GoogleCredentialIdentity) async throws(OAuthError) {
        switch outcome.withLock({ $0 }) {
        case .success(true): return
        case .failure(let mismatch): throw mismatch
        case .success(false): break
        }
        let found = try await source.universeDomain()
        var asFound = identity
        asFound.universeDomain = found
        do throws(OAuthError) {
            try GoogleCredentials.checkUniverse(
                of: asFound,
                expected: expected,
                field: "the metadata server's universe/universe-domain"
            )
        } catch {
            outcome.withLock { $0 = .failure(error) }
            throw error
        }
        outcome.withLock { $0 = .success(true) }
    }
}
