import AuthRPCTransport

// Audience binding: on a TLS channel, a call may send an `:authority` other than the channel's
// only when the server's verified certificate is valid for that name too (as gRPC C++ checks a
// call's host against the peer). Otherwise a token minted for the other name (a self-signed JWT's
// audience comes from the authority) would be handed to a server that never proved it is that
// name. The check runs before any provider is asked, on every connection the call is sent on.
extension Channel {
    /// Whether calls with this authority must have it checked against the peer's certificate: on
    /// TLS channels, when its host is not the name the handshake verifies.
    func authorityNeedsCheck(_ authority: String?) -> Bool {
        guard let authority, let verifiedName else { return false }
        return !Self.sameHost(Self.host(ofAuthority: authority), verifiedName)
    }

    /// Fails the call (`unauthenticated`) when `connection`'s verified certificate does not cover
    /// the call's authority.
    func checkAuthority(of call: PreparedCall, on connection: HTTP2Connection) throws(RPCError) {
        let host = Self.host(ofAuthority: call.context.authority)
        guard connection.peerCertificate?.covers(host: host) == true else {
            throw RPCError(
                code: .unauthenticated,
                message: "the call's authority '\(call.context.authority)' is not a name the server's certificate "
                    + "(verified for '\(verifiedName ?? target)') is valid for; no credentials were sent"
            )
        }
    }

    /// The host of a `host[:port]` authority (already checked by `Authority.problem(in:)`),
    /// without the brackets of an IPv6 literal.
    static func host(ofAuthority authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return String(authority.prefix { $0 != ":" })
    }

    /// Host names compare without regard to ASCII case.
    private static func sameHost(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && zip(lhs.utf8, rhs.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
