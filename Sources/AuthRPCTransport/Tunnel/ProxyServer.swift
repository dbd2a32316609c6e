/// An HTTP proxy that opens tunnels with `CONNECT` (RFC 9110 section 9.3.6), reached over plain
/// TCP: the proxy sees the `CONNECT host:port` line and its own credentials, never what goes
/// through the tunnel.
package struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    /// The proxy's host (a name resolved when connecting, or an IP literal) and port.
    package var address: HostAndPort
    /// The `Proxy-Authorization` field value sent with `CONNECT` (`Basic …`), if any. Never
    /// printed.
    package var authorization: String?

    package init(address: HostAndPort, authorization: String? = nil) {
        self.address = address
        self.authorization = authorization
    }

    /// `http://host:port`, without credentials.
    package var description: String { "http://\(address)" }
}
