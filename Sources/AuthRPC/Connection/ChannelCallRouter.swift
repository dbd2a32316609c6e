/// Sends each call of a channel to one of several groups of endpoints (xDS: a virtual host's
/// routes, each naming a cluster), each group with connections of its own.
///
/// The channel asks ``route(path:metadata:roll:)`` as it settles a call, which it may do more
/// than once for one call: with the same `roll` and the same routes, the answer must be the same,
/// so every attempt of a call goes to one group.
package protocol ChannelCallRouter: AnyObject, Sendable {
    /// Where a call to `path` (`/package.Service/Method`) with `metadata` goes. `roll` is the
    /// call's own uniformly distributed number, for any random choice (a fraction of calls, a
    /// weighted pick).
    func route(path: String, metadata: Metadata, roll: UInt64) -> ChannelCallRoute

    /// Returns once ``route(path:metadata:roll:)`` can answer other than
    /// ``ChannelCallRoute/pending`` (the routes came, or it is known why they will not).
    func routesKnown() async

    /// The resolver of group `name`'s endpoints; the channel makes one per group, the first time
    /// a call goes to it.
    func resolver(forGroup name: String) -> any ChannelResolver

    /// Whether the routes as they stand can send a call to group `name`. When the routes change,
    /// and when it makes a group, the channel closes the groups the routes no longer name (their
    /// calls in flight finish), so a control plane that renames its clusters over the channel's
    /// life leaves no connections behind.
    func routes(toGroup name: String) -> Bool

    /// Registers `changed`, to be called after the routes changed.
    func observeRouteChanges(_ changed: @escaping @Sendable () -> Void)
}

/// Where a call goes.
package enum ChannelCallRoute: Sendable, Hashable {
    /// The routes are not known yet: the call waits for them (``ChannelCallRouter/routesKnown()``).
    case pending
    /// To the channel's own connections (the group its resolver's ``ChannelResolver/resolve()``
    /// gives), with the call's deadline capped at `maxDuration` when given.
    case channel(maxDuration: Duration?)
    /// To group `name`'s connections, with the call's deadline capped at `maxDuration`.
    case group(String, maxDuration: Duration?)
    /// Nowhere: the call fails UNAVAILABLE with this text.
    case unavailable(String)
}
