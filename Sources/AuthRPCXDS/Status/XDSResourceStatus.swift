/// One resource an `xds:///` channel's client has asked its control plane for, as the client
/// holds it now (the per-resource part of what gRPC's CSDS reports).
///
/// Names, versions and reasons come from the control plane as it sent them: make them printable
/// before a terminal shows them.
public struct XDSResourceStatus: Sendable, Hashable {
    /// Where the client stands with the resource.
    public struct State: Sendable, Hashable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// Asked for; the control plane has not answered for it yet.
        public static let requested = State("requested")
        /// The control plane said it has no such resource, or did not name it within the
        /// does-not-exist timer (15 s, gRFC A27).
        public static let doesNotExist = State("does not exist")
        /// Its newest version was valid and taken (ACKed).
        public static let acked = State("acked")
        /// Its newest version was refused (NACKed, ``XDSResourceStatus/nackReason`` says why);
        /// the client keeps serving the last good version, if it had one.
        public static let nacked = State("nacked")

        /// The state in words.
        public var description: String { name }
    }

    /// The resource's type URL, e.g. `type.googleapis.com/envoy.config.cluster.v3.Cluster`.
    public var typeURL: String
    /// The resource's name (a listener's, a route configuration's, a cluster's, or the cluster
    /// an endpoint set is for).
    public var name: String
    /// The `version_info` of the response that carried the version in use; empty when the client
    /// has none.
    public var version: String
    /// Where the client stands with it.
    public var state: State
    /// Why its newest version was refused: the field and the problem, as the client's NACK named
    /// them (`error_detail`). Nil unless ``state`` is ``State/nacked``.
    public var nackReason: String?

    /// A status with these parts.
    public init(typeURL: String, name: String, version: String, state: State, nackReason: String? = nil) {
        self.typeURL = typeURL
        self.name = name
        self.version = version
        self.state = state
        self.nackReason = nackReason
    }
}
