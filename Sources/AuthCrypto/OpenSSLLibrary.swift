internal import COpenSSL

/// OpenSSL, initialised by this package before its first use without the clean-up at exit that
/// OpenSSL registers by default.
///
/// That clean-up (`OPENSSL_cleanup`, an `atexit` handler) frees OpenSSL's global state while
/// other threads may still use it: a connection's I/O thread that frees its TLS session as the
/// program exits would then free memory twice and abort the process. The memory goes with the
/// process anyway. OpenSSL keeps the choice its first initialisation made, so a library that
/// initialised it earlier in the process keeps the clean-up.
package enum OpenSSLLibrary {
    /// Whether OpenSSL initialised (it fails only when memory runs out; the call that needs
    /// OpenSSL then reports its own failure).
    private static let initialised = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Initialises OpenSSL the first time; after that, costs one check. Every entry point of
    /// this package that calls OpenSSL calls this first.
    @inline(__always)
    package static func initialise() {
        _ = initialised
    }
}
