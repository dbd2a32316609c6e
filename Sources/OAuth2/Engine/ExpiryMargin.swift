package import Foundation

/// When an access token stops counting as fresh: a margin before it expires, so a call never
/// leaves with a token that expires on the way.
///
/// The margin is the holder's tolerance (60 s by default), but at most half the token's lifetime:
/// a server that issues short-lived tokens (under two minutes) does not make every use a refresh.
package enum ExpiryMargin {
    /// The margin for a token issued at `issuedAt` that expires at `expiresAt`; `tolerance`
    /// alone when either is unknown.
    package static func seconds(tolerance: Duration, issuedAt: Date?, expiresAt: Date?) -> TimeInterval {
        var margin = tolerance.seconds
        if let expiresAt, let issuedAt {
            margin = min(margin, max(0, expiresAt.timeIntervalSince(issuedAt)) / 2)
        }
        return margin
    }

    /// The moment the token stops being fresh; `nil` for a token without an expiry (fresh until
    /// a server rejects it).
    package static func freshUntil(issuedAt: Date?, expiresAt: Date?, tolerance: Duration) -> Date? {
        expiresAt.map { $0.addingTimeInterval(-seconds(tolerance: tolerance, issuedAt: issuedAt, expiresAt: $0)) }
    }
}
