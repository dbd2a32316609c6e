/// How the client secures its stream to the control plane (a bootstrap `channel_creds` type).
public enum XDSChannelCredentials: String, Sendable, Hashable, CaseIterable {
    /// Plaintext HTTP/2 (`insecure`): for a control plane on loopback or in a trusted network.
    case insecure
    /// TLS with the system's roots, and the process's Google credentials (Application Default
    /// Credentials) as call credentials (`google_default`): what Traffic Director requires.
    case googleDefault = "google_default"
}
