import Synchronization

/// Adapts a callback-style token source (like gRPC Objective-C's `GRPCAuthorizationProtocol`,
/// `getTokenWithHandler:`) to ``AuthTokenProvider``.
///
/// The closure is called once per call and must call its handler exactly once: with a token, or
/// with `nil` and an optional error. A second call of the handler is ignored; a handler never
/// called leaves the call to end at its deadline or cancellation.
public struct CallbackAuthTokenProvider: AuthTokenProvider {
    /// The handler the closure calls with a token, or with `nil` and the reason there is none.
    public typealias Handler = @Sendable (_ token: String?, _ error: (any Error)?) -> Void

    private let getToken: @Sendable (_ handler: @escaping Handler) -> Void

    /// Wraps `getToken`.
    public init(_ getToken: @escaping @Sendable (_ handler: @escaping Handler) -> Void) {
        self.getToken = getToken
    }

    /// Calls the closure and waits for its handler: returns the token it passes, or throws the
    /// error it passes (an error saying no token came when it passes neither, or an empty token).
    public func token() async throws -> String {
        try await withUnsafeThrowingContinuation { continuation in
            let once = OnceFlag()
            getToken { token, error in
                guard once.claim() else { return }
                if let token, !token.isEmpty {
                    continuation.resume(returning: token)
                } else {
                    continuation.resume(throwing: error ?? MissingToken())
                }
            }
        }
    }

    /// The callback answered with neither a token nor an error.
    struct MissingToken: Error, CustomStringConvertible {
        var description: String { "the token callback returned no token" }
    }
}

/// Lets exactly one caller through.
final class OnceFlag: Sendable {
    private let taken = Atomic<Bool>(false)

    /// `true` for the first caller only.
    func claim() -> Bool {
        taken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
