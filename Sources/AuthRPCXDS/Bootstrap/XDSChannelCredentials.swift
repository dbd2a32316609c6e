/// How the client secures its stream to the control plane (a bootstrap `channel_creds` type).
///
/// A struct rather than an enum so that the types gRPC's bootstrap knows beyond these two
/// (`tls`, say) can be added without breaking a caller's `switch`.
public struct XDSChannelCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The type's name as the bootstrap spells it (`insecure`, `google_default`).
    public let type: String

    private init(type: String) {
        self.type = type
    }

    /// Plaintext HTTP/2 (`insecure`): for a control plane on loopback or in a trusted network.
    public static let insecure = Self(type: "insecure")

    /// TLS with the system's roots, and the process's Google credentials (Application Default
    /// Credentials) as call credentials (`google_default`): what Traffic Director requires.
    public static let googleDefault = Self(type: "google_default")

    /// The bootstrap's `type`; the same as ``type``.
    public var description: String { type }

    /// The credentials this client supports, in the order the bootstrap error lists them.
    static let supported: [Self] = [.insecure, .googleDefault]

    /// The supported credentials a bootstrap `type` names, or `nil` for a type this client
    /// does not support (the bootstrap's next entry is then tried).
    init?(bootstrapType: String) {
        guard let known = Self.supported.first(where: { $0.type == bootstrapType }) else { return nil }
        self = known
    }
}
