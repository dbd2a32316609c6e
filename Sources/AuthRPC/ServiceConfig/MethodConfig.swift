/// The defaults a ``ServiceConfig`` gives the calls of some methods: gRPC's `MethodConfig`.
///
/// Every property is optional: a value that is not set leaves the call as it was. A value the
/// caller set in the call's ``CallOptions`` (or the channel's ``Channel/defaultCallOptions``)
/// always wins over the config's; see ``ServiceConfig`` for how a call finds its method config.
public struct MethodConfig: Sendable, Hashable {
    /// Which methods a config applies to.
    ///
    /// - Service and method: that one method.
    /// - Service only (an empty method): every method of the service without a config of its own.
    /// - Neither (both empty): every method no other name matches (the default config).
    ///
    /// A method without a service is invalid. Names are case-sensitive and the service includes
    /// its proto package (`google.pubsub.v1.Publisher`).
    public struct Name: Sendable, Hashable, CustomStringConvertible {
        /// The fully qualified service, or empty for the default config.
        public var service: String
        /// The method, or empty for every method of ``service``.
        public var method: String

        /// Creates a name; see the type for what empty parts mean.
        public init(service: String = "", method: String = "") {
            self.service = service
            self.method = method
        }

        /// `service/method`, `service/*` or `*`.
        public var description: String {
            service.isEmpty ? "*" : "\(service)/\(method.isEmpty ? "*" : method)"
        }
    }

    /// The methods this config applies to. Each name may appear only once in a service config. A
    /// config without names applies to no method.
    public var names: [Name]

    /// The timeout of calls that set none (``CallOptions/timeout`` is nil). Must be longer than
    /// zero. Unlike gRPC C-core, which takes the shorter of the two, a timeout the caller sets
    /// replaces this one, longer or shorter.
    public var timeout: Duration?

    /// Whether calls wait for a connection while the channel is failing to connect, rather than
    /// failing at once (see ``CallOptions/waitForReady``). Applies when the call's
    /// ``CallOptions/waitForReady`` is not set; nil leaves gRPC's default, off.
    public var waitForReady: Bool?

    /// The largest request message (serialized, after compression) calls may send; a larger one
    /// fails the call with `resourceExhausted` before it is sent. Applies when
    /// ``CallOptions/maxRequestMessageBytes`` is not set. From 0 to `UInt32.max`.
    public var maxRequestMessageBytes: Int?

    /// The largest response message calls accept, when ``CallOptions/maxResponseMessageBytes``
    /// is not set. From 0 to `UInt32.max`.
    public var maxResponseMessageBytes: Int?

    /// How failed calls are retried, when ``CallOptions/retryPolicy`` is not set.
    public var retryPolicy: RetryPolicy?

    /// Creates a method config; every setting is optional.
    public init(
        names: [Name],
        timeout: Duration? = nil,
        waitForReady: Bool? = nil,
        maxRequestMessageBytes: Int? = nil,
        maxResponseMessageBytes: Int? = nil,
        retryPolicy: RetryPolicy? = nil
    ) {
        self.names = names
        self.timeout = timeout
        self.waitForReady = waitForReady
        self.maxRequestMessageBytes = maxRequestMessageBytes
        self.maxResponseMessageBytes = maxResponseMessageBytes
        self.retryPolicy = retryPolicy
    }
}
