/// Something the call pipeline did on a call's behalf, reported to the interceptors around it
/// (``ClientInterceptor/observe(_:context:)``).
public struct ClientCallEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case attemptStarted
            case transparentRetry
            case retryScheduled
            case tokenRequested
            case tokenInvalidated
        }

        private let base: Base

        /// An attempt starts: the call's first (attempt 1) or a retry of its ``RetryPolicy`` or
        /// of an `unauthenticated` answer.
        public static let attemptStarted = Kind(base: .attemptStarted)
        /// The attempt is sent again on a new stream because the server never processed it
        /// (GOAWAY, REFUSED_STREAM, a connection lost before the request left).
        public static let transparentRetry = Kind(base: .transparentRetry)
        /// The attempt failed and the next one starts after ``ClientCallEvent/delay``.
        public static let retryScheduled = Kind(base: .retryScheduled)
        /// The call's token provider had no fresh cached token and is asked for one: a refresh
        /// starts, or the call joins one in flight.
        public static let tokenRequested = Kind(base: .tokenRequested)
        /// The server rejected the token (`unauthenticated`) and it was handed back to its
        /// ``InvalidatableAuthTokenProvider`` before asking for a fresh one.
        public static let tokenInvalidated = Kind(base: .tokenInvalidated)

        /// The kind's name (`attemptStarted`).
        public var description: String {
            switch base {
            case .attemptStarted: "attemptStarted"
            case .transparentRetry: "transparentRetry"
            case .retryScheduled: "retryScheduled"
            case .tokenRequested: "tokenRequested"
            case .tokenInvalidated: "tokenInvalidated"
            }
        }
    }

    /// What happened.
    public var kind: Kind
    /// The attempt it happened in, from 1.
    public var attempt: Int
    /// For ``Kind/retryScheduled``, the wait before the next attempt; nil otherwise.
    public var delay: Duration?

    /// Creates an event.
    public init(kind: Kind, attempt: Int, delay: Duration? = nil) {
        self.kind = kind
        self.attempt = attempt
        self.delay = delay
    }

    /// `kind (attempt N)`, with the delay when there is one.
    public var description: String {
        "\(kind) (attempt \(attempt)\(delay.map { ", delay \($0)" } ?? ""))"
    }
}

/// The interceptors to tell about one call's events, with the call's context.
@usableFromInline
final class CallObservers: Sendable {
    let interceptors: [any ClientInterceptor]
    let context: ClientInterceptorContext

    init(_ interceptors: [any ClientInterceptor], context: ClientInterceptorContext) {
        self.interceptors = interceptors
        self.context = context
    }

    func report(_ kind: ClientCallEvent.Kind, attempt: Int, delay: Duration? = nil) {
        let event = ClientCallEvent(kind: kind, attempt: attempt, delay: delay)
        for interceptor in interceptors {
            interceptor.observe(event, context: context)
        }
    }
}
