public import SwiftProtobuf

/// The client's identity sent to the control plane in every request (the bootstrap's `node`).
public struct XDSNode: Sendable, Hashable {
    /// Where the node runs, as the control plane groups nodes (`node.locality`).
    public struct Locality: Sendable, Hashable {
        /// `region`; empty when not given.
        public var region: String
        /// `zone`; empty when not given.
        public var zone: String
        /// `sub_zone`; empty when not given.
        public var subZone: String

        /// Creates a locality.
        public init(region: String = "", zone: String = "", subZone: String = "") {
            self.region = region
            self.zone = zone
            self.subZone = subZone
        }
    }

    /// `node.id`; empty when not given (some control planes require one).
    public var id: String
    /// `node.cluster`; empty when not given.
    public var cluster: String
    /// `node.locality`, if given.
    public var locality: Locality?
    /// `node.metadata`: any JSON object, passed to the control plane as written.
    public var metadata: Google_Protobuf_Struct

    /// Creates a node.
    public init(
        id: String = "",
        cluster: String = "",
        locality: Locality? = nil,
        metadata: Google_Protobuf_Struct = Google_Protobuf_Struct()
    ) {
        self.id = id
        self.cluster = cluster
        self.locality = locality
        self.metadata = metadata
    }
}
