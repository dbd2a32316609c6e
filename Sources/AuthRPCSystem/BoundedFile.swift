#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads small files that hold credentials or sessions: opened once, checked on the opened
/// descriptor, read with a bound.
///
/// - **One path lookup.** The file is opened once and everything is decided on the descriptor
///   (`fstat`), so nothing can be swapped in between a check and the read. Symbolic links are
///   followed (Kubernetes mounts Secrets as `key.json -> ..data/key.json`).
/// - **Regular files only.** A directory, a FIFO, a socket or a device is refused with what it is.
///   The open itself never waits: `O_NONBLOCK` makes opening a FIFO return at once (a FIFO with no
///   writer would otherwise block `open` forever), and the type check refuses it before any read.
/// - **Bounded.** A file whose size is over the limit is refused before reading, and the read stops
///   one byte past the limit, so a file that grows meanwhile is refused too.
package enum BoundedFile {
    /// Why a file could not be read; ``description`` says it in words, without the path (the
    /// caller names the file).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Reason: Sendable, Equatable {
            /// No file at the path (or a symbolic link to nothing).
            case notFound
            /// Something other than a regular file: `kind` says what ("a directory", "a FIFO").
            case notRegularFile(kind: String)
            /// Larger than `limit` bytes.
            case tooLarge(limit: Int)
            /// It grew while it was read.
            case changedWhileRead
            /// A system call failed.
            case system(SystemCallError)
        }

        /// What went wrong.
        package var reason: Reason

        package init(_ reason: Reason) {
            self.reason = reason
        }

        /// "no such file", "it is a FIFO, not a regular file", "it is larger than 65536 bytes", or
        /// the system's reason.
        package var description: String {
            switch reason {
            case .notFound: return "no such file"
            case .notRegularFile(let kind): return "it is \(kind), not a regular file"
            case .tooLarge(let limit): return "it is larger than \(limit) bytes"
            case .changedWhileRead: return "it changed while it was read; try again"
            case .system(let error):
                return error.errno == EACCES ? "permission denied" : error.description
            }
        }
    }

    /// The bytes of the regular file at `path` (symbolic links followed), at most `limit` of them,
    /// in memory that is cleared when the last reference to it goes.
    ///
    /// - Throws: ``Failure`` when there is no such file, when it is not a regular file, when it
    ///   holds more than `limit` bytes, or when a system call fails.
    package static func read(_ path: String, limit: Int) throws(Failure) -> SecretBytes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw Failure(.notFound) }
            throw Failure(.system(SystemCallError("open", errno: code)))
        }
        defer { closeDescriptor(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Failure(.system(SystemCallError("fstat", errno: errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(.notRegularFile(kind: kind(of: info.st_mode)))
        }
        guard Int64(info.st_size) <= Int64(limit) else { throw Failure(.tooLarge(limit: limit)) }
        // One byte more than the file holds: reading it means the file grew since fstat.
        let bytes = SecretBytes(capacity: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.capacity {
            let read = systemRead(descriptor, bytes.base + count, bytes.capacity - count)
            if read == 0 { break }
            if read < 0 {
                let code = errno
                if code == EINTR { continue }
                throw Failure(.system(SystemCallError("read", errno: code)))
            }
            count += read
        }
        guard count < bytes.capacity else {
            throw Failure(bytes.capacity > limit ? .tooLarge(limit: limit) : .changedWhileRead)
        }
        bytes.count = count
        return bytes
    }

    /// What a file that is not regular is, for messages.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "not a regular file"
        }
    }
}

/// read(2), named apart from ``BoundedFile/read(_:limit:)``.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Bytes that may hold a secret (a key file, a session), in memory of their own that is cleared
/// with `explicit_bzero` when the last reference goes, so no copy outlives its use in freed memory.
///
/// A class rather than an array: an array's storage is shared between copies and replaced on
/// write, so clearing one copy can leave another. Read it through ``withUnsafeBytes(_:)``; a
/// `Data` or `String` made from it is an ordinary copy the caller is responsible for.
package final class SecretBytes: @unchecked Sendable {
    // @unchecked Sendable: `count` is set only by the reader that made the value, before it is
    // handed out; after that the bytes are only read.
    fileprivate let base: UnsafeMutableRawPointer
    /// The allocated size.
    package let capacity: Int
    /// How many bytes hold data.
    package fileprivate(set) var count: Int

    /// Zeroed memory for `capacity` bytes, none of them counted yet.
    package init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 1)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: self.capacity)
        count = 0
    }

    /// A copy of `bytes`.
    package convenience init<Bytes: Collection<UInt8>>(copying bytes: Bytes) {
        self.init(capacity: bytes.count)
        UnsafeMutableRawBufferPointer(start: base, count: capacity).copyBytes(from: bytes)
        count = bytes.count
    }

    deinit {
        SecureZero.clear(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        base.deallocate()
    }

    /// Calls `body` with the bytes.
    package func withUnsafeBytes<Result, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> Result
    ) throws(E) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Lets `body` write into the whole capacity; the count it returns becomes ``count`` (`nil`:
    /// it failed, and nothing is counted).
    ///
    /// - Returns: Whether `body` succeeded.
    @discardableResult
    package func fill(_ body: (UnsafeMutableRawBufferPointer) -> Int?) -> Bool {
        guard let written = body(UnsafeMutableRawBufferPointer(start: base, count: capacity)) else {
            count = 0
            return false
        }
        precondition(written >= 0 && written <= capacity, "wrote outside the buffer")
        count = written
        return true
    }

    /// Calls `body` with the bytes, which it may change (to blank out a part already taken).
    package func withUnsafeMutableBytes<Result, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Result
    ) throws(E) -> Result {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }
}

/// Clears memory that held a secret, in a way the optimizer cannot drop as a dead store.
package enum SecureZero {
    /// Overwrites every byte of `bytes` with zero (its count is kept).
    package static func clear(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { clear($0) }
    }

    /// Overwrites every byte of `buffer` with zero.
    package static func clear(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(base, buffer.count)
        #else
        _ = memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }
}
