import AuthRPCSystem
import Foundation
import OAuth2

/// A service account's self-signed JWTs, cached per audience: one token engine for each
/// `https://<host>/` the calls went to (or one for a `scope` claim), so every call to one service
/// shares one JWT while it is fresh and a call to another service gets its own.
///
/// The cache is bounded (``maximumAudiences``): a program that calls more services than that
/// starts over with the oldest one's engine gone, which costs a new JWT, never a wrong one.
final class SelfSignedJWTs: Sendable, CustomStringConvertible {
    /// The most audiences kept.
    static let maximumAudiences = 64

    private let key: ServiceAccountKey
    private let lifetime: Duration
    private let expiryTolerance: Duration
    private let refreshBackoff: RefreshBackoff
    /// The one engine for a `scope` claim, when scopes were given.
    private let scoped: (source: ServiceAccountJWTAccessSource, engine: TokenEngine)?

    /// One audience's source and engine.
    private struct Entry {
        let source: ServiceAccountJWTAccessSource
        let engine: TokenEngine
    }

    private struct Cache {
        /// By audience claim (`https://<host>/`).
        var byAudience: [String: Entry] = [:]
        /// By the authority calls named (`host:port`, any case), to skip parsing on the fast path.
        var byAuthority: [String: Entry] = [:]
        /// Audience claims, oldest first.
        var order: [String] = []
    }

    private let cache = Locked(Cache())

    init(
        key: ServiceAccountKey,
        scopes: [String],
        lifetime: Duration,
        expiryTolerance: Duration,
        refreshBackoff: RefreshBackoff
    ) throws(OAuthError) {
        self.key = key
        self.lifetime = lifetime
        self.expiryTolerance = expiryTolerance
        self.refreshBackoff = refreshBackoff
        if scopes.isEmpty {
            // Checks the lifetime now rather than at the first call.
            _ = try ServiceAccountJWTAccessSource(key: key, audience: .service(host: "localhost"), lifetime: lifetime)
            scoped = nil
        } else {
            let source = try ServiceAccountJWTAccessSource(key: key, audience: .scopes(scopes), lifetime: lifetime)
            scoped = (source, Self.engine(expiryTolerance, refreshBackoff))
        }
    }

    private static func engine(_ expiryTolerance: Duration, _ refreshBackoff: RefreshBackoff) -> TokenEngine {
        TokenEngine(expiryTolerance: expiryTolerance, refreshBackoff: refreshBackoff, backoffScope: .everyFailure)
    }

    /// A fresh JWT for a call to `authority`.
    ///
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` without an authority (and without
    ///   scopes), or for one that is not `host[:port]`.
    func token(forAuthority authority: String?) async throws(OAuthError) -> String {
        if let scoped { return try await scoped.engine.token(from: scoped.source) }
        guard let authority else {
            throw OAuthError(
                .invalidConfiguration,
                "a self-signed JWT is made for the service a call goes to: use the credentials as a call's token provider, or give scopes"
            )
        }
        let entry = try self.entry(forAuthority: authority)
        return try await entry.engine.token(from: entry.source)
    }

    /// The fresh JWT for a call to `authority`, if there is one.
    func cachedToken(forAuthority authority: String?) -> String? {
        if let scoped { return scoped.engine.cachedToken() }
        guard let authority, let entry = cache.withLock({ $0.byAuthority[authority] }) else { return nil }
        return entry.engine.cachedToken()
    }

    /// Stops handing out `token` wherever it is held.
    func invalidate(token: String) {
        if let scoped { scoped.engine.invalidate(token: token) }
        for entry in cache.withLock({ Array($0.byAudience.values) }) {
            entry.engine.invalidate(token: token)
        }
    }

    /// The entry for `authority`'s audience, made on first use.
    private func entry(forAuthority authority: String) throws(OAuthError) -> Entry {
        if let entry = cache.withLock({ $0.byAuthority[authority] }) { return entry }
        let audience = try ServiceAccountJWTAccessSource.Audience.forAuthority(authority)
        let claim = audience.audienceClaim ?? ""
        let source = try ServiceAccountJWTAccessSource(key: key, audience: audience, lifetime: lifetime)
        return cache.withLock { cache in
            let entry =
                cache.byAudience[claim] ?? Entry(source: source, engine: Self.engine(expiryTolerance, refreshBackoff))
            if cache.byAudience[claim] == nil {
                if cache.order.count >= Self.maximumAudiences {
                    let oldest = cache.order.removeFirst()
                    cache.byAudience[oldest] = nil
                    cache.byAuthority = cache.byAuthority.filter { $0.value.source.audience.audienceClaim != oldest }
                }
                cache.byAudience[claim] = entry
                cache.order.append(claim)
            }
            if cache.byAuthority.count >= 4 * Self.maximumAudiences { cache.byAuthority = [:] }
            cache.byAuthority[authority] = entry
            return entry
        }
    }

    /// The account, and what the JWTs are for.
    var description: String {
        if let scoped { return "self-signed JWTs of \(key.clientEmail) for \(scoped.source.audience)" }
        return "self-signed JWTs of \(key.clientEmail), aud https://<host>/ of each call's authority"
    }
}
