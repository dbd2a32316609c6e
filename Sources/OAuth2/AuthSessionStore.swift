/// Where a session is kept between runs.
///
/// A store holds one session under the name it was created with. Reading a store that holds
/// nothing returns `nil`; a stored item that cannot be read is an error
/// (``OAuthError/Kind/storage``) and reading never deletes it. Saving replaces the item as a
/// whole or not at all.
public protocol AuthSessionStore: Sendable {
    /// Saves `state`, replacing what was stored.
    func save(_ state: AuthState) throws(OAuthError)
    /// The stored state, or `nil` when nothing is stored.
    func retrieve() throws(OAuthError) -> AuthState?
    /// Removes the stored state; removing nothing is not an error.
    func remove() throws(OAuthError)
}

/// A store that several processes may use at once.
///
/// ``AuthSession`` refreshes inside ``withExclusiveAccess(timeout:_:)``: it re-reads the store,
/// adopts what another process saved meanwhile (a rotated refresh token), and only refreshes
/// when that is not fresh, so two processes refreshing at once never lose a rotated refresh token.
public protocol SharedAuthSessionStore: AuthSessionStore {
    /// Runs `body` while holding the store's inter-process lock.
    ///
    /// - Throws: ``OAuthError/Kind/transient`` when the lock is not obtained within `timeout`,
    ///   ``OAuthError/Kind/storage`` when it cannot be taken at all, or what `body` throws.
    func withExclusiveAccess<Result: Sendable>(
        timeout: Duration,
        _ body: @Sendable () async throws(OAuthError) -> Result
    ) async throws(OAuthError) -> Result
}
