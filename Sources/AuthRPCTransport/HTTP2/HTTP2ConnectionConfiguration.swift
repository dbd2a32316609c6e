/// How a connection is made and which HTTP/2 settings it announces.
package struct HTTP2ConnectionConfiguration: Sendable {
    /// The longest a connection attempt (resolution, TCP to every address, TLS handshake) may take.
    package var connectTimeout: Duration = .seconds(20)
    /// The window each stream starts with (SETTINGS_INITIAL_WINDOW_SIZE). Large enough that a
    /// 4 MiB message arrives without waiting for WINDOW_UPDATE.
    package var initialStreamWindowSize: Int32 = 8 << 20
    /// The connection-level receive window (raised with WINDOW_UPDATE right after the preface).
    package var connectionWindowSize: Int32 = 64 << 20
    /// The largest frame payload the server may send (SETTINGS_MAX_FRAME_SIZE; HTTP/2's default
    /// is 16 KiB). A large response then arrives in frames of 256 KiB, whose payload the
    /// connection reads straight into the response body (ConnectionLoop+BodyInPlace) instead of
    /// copying it there from its read buffer. Larger frames read no faster, and hold the other
    /// streams' frames longer behind one on the wire. The figure also bounds the one buffer
    /// nghttp2 sizes by a frame's announced length before its payload arrives, a GOAWAY's debug
    /// data. (gRPC C-core announces 4 MiB.)
    package var maxFrameSize: UInt32 = 256 << 10
    /// The largest response header block (headers, each 1xx block, trailers) this client accepts,
    /// counted as RFC 9113 section 6.5.2 does: name + value + 32 per field. Announced in
    /// SETTINGS_MAX_HEADER_LIST_SIZE and enforced: past it the stream is reset and fails with
    /// ``TransportFailure/responseHeaderListTooLarge(limit:)``. 16 KiB, gRPC C-core's hard limit.
    package var maxHeaderListSize: UInt32 = 16 << 10
    /// The most output gathered from nghttp2 before it is written: bounds memory when the socket
    /// is slower than nghttp2. Tests lower it to make the bound bite on every write.
    package var maxUnsentBytes = 4 << 20
    /// When set, a PING is sent after this much silence from the peer.
    package var keepaliveInterval: Duration?
    /// How long to wait for the PING acknowledgement before giving up on the connection.
    package var keepaliveTimeout: Duration = .seconds(20)
    /// When set, a connection that has had no open stream for this long ends by itself: a
    /// GOAWAY (NO_ERROR), then close; its owner hears `.closed(nil)`.
    package var idleTimeout: Duration?
    /// TLS settings, or `nil` for plaintext HTTP/2 with prior knowledge (h2c).
    package var tls: TLSContext?
    /// The name the TLS certificate must match and SNI carries, when it differs from the host
    /// connected to (gRPC's `ssl_target_name_override`).
    package var tlsServerNameOverride: String?

    package init() {}
}

/// Where to connect: a host name or IP literal and a port.
package struct HostAndPort: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with brackets around IPv6 literals.
    package var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
