/// A validated cluster (CDS): an EDS cluster balanced round robin.
struct XDSCluster: Sendable, Hashable {
    let name: String
    /// The EDS resource with its endpoints: `eds_cluster_config.service_name`, or the cluster's
    /// name when that is empty.
    let endpointsName: String
}
