extension CallOptions {
    /// Fills in what the caller left unset from a service config's method config: the caller's
    /// settings win, the config supplies defaults.
    mutating func applyDefaults(from config: MethodConfig) {
        if timeout == nil { timeout = config.timeout }
        if retryPolicy == nil { retryPolicy = config.retryPolicy }
        if explicitMaxResponseMessageBytes == nil { explicitMaxResponseMessageBytes = config.maxResponseMessageBytes }
        if maxRequestMessageBytes == nil { maxRequestMessageBytes = config.maxRequestMessageBytes }
        if explicitWaitForReady == nil { explicitWaitForReady = config.waitForReady }
    }
}
