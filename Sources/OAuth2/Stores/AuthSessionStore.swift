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
/// adopts what another process saved meanwhile (a rotated refresh token, or a new sign-in), and
/// only refreshes when that is not fresh, so two processes refreshing at once never lose a
/// rotated refresh token. Before it saves the answer it reads the store again, and drops the
/// answer if the session was removed or replaced by a new sign-in meanwhile. Saves and removals
/// from outside a session should hold the same lock (``FileAuthSessionStore``'s do), so that a
/// sign-in or sign-out waits for a refresh in flight instead of racing it.
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
