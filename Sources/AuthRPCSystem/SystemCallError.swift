/// A system call that failed, with the reason the OS gave (`errno`).
package struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed (`eventfd`, `open`, `fstat`…).
    package var call: String
    /// The OS's error code.
    package var errno: Int32

    /// The failure of `call` with `errno`.
    package init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// "`call` failed: reason".
    package var description: String { "\(call) failed: \(Errno.describe(errno))" }
}
