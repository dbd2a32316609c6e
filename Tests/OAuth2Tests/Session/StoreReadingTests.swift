import Foundation
import Testing

@testable import OAuth2

/// How a session refreshing under a shared store's lock reconciles with what other processes
/// saved, decided as a value: no store, no issuer.
@Suite("StoreReading: a session's state against its shared store")
struct StoreReadingTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    func state(
        grant: String = "grant-1",
        accessToken: String? = "at-1",
        expiresIn: TimeInterval = 3600,
        refreshToken: String? = "rt-1",
        stale: Bool = false,
        error: AuthorizationErrorRecord? = nil
    ) -> AuthState {
        AuthState(
            configuration: ServiceConfiguration(tokenEndpoint: URL(string: "https://issuer.test/token")!),
            client: OAuthClient(id: "client"),
            scopes: ["a"],
            grant: GrantRecord(type: .deviceCode, id: grant),
            accessToken: accessToken,
            accessTokenExpiresAt: Self.now.addingTimeInterval(expiresIn),
            accessTokenIssuedAt: Self.now.addingTimeInterval(expiresIn - 3600),
            refreshToken: refreshToken,
            isAccessTokenStale: stale,
            authorizationError: error
        )
    }

    /// The reading's case, with the grant and tokens of what it carries.
    func shown(_ reading: StoreReading) -> String {
        switch reading {
        case .unchanged: return "unchanged"
        case .removed: return "removed"
        case .unreadable: return "unreadable"
        case .changed(let stored):
            return "changed(\(stored.grant.id), \(stored.accessToken ?? "-"), \(stored.refreshToken ?? "-"))"
        }
    }

    @Test("an empty store: removed once the session was stored there, unchanged before")
    func emptyStore() {
        #expect(shown(StoreReading(stored: nil, current: state(), isPersisted: true)) == "removed")
        #expect(shown(StoreReading(stored: nil, current: state(), isPersisted: false)) == "unchanged")
    }

    @Test("another sign-in in the store: changed once the session was stored there, unchanged before")
    func anotherSignIn() {
        let other = state(grant: "grant-2", accessToken: "at-2", refreshToken: "rt-2")
        #expect(
            shown(StoreReading(stored: other, current: state(), isPersisted: true)) == "changed(grant-2, at-2, rt-2)"
        )
        #expect(shown(StoreReading(stored: other, current: state(), isPersisted: false)) == "unchanged")
    }

    @Test("the same sign-in: changed when its tokens or its stop differ, whether or not it was stored")
    func sameSignIn() {
        for isPersisted in [true, false] {
            let current = state()
            #expect(shown(StoreReading(stored: state(), current: current, isPersisted: isPersisted)) == "unchanged")
            // The expiry and the stale mark alone are not a change another process made.
            #expect(
                shown(
                    StoreReading(stored: state(expiresIn: 10, stale: true), current: current, isPersisted: isPersisted)
                )
                    == "unchanged"
            )
            #expect(
                shown(
                    StoreReading(stored: state(refreshToken: "rt-rotated"), current: current, isPersisted: isPersisted)
                )
                    == "changed(grant-1, at-1, rt-rotated)"
            )
            #expect(
                shown(StoreReading(stored: state(accessToken: "at-2"), current: current, isPersisted: isPersisted))
                    == "changed(grant-1, at-2, rt-1)"
            )
            let stopped = state(error: AuthorizationErrorRecord(code: "invalid_grant", date: Self.now))
            #expect(
                shown(StoreReading(stored: stopped, current: current, isPersisted: isPersisted))
                    == "changed(grant-1, at-1, rt-1)"
            )
        }
    }

    /// The decision's case, with what it carries.
    func shown(_ decision: StoreReading.BeforeRefresh) -> String {
        switch decision {
        case .refresh: return "refresh"
        case .signOut: return "signOut"
        case .adoptStopped(let stored, let error): return "adoptStopped(\(stored.grant.id), \(error.code))"
        case .adoptFreshToken(let stored, let token): return "adoptFreshToken(\(stored.grant.id), \(token))"
        case .adoptAndRefresh(let stored): return "adoptAndRefresh(\(stored.grant.id), \(stored.refreshToken ?? "-"))"
        }
    }

    @Test("before refreshing: refresh on nothing new, sign out when removed, else adopt and stop, use, or refresh")
    func beforeRefresh() {
        func decide(_ reading: StoreReading) -> String {
            shown(reading.beforeRefresh(tolerance: .seconds(60), now: Self.now))
        }
        #expect(decide(.unchanged) == "refresh")
        #expect(decide(.unreadable) == "refresh")
        #expect(decide(.removed) == "signOut")
        // A stop another process saved wins even over a fresh token.
        let error = AuthorizationErrorRecord(code: "invalid_grant", date: Self.now)
        #expect(decide(.changed(state(error: error))) == "adoptStopped(grant-1, invalid_grant)")
        #expect(decide(.changed(state(accessToken: "at-2"))) == "adoptFreshToken(grant-1, at-2)")
        #expect(decide(.changed(state(grant: "grant-2", accessToken: "at-9"))) == "adoptFreshToken(grant-2, at-9)")
        // Not fresh: expiring within the margin, marked stale, or missing. Refresh with the adopted
        // (perhaps rotated) refresh token.
        #expect(decide(.changed(state(expiresIn: 60, refreshToken: "rt-2"))) == "adoptAndRefresh(grant-1, rt-2)")
        #expect(decide(.changed(state(expiresIn: 61, refreshToken: "rt-2"))) == "adoptFreshToken(grant-1, at-1)")
        #expect(decide(.changed(state(refreshToken: "rt-2", stale: true))) == "adoptAndRefresh(grant-1, rt-2)")
        #expect(decide(.changed(state(accessToken: nil, refreshToken: "rt-2"))) == "adoptAndRefresh(grant-1, rt-2)")
    }

    @Test("after the answer: take it in unless another process signed out or signed in anew meanwhile")
    func afterAnswer() {
        func decide(_ reading: StoreReading) -> String {
            switch reading.afterAnswer(forGrant: "grant-1") {
            case .takeAnswer: return "takeAnswer"
            case .signOut: return "signOut"
            case .adoptNewSignIn(let stored): return "adoptNewSignIn(\(stored.grant.id))"
            }
        }
        #expect(decide(.unchanged) == "takeAnswer")
        #expect(decide(.unreadable) == "takeAnswer")
        #expect(decide(.removed) == "signOut")
        #expect(decide(.changed(state(refreshToken: "rt-rotated"))) == "takeAnswer")
        #expect(decide(.changed(state(grant: "grant-2"))) == "adoptNewSignIn(grant-2)")
    }
}
