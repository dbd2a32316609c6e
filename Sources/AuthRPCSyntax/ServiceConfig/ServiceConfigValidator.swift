/// gRPC's service config (gRFC A6's JSON, `service_config.proto` through the proto3 JSON mapping)
/// checked once for the whole package: the runtime's `ServiceConfig(json:)` and the code
/// generator's `ServiceConfig=` files go through this validator, so a file the generator embeds
/// in a client is one the client can load.
///
/// Read: `methodConfig` (`name`, `timeout`, `waitForReady`, `maxRequestMessageBytes`,
/// `maxResponseMessageBytes`, `retryPolicy`, `hedgingPolicy`) and `retryThrottling`. Other
/// fields (`loadBalancingConfig`, ...) are not read, and unknown fields are ignored, as gRPC
/// does; `null` is an absent field (proto3 JSON). Durations are proto3 JSON strings (`"1.5s"`,
/// at most nine fractional digits); status codes are names (`"UNAVAILABLE"`) or numbers.
///
/// Checked as gRPC does: a retry policy has `maxAttempts` of at least 2, both backoffs longer
/// than zero, a multiplier greater than zero and a non-empty set of codes other than OK; a
/// method config has at most one of `retryPolicy` and `hedgingPolicy`, a timeout longer than
/// zero and message limits from 0 to 2^32-1; no name appears twice; a name with a method has a
/// service; `retryThrottling` has `maxTokens` from 1 to 1000 and a `tokenRatio` above zero, at
/// most 1000 and at least 0.001.
package enum ServiceConfigValidator {
    /// How much beyond gRPC's own rules a document must satisfy.
    package enum Strictness: Sendable {
        /// gRPC's rules only: what a channel accepts from a resolver or its caller.
        case grpc
        /// Also refuses what gRPC ignores but an author would not mean, for a file the code
        /// generator embeds: a method config without names (it configures nothing) and a key
        /// other than `service` and `method` in a name (a misspelling would widen the name).
        case authored
    }

    /// Checks `document` and reads its values.
    ///
    /// - Throws: ``ServiceConfigProblem`` naming the first field at fault and what is wrong.
    package static func validate(
        _ document: JSONValue,
        strictness: Strictness
    ) throws(ServiceConfigProblem) -> ValidServiceConfig {
        let reader = JSONFieldReader(path: "")
        let root = try reader.object(document)
        var index = MethodConfigNameIndex()
        var methodConfigs: [ValidServiceConfig.MethodConfig] = []
        if let list = try reader.optionalList(root, "methodConfig") {
            for (entry, value) in list.enumerated() {
                let config = try methodConfig(
                    value,
                    reader: reader.element("methodConfig", entry),
                    strictness: strictness
                )
                for (position, name) in config.names.enumerated() {
                    try index.insert(
                        service: name.service,
                        method: name.method,
                        entry: entry,
                        field: "methodConfig[\(entry)].name[\(position)]"
                    )
                }
                methodConfigs.append(config)
            }
        }
        var throttling: ValidServiceConfig.RetryThrottling?
        if let value = JSONFieldReader.present(root, "retryThrottling") {
            throttling = try retryThrottling(value, reader: reader.field("retryThrottling"))
        }
        return ValidServiceConfig(methodConfigs: methodConfigs, retryThrottling: throttling)
    }

    private static func methodConfig(
        _ value: JSONValue,
        reader: JSONFieldReader,
        strictness: Strictness
    ) throws(ServiceConfigProblem) -> ValidServiceConfig.MethodConfig {
        let fields = try reader.object(value)
        let names = try self.names(fields, reader: reader, strictness: strictness)
        var config = ValidServiceConfig.MethodConfig(names: names)
        config.waitForReady = try reader.optionalBool(fields, "waitForReady")
        if let timeout = try reader.optionalDuration(fields, "timeout") {
            guard timeout > .zero else { throw reader.error("timeout", "must be longer than zero") }
            config.timeout = timeout
        }
        let bytes = 0...Int(UInt32.max)
        config.maxRequestMessageBytes = try reader.optionalInteger(fields, "maxRequestMessageBytes", in: bytes)
        config.maxResponseMessageBytes = try reader.optionalInteger(fields, "maxResponseMessageBytes", in: bytes)
        let retry = JSONFieldReader.present(fields, "retryPolicy")
        let hedging = JSONFieldReader.present(fields, "hedgingPolicy")
        if retry != nil && hedging != nil {
            throw reader.error("hedgingPolicy", "only one of retryPolicy and hedgingPolicy may be set")
        }
        if let retry {
            config.retryPolicy = try retryPolicy(retry, reader: reader.field("retryPolicy"))
        }
        if let hedging {
            try checkHedgingPolicy(hedging, reader: reader.field("hedgingPolicy"))
        }
        return config
    }

    private static func names(
        _ fields: [String: JSONValue],
        reader: JSONFieldReader,
        strictness: Strictness
    ) throws(ServiceConfigProblem) -> [(service: String, method: String)] {
        let list = try reader.optionalList(fields, "name") ?? []
        if strictness == .authored && list.isEmpty {
            throw reader.error(
                "name",
                "must be a non-empty array of names ({\"service\": ..., \"method\": ...}): without one the entry configures no method"
            )
        }
        var names: [(service: String, method: String)] = []
        for (index, entry) in list.enumerated() {
            let reader = reader.element("name", index)
            let name = try reader.object(entry)
            if strictness == .authored, let key = name.keys.sorted().first(where: { $0 != "service" && $0 != "method" })
            {
                throw ServiceConfigProblem(
                    field: reader.path,
                    problem:
                        "has an unknown key \"\(JSONValue.shown(key))\" (a name has only \"service\" and \"method\")"
                )
            }
            names.append(
                (
                    service: try reader.optionalString(name, "service") ?? "",
                    method: try reader.optionalString(name, "method") ?? ""
                )
            )
        }
        return names
    }

    private static func retryPolicy(
        _ value: JSONValue,
        reader: JSONFieldReader
    ) throws(ServiceConfigProblem) -> ValidServiceConfig.RetryPolicy {
        let fields = try reader.object(value)
        // The runtime treats any count above 5 as 5; the range only keeps the number an integer.
        let maxAttempts = try reader.integer(fields, "maxAttempts", in: 2...Int(Int32.max))
        let initialBackoff = try reader.duration(fields, "initialBackoff")
        guard initialBackoff > .zero else { throw reader.error("initialBackoff", "must be longer than zero") }
        let maxBackoff = try reader.duration(fields, "maxBackoff")
        guard maxBackoff > .zero else { throw reader.error("maxBackoff", "must be longer than zero") }
        let multiplier = try reader.number(fields, "backoffMultiplier")
        guard multiplier > 0 else {
            throw reader.error("backoffMultiplier", "must be greater than zero, not \(multiplier)")
        }
        let codes = try reader.statusCodes(fields, "retryableStatusCodes")
        guard !codes.isEmpty else { throw reader.error("retryableStatusCodes", "must not be empty") }
        return ValidServiceConfig.RetryPolicy(
            maxAttempts: maxAttempts,
            initialBackoff: initialBackoff,
            maxBackoff: maxBackoff,
            backoffMultiplier: multiplier,
            retryableStatusCodes: codes
        )
    }

    /// Hedging is not implemented, but a config that asks for it is still checked, so a mistake in
    /// it is reported rather than silently ignored.
    private static func checkHedgingPolicy(_ value: JSONValue, reader: JSONFieldReader) throws(ServiceConfigProblem) {
        let fields = try reader.object(value)
        _ = try reader.integer(fields, "maxAttempts", in: 2...Int(Int32.max))
        if let delay = try reader.optionalDuration(fields, "hedgingDelay"), delay < .zero {
            throw reader.error("hedgingDelay", "must not be negative")
        }
        if JSONFieldReader.present(fields, "nonFatalStatusCodes") != nil {
            _ = try reader.statusCodes(fields, "nonFatalStatusCodes")
        }
    }

    private static func retryThrottling(
        _ value: JSONValue,
        reader: JSONFieldReader
    ) throws(ServiceConfigProblem) -> ValidServiceConfig.RetryThrottling {
        let fields = try reader.object(value)
        let maxTokens = try reader.integer(fields, "maxTokens", in: 1...1000)
        let ratio = try reader.number(fields, "tokenRatio")
        // gRPC counts tokens in thousandths: a finer ratio would give back nothing.
        guard ratio > 0, ratio <= 1000, Int((ratio * 1000).rounded(.towardZero)) > 0 else {
            throw reader.error(
                "tokenRatio",
                "must be greater than zero, at most 1000, and at least 0.001 (it is counted in thousandths), not \(ratio)"
            )
        }
        return ValidServiceConfig.RetryThrottling(maxTokens: maxTokens, tokenRatio: ratio)
    }
}
