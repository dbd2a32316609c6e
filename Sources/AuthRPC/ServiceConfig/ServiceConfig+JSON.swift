import AuthRPCSyntax
import SwiftProtobuf

extension ServiceConfig {
    /// Loads a service config from gRPC's JSON form (gRPC's `service_config.proto` through the
    /// proto3 JSON mapping; gRFC A6 for retries).
    ///
    /// Read: `methodConfig` (`name`, `timeout`, `waitForReady`, `maxRequestMessageBytes`,
    /// `maxResponseMessageBytes`, `retryPolicy`, `hedgingPolicy`) and `retryThrottling`. Other
    /// top-level fields (`loadBalancingConfig`, ...) are left to the parts of the channel that use
    /// them, and unknown fields are ignored, as gRPC does. Durations are proto3 JSON strings
    /// (`"1.5s"`, at most nine fractional digits); status codes are names (`"UNAVAILABLE"`) or
    /// numbers. A `hedgingPolicy` is checked but not applied: such a method makes one attempt.
    ///
    /// Checked as gRPC does: a retry policy has `maxAttempts` of at least 2 (more than 5 counts as
    /// 5), both backoffs longer than zero, a multiplier greater than zero and a non-empty set of
    /// codes; a method config has at most one of `retryPolicy` and `hedgingPolicy`; no name
    /// appears twice; a name with a method has a service; `retryThrottling` has `maxTokens` from 1
    /// to 1000 and a `tokenRatio` greater than zero. The client generator checks the service
    /// config files it embeds by the same rules.
    ///
    /// - Throws: ``ServiceConfigError`` naming the field at fault (`methodConfig[0].timeout`) and
    ///   what is wrong with it; with an empty field when the text is not a JSON object.
    public init(json: String) throws(ServiceConfigError) {
        let root: Google_Protobuf_Value
        do {
            root = try Google_Protobuf_Value(jsonUTF8Bytes: Array(json.utf8))
        } catch {
            throw ServiceConfigError(field: "", problem: "the text is not valid JSON (\(error))")
        }
        let valid: ValidServiceConfig
        do {
            valid = try ServiceConfigValidator.validate(JSONValue(root), strictness: .grpc)
        } catch {
            throw ServiceConfigError(field: error.field, problem: error.problem)
        }
        try self.init(
            methodConfigs: valid.methodConfigs.map(MethodConfig.init(valid:)),
            retryThrottling: valid.retryThrottling.map {
                RetryThrottling(maxTokens: $0.maxTokens, tokenRatio: $0.tokenRatio)
            }
        )
    }
}

extension MethodConfig {
    /// The method config a validated document's entry describes.
    fileprivate init(valid: ValidServiceConfig.MethodConfig) {
        self.init(
            names: valid.names.map { Name(service: $0.service, method: $0.method) },
            timeout: valid.timeout,
            waitForReady: valid.waitForReady,
            maxRequestMessageBytes: valid.maxRequestMessageBytes,
            maxResponseMessageBytes: valid.maxResponseMessageBytes,
            retryPolicy: valid.retryPolicy.map { policy in
                RetryPolicy(
                    maxAttempts: min(policy.maxAttempts, RetryPolicy.attemptLimit),
                    initialBackoff: policy.initialBackoff,
                    maxBackoff: policy.maxBackoff,
                    backoffMultiplier: policy.backoffMultiplier,
                    // The validator admits only codes 1 to 16.
                    retryableStatusCodes: Set(policy.retryableStatusCodes.compactMap(StatusCode.init(rawValue:)))
                )
            }
        )
    }
}
