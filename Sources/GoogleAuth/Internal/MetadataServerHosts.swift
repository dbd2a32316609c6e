import OAuth2

/// The metadata servers GoogleAuth reaches over plain http, never through a proxy (OAuth2's
/// ``/OAuth2/MetadataHosts`` has the rules; these are the names). Each serves only http at a
/// link-local address that never leaves the machine's host.
enum MetadataServerHosts {
    /// Compute Engine's metadata server by its name and its address on port 80, and `configured`
    /// (`HOST[:PORT]`, from `GCE_METADATA_HOST` or the caller) when given.
    static func computeEngine(configured: String?) -> MetadataHosts {
        MetadataHosts(["metadata.google.internal", "169.254.169.254"] + (configured.map { [$0] } ?? []))
    }

    /// AWS's instance metadata service (IMDS), IPv4 and IPv6, as google-auth allows them.
    static let aws = MetadataHosts(["169.254.169.254", "[fd00:ec2::254]"])

    /// Where a `url` credential source may be reached over plain http, beyond loopback:
    /// the clouds' link-local metadata addresses (AWS's and Azure's IMDS, Google's metadata
    /// server), never a host on a network.
    static let credentialSources = MetadataHosts([
        "169.254.169.254", "[fd00:ec2::254]", "metadata.google.internal",
    ])
}
