/// A service config that ``ServiceConfigValidator`` accepted, its values read: what the runtime
/// turns into its `ServiceConfig` and the code generator reads the configured services from.
package struct ValidServiceConfig: Sendable, Equatable {
    /// One entry of `methodConfig`.
    package struct MethodConfig: Sendable, Equatable {
        /// Its names as (service, method), an empty part absent.
        package var names: [(service: String, method: String)]
        package var timeout: Duration?
        package var waitForReady: Bool?
        package var maxRequestMessageBytes: Int?
        package var maxResponseMessageBytes: Int?
        /// Its retry policy; a hedging policy is checked but not kept.
        package var retryPolicy: RetryPolicy?

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.names.elementsEqual(rhs.names) { $0 == $1 } && lhs.timeout == rhs.timeout
                && lhs.waitForReady == rhs.waitForReady && lhs.maxRequestMessageBytes == rhs.maxRequestMessageBytes
                && lhs.maxResponseMessageBytes == rhs.maxResponseMessageBytes && lhs.retryPolicy == rhs.retryPolicy
        }
    }

    /// A `retryPolicy` (gRFC A6), `maxAttempts` as written (at least 2; the runtime caps it).
    package struct RetryPolicy: Sendable, Equatable {
        package var maxAttempts: Int
        package var initialBackoff: Duration
        package var maxBackoff: Duration
        package var backoffMultiplier: Double
        /// Status code numbers, never 0 (OK).
        package var retryableStatusCodes: Set<Int>
    }

    /// `retryThrottling`.
    package struct RetryThrottling: Sendable, Equatable {
        package var maxTokens: Int
        package var tokenRatio: Double
    }

    package var methodConfigs: [MethodConfig]
    package var retryThrottling: RetryThrottling?

    /// The services its names select (with or without a method).
    package var services: Set<String> {
        Set(methodConfigs.flatMap { $0.names.map(\.service) }.filter { !$0.isEmpty })
    }

    /// Whether a name has neither service nor method: the default for every service.
    package var configuresEveryService: Bool {
        methodConfigs.contains { $0.names.contains { $0.service.isEmpty } }
    }
}
