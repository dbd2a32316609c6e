internal import COpenSSL

/// Why a cryptographic operation (hashing, random bytes, loading or using a private key) failed.
///
/// The message says what was being done and, when OpenSSL said why, its reason. It never holds
/// key material or the data being signed: OpenSSL's reasons name a routine and a condition only.
package struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, for people.
    package var description: String

    /// An error saying `what` failed, without asking OpenSSL why.
    package init(_ what: String) {
        description = what
    }

    /// An error saying `what` failed, with the reasons OpenSSL queued on this thread (the queue
    /// is emptied, so they cannot be mistaken for a later failure's).
    package static func openSSL(_ what: String) -> CryptoError {
        let reasons = OpenSSLErrors.drain()
        return CryptoError(reasons.isEmpty ? what : "\(what) (\(reasons))")
    }
}
