extension CallOptions {
    /// Fills in what the caller left unset from a service config's method config: the caller's
    /// settings win, the config supplies defaults. Writes only what changes, so options the
    /// config adds nothing to stay shared (no copy of their storage).
    mutating func applyDefaults(from config: MethodConfig) {
        if timeout == nil, let value = config.timeout { timeout = value }
        if retryPolicy == nil, let value = config.retryPolicy { retryPolicy = value }
        if explicitMaxResponseMessageBytes == nil, let value = config.maxResponseMessageBytes {
            explicitMaxResponseMessageBytes = value
        }
        if maxRequestMessageBytes == nil, let value = config.maxRequestMessageBytes { maxRequestMessageBytes = value }
        if explicitWaitForReady == nil, let value = config.waitForReady { explicitWaitForReady = value }
    }
}
