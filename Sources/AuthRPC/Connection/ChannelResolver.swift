import AuthRPCSystem
package import AuthRPCTransport

/// Resolves a target whose scheme a module above AuthRPC registered (AuthRPCXDS registers
/// `xds`): AuthRPC cannot depend on those modules, so they fill this hook instead.
///
/// The channel asks ``resolve()`` whenever it would look a name up (first call, after a failure,
/// at its resolution interval, and when the resolver says its answer changed) and spreads calls
/// over the addresses with round robin, or, when the answer places them in priorities and
/// weighted localities, over the ready addresses of the first priority that has any.
package protocol ChannelResolver: AnyObject, Sendable {
    /// The addresses calls go to now (with their places in the balancing tree, if any), or why
    /// there are none.
    func resolve() async -> Result<ChannelResolution, TransportFailure>

    /// Registers `changed`, to be called whenever ``resolve()`` may answer differently (a control
    /// plane pushed an update): the channel then resolves again at once rather than at its next
    /// interval. A resolver that cannot tell does nothing (the default).
    func observeChanges(_ changed: @escaping @Sendable () -> Void)

    /// What sends each call to one of several groups of endpoints, when the target routes per
    /// call (an xDS virtual host's routes); nil (the default) when every call goes to the
    /// addresses ``resolve()`` gives.
    var callRouter: (any ChannelCallRouter)? { get }

    /// Stops what the resolver runs of its own (an xDS client's stream to its control plane),
    /// without waiting: the channel calls it when it closes. Does nothing by default.
    func close()

    /// ``close()``, then returns once the resolver's own connections have ended (their I/O
    /// threads done with OpenSSL): ``Channel/shutdown()`` waits for it. Returns at once by
    /// default.
    func shutdown() async

    /// How many of the resolver's own connections have not ended yet; 0 by default.
    var openConnectionCount: Int { get }
}

extension ChannelResolver {
    package func observeChanges(_ changed: @escaping @Sendable () -> Void) {}

    package var callRouter: (any ChannelCallRouter)? { nil }

    package func close() {}

    package func shutdown() async {}

    package var openConnectionCount: Int { 0 }
}

/// The resolvers registered per scheme.
package enum ChannelResolvers {
    /// Makes the resolver for one channel from the target's text after `scheme:`; throws an
    /// `invalidArgument` naming what is wrong with the target or the resolver's configuration.
    package typealias Factory = @Sendable (_ rest: String) throws(RPCError) -> any ChannelResolver

    private static let factories = Locked<[String: Factory]>([:])

    /// Registers (or replaces) the resolver of `scheme` (lowercase) for channels made from now on.
    package static func register(scheme: String, _ factory: @escaping Factory) {
        factories.withLock { $0[scheme.lowercased()] = factory }
    }

    static func factory(for scheme: String) -> Factory? {
        factories.withLock { $0[scheme] }
    }
}
