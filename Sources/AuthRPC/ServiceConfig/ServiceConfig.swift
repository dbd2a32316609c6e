import AuthRPCSyntax

/// Defaults for the calls of a channel, per method, in the form of gRPC's service config: timeouts,
/// retry policies, message limits, wait-for-ready, and retry throttling.
///
/// Load one from the JSON a service publishes (``init(json:)``) or build it in code
/// (``init(methodConfigs:retryThrottling:)``); either checks everything at once and throws a
/// ``ServiceConfigError`` naming the field at fault, so a config that loads never fails a call.
/// Give it to a channel (`Channel(target:…, serviceConfig:)`); a generated client may also carry
/// its API's published config and pass it with each call (the `serviceConfig` argument of
/// ``Channel/unary(_:request:serializer:deserializer:options:serviceConfig:)``), which the
/// channel's own config overrides.
///
/// A call finds its method config by the most specific name that matches: its service and method,
/// else its service alone, else the default (a name with neither). In the config's fields, a
/// setting of the call's ``CallOptions`` that the caller set wins; the config fills in only what
/// was left unset.
///
/// ```swift
/// let config = try ServiceConfig(json: """
///     {"methodConfig": [{
///         "name": [{"service": "google.pubsub.v1.Publisher"}],
///         "timeout": "60s",
///         "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.1s", "maxBackoff": "60s",
///                         "backoffMultiplier": 1.3, "retryableStatusCodes": ["UNAVAILABLE"]}
///     }]}
///     """)
/// let channel = try Channel(target: "pubsub.googleapis.com", serviceConfig: config)
/// ```
public struct ServiceConfig: Sendable, Hashable {
    /// The method configs, in the order given.
    public let methodConfigs: [MethodConfig]
    /// The channel's retry throttling, if any. It takes effect where the config is given to a
    /// channel; in a config passed with a call it is ignored.
    public let retryThrottling: RetryThrottling?

    /// Which method config each name selects.
    private let index: MethodConfigNameIndex

    /// Builds a config from its parts, checking each as ``init(json:)`` does (apart from JSON's
    /// rule that a retry policy makes at least 2 attempts: ``RetryPolicy/disabled`` is allowed
    /// here).
    ///
    /// - Throws: ``ServiceConfigError`` naming the first problem: a name given twice, a method
    ///   without a service, a setting out of its range, an invalid retry policy or throttling.
    public init(methodConfigs: [MethodConfig] = [], retryThrottling: RetryThrottling? = nil) throws(ServiceConfigError)
    {
        var index = MethodConfigNameIndex()
        for (entry, config) in methodConfigs.enumerated() {
            let field = "methodConfig[\(entry)]"
            try Self.check(config, field: field)
            for (position, name) in config.names.enumerated() {
                do {
                    try index.insert(
                        service: name.service,
                        method: name.method,
                        entry: entry,
                        field: "\(field).name[\(position)]"
                    )
                } catch {
                    throw ServiceConfigError(field: error.field, problem: error.problem)
                }
            }
        }
        if let retryThrottling, let problem = retryThrottling.problem {
            throw ServiceConfigError(field: "retryThrottling", problem: problem)
        }
        self.methodConfigs = methodConfigs
        self.retryThrottling = retryThrottling
        self.index = index
    }

    /// The config for `method`: the one naming it, else the one naming its service, else the
    /// default; nil when none applies.
    public func methodConfig(for method: MethodDescriptor) -> MethodConfig? {
        guard let entry = index.entry(path: method.path, service: method.service) else { return nil }
        return methodConfigs[entry]
    }

    /// Checks one method config's settings.
    private static func check(_ config: MethodConfig, field: String) throws(ServiceConfigError) {
        if let timeout = config.timeout, timeout <= .zero {
            throw ServiceConfigError(field: "\(field).timeout", problem: "must be longer than zero, not \(timeout)")
        }
        for (name, value) in [
            ("maxRequestMessageBytes", config.maxRequestMessageBytes),
            ("maxResponseMessageBytes", config.maxResponseMessageBytes),
        ] {
            if let value, !(0...Int(UInt32.max)).contains(value) {
                throw ServiceConfigError(
                    field: "\(field).\(name)",
                    problem: "must be from 0 to \(UInt32.max), not \(value)"
                )
            }
        }
        if let problem = config.retryPolicy?.problem {
            throw ServiceConfigError(field: "\(field).retryPolicy", problem: problem)
        }
    }

    /// Configs are equal when their method configs (in order) and throttling are.
    public static func == (lhs: ServiceConfig, rhs: ServiceConfig) -> Bool {
        lhs.methodConfigs == rhs.methodConfigs && lhs.retryThrottling == rhs.retryThrottling
    }

    /// Hashes what `==` compares: the method configs and the throttling.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(methodConfigs)
        hasher.combine(retryThrottling)
    }
}
