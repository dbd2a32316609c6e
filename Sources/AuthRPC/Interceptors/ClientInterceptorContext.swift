/// What an interceptor knows of the call it runs around.
public struct ClientInterceptorContext: Sendable {
    /// The method called.
    public let method: MethodDescriptor

    /// The call's options as the caller gave them (or the channel's
    /// ``Channel/defaultCallOptions``), before the service config's defaults fill in what they
    /// leave unset. What an interceptor changes here is what the call below it uses; changing
    /// ``CallOptions/interceptors`` has no effect on a call already under way.
    public var options: CallOptions

    /// The channel's target (`host:port`).
    public let target: String

    /// The `:authority` the channel sends when the options set none.
    public let channelAuthority: String

    /// Creates a context.
    public init(method: MethodDescriptor, options: CallOptions, target: String, channelAuthority: String) {
        self.method = method
        self.options = options
        self.target = target
        self.channelAuthority = channelAuthority
    }

    /// The call's request metadata: ``CallOptions/initialMetadata`` of ``options``.
    public var metadata: Metadata {
        get { options.initialMetadata }
        set { options.initialMetadata = newValue }
    }

    /// The `:authority` the call is sent with: the options' ``CallOptions/authority``, else the
    /// channel's.
    public var authority: String { options.authority ?? channelAuthority }
}
