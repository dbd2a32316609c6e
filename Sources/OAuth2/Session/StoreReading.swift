package import Foundation

/// What a shared store holds, compared with a session's state, and what a refresh under the
/// store's lock does about it: the reconciliation of ``AuthSession`` with other processes that
/// share its store, as a value (the session reads the store; this decides).
///
/// The session's state is the newer one until the store is known to hold its sign-in
/// (`isPersisted`): before that, a store holding nothing or another sign-in was not changed by
/// someone else, it just has not been saved to yet.
package enum StoreReading: Sendable {
    /// The store holds what the session holds (or nothing the session has saved yet).
    case unchanged
    /// Another process saved this: the same sign-in refreshed or stopped, or another sign-in.
    case changed(AuthState)
    /// The store no longer holds the session's sign-in: another process signed out.
    case removed
    /// The store could not be read; a session holding its own refresh token goes on without it.
    case unreadable

    /// Compares `stored` (what the store returned; `nil` for nothing) with `current`, the
    /// session's state.
    ///
    /// - Parameter isPersisted: Whether `current`'s sign-in is known to be in the store.
    package init(stored: AuthState?, current: AuthState, isPersisted: Bool) {
        guard let stored else {
            self = isPersisted ? .removed : .unchanged
            return
        }
        guard stored.grant.id == current.grant.id else {
            self = isPersisted ? .changed(stored) : .unchanged
            return
        }
        let same =
            stored.refreshToken == current.refreshToken && stored.accessToken == current.accessToken
            && stored.authorizationError == current.authorizationError
        self = same ? .unchanged : .changed(stored)
    }

    /// What a refresh does first, under the store's lock, before asking the token endpoint.
    package enum BeforeRefresh: Sendable {
        /// Nothing newer in the store: ask the token endpoint.
        case refresh
        /// Another process signed out: sign out here too, without asking.
        case signOut
        /// Another process saved a state stopped by an authorization error: take it in and stop.
        case adoptStopped(AuthState, AuthorizationErrorRecord)
        /// Another process refreshed (or signed in) and its token is fresh: take it in and use it.
        case adoptFreshToken(AuthState, String)
        /// Another process saved a state whose token is not fresh either: take it in, then
        /// refresh with it (its refresh token may be a rotated one).
        case adoptAndRefresh(AuthState)
    }

    /// What a refresh does first with this reading, for a token fresh by `tolerance` at `now`.
    package func beforeRefresh(tolerance: Duration, now: Date) -> BeforeRefresh {
        switch self {
        case .unchanged, .unreadable:
            return .refresh
        case .removed:
            return .signOut
        case .changed(let stored):
            if let error = stored.authorizationError { return .adoptStopped(stored, error) }
            if stored.isAccessTokenFresh(at: now, tolerance: tolerance), let token = stored.accessToken {
                return .adoptFreshToken(stored, token)
            }
            return .adoptAndRefresh(stored)
        }
    }

    /// What a refresh does once the token endpoint answered, before it takes the answer in.
    package enum AfterAnswer: Sendable {
        /// The store still holds the sign-in the answer is for: take the answer in.
        case takeAnswer
        /// Another process signed out meanwhile: sign out here too, and drop the answer.
        case signOut
        /// Another process saved a new sign-in meanwhile: take it in, and drop the answer.
        case adoptNewSignIn(AuthState)
    }

    /// What a refresh for the sign-in `grantID` does with its answer, given this reading taken
    /// after it arrived.
    package func afterAnswer(forGrant grantID: String) -> AfterAnswer {
        switch self {
        case .removed:
            return .signOut
        case .changed(let stored) where stored.grant.id != grantID:
            return .adoptNewSignIn(stored)
        case .changed, .unchanged, .unreadable:
            return .takeAnswer
        }
    }
}
