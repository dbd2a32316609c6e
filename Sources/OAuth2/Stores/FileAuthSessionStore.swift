import AuthRPCSystem
public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store that keeps the session as a JSON file, for Linux and command-line tools.
///
/// The file is readable by its owner only (0600) in a directory only its owner can enter (0700).
/// A save writes a temporary file in the same directory, flushes it, and renames it over the old
/// file, so a crash or a failed write leaves the previous session whole. Several processes can
/// share the file: ``withExclusiveAccess(timeout:_:)`` takes a `flock` on `<file>.lock` beside it,
/// and ``save(_:)`` and ``remove()`` take the same lock (waiting up to ``lockTimeout``), so a
/// sign-in or a sign-out in one process waits for a refresh in flight in another, and is not
/// overwritten by it. Inside ``withExclusiveAccess(timeout:_:)`` they do not wait for the lock the
/// task already holds.
public struct FileAuthSessionStore: SharedAuthSessionStore {
    /// The session file.
    public let fileURL: URL
    /// Whether the directory was derived from a name (so it is this library's, and a save may
    /// tighten its mode to 0700); a directory given with an explicit path is never re-moded.
    private let ownsDirectory: Bool
    /// This store's identity for the lock: inside its own ``withExclusiveAccess(timeout:_:)`` it
    /// does not wait for itself, while another store on the same file waits like another process.
    private let lockOwner = FileLock.Owner()

    /// The longest name accepted, so that the temporary and lock file names stay within the
    /// file system's limit.
    static let maximumNameLength = 128

    /// How long ``save(_:)`` and ``remove()`` wait for another holder of the lock (a refresh in
    /// another process holds it for at most one token request, 30 s).
    public static let lockTimeout: Duration = .seconds(30)

    /// A store for the session called `name`, in `$XDG_CONFIG_HOME/<applicationName>/<name>.json`
    /// when `XDG_CONFIG_HOME` is an absolute path, else in `$HOME/.config/<applicationName>/<name>.json`.
    ///
    /// - Parameters:
    ///   - name: The session's name: letters, digits, `.`, `_` and `-`, not starting with `.`.
    ///   - applicationName: The directory under the configuration directory; same rules as `name`.
    ///   - environment: Where `XDG_CONFIG_HOME` and `HOME` are read.
    /// - Throws: ``OAuthError/Kind/storage`` for a name that is not allowed, or when neither
    ///   variable holds an absolute path.
    public init(
        name: String,
        applicationName: String = "swift-authrpc",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OAuthError) {
        try Self.validate(name, as: "session name")
        try Self.validate(applicationName, as: "application name")
        let configurationDirectory: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            configurationDirectory = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            configurationDirectory = home + "/.config"
        } else {
            throw OAuthError(
                .storage,
                "cannot place the session file: neither XDG_CONFIG_HOME nor HOME is an absolute path"
            )
        }
        fileURL = URL(fileURLWithPath: configurationDirectory, isDirectory: true)
            .appendingPathComponent(applicationName, isDirectory: true)
            .appendingPathComponent(name + ".json", isDirectory: false)
        ownsDirectory = true
    }

    /// A store for the session file at `fileURL` (a `file:` URL). A missing directory is created
    /// with mode 0700; an existing one is left as it is.
    public init(fileURL: URL) {
        self.fileURL = fileURL
        ownsDirectory = false
    }

    private var filePath: String { fileURL.path }
    private var directoryPath: String { fileURL.deletingLastPathComponent().path }
    var lockFilePath: String { filePath + ".lock" }

    /// Writes `state` to a temporary file and renames it over the session file, holding the
    /// store's lock. While another process (or another store on the same file) holds the lock,
    /// the calling thread sleeps until it is released; a refresh holds it for one token request.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` naming the path and the system's reason (the
    ///   previous session file is then unchanged and no temporary file is left);
    ///   ``OAuthError/Kind/transient`` when another process holds the lock past ``lockTimeout``.
    public func save(_ state: AuthState) throws(OAuthError) {
        try prepareDirectory()
        try FileLock.withLockBlocking(at: lockFilePath, owner: lockOwner, timeout: Self.lockTimeout) {
            () throws(OAuthError) in
            try save(state, beforeRename: { _ in })
        }
    }

    /// ``save(_:)`` with a hook run after the temporary file at the hook's argument is written
    /// and flushed, just before the rename; tests make it throw to see a save fail at that point.
    func save(_ state: AuthState, beforeRename: (_ temporaryPath: String) throws(OAuthError) -> Void) throws(OAuthError)
    {
        let data = try state.encoded()
        try prepareDirectory()
        let temporaryPath =
            directoryPath + "/." + fileURL.lastPathComponent + "." + String(UInt64.random(in: .min ... .max), radix: 16)
            + ".tmp"
        // O_EXCL and O_NOFOLLOW: never write through a file or symlink someone else put there.
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw OAuthError(
                .storage,
                "could not create a temporary file in \(directoryPath): \(systemErrorDescription(errno))"
            )
        }
        var isRenamed = false
        defer { if !isRenamed { unlink(temporaryPath) } }
        try Self.writeDurably(data, to: descriptor, path: temporaryPath)
        try beforeRename(temporaryPath)
        guard rename(temporaryPath, filePath) == 0 else {
            throw OAuthError(.storage, "could not replace \(filePath): \(systemErrorDescription(errno))")
        }
        isRenamed = true
        try syncDirectory()
    }

    /// The largest session file read: a session is a few KiB (tokens, an ID token, the
    /// configuration); anything much larger is not one.
    public static let maximumFileSize = 1024 * 1024

    /// Reads the session file; `nil` when there is none.
    ///
    /// The file is opened once and checked on the opened descriptor: symbolic links are followed,
    /// anything but a regular file (a directory, a FIFO, a device) is refused at once without
    /// waiting on it, and a file larger than ``maximumFileSize`` is refused. The file's bytes are
    /// decoded in place and cleared from memory afterwards; the tokens in the ``AuthState`` are
    /// Swift strings, which are released, not overwritten, when the state goes.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` naming the path when the file cannot be read, is
    ///   not a regular file, is too large or is not a session; the file is left in place.
    public func retrieve() throws(OAuthError) -> AuthState? {
        let bytes: SecretBytes
        do {
            bytes = try BoundedFile.read(filePath, limit: Self.maximumFileSize)
        } catch {
            if error.reason == .notFound { return nil }
            throw OAuthError(.storage, "could not read \(filePath): \(error)", underlying: error)
        }
        do {
            return try bytes.withUnsafeBytes { buffer throws(OAuthError) in
                guard let base = buffer.baseAddress else { return try AuthState(decoding: Data()) }
                // No copy: the decoder reads the cleared-on-release bytes where they are.
                let data = Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: base),
                    count: buffer.count,
                    deallocator: .none
                )
                return try AuthState(decoding: data)
            }
        } catch {
            throw OAuthError(.storage, "\(filePath): \(error.message)", underlying: error)
        }
    }

    /// Deletes the session file, holding the store's lock (so a refresh in flight in another
    /// process cannot bring it back); a missing file is not an error. The lock file stays, since
    /// another process may hold it.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` when the file cannot be removed,
    ///   ``OAuthError/Kind/transient`` when another process holds the lock past ``lockTimeout``.
    public func remove() throws(OAuthError) {
        var info = stat()
        guard stat(directoryPath, &info) == 0 else { return }
        try FileLock.withLockBlocking(at: lockFilePath, owner: lockOwner, timeout: Self.lockTimeout) {
            () throws(OAuthError) in
            guard unlink(filePath) == 0 || errno == ENOENT else {
                throw OAuthError(.storage, "could not remove \(filePath): \(systemErrorDescription(errno))")
            }
        }
    }

    /// Runs `body` while holding an exclusive `flock` on `<file>.lock`, retrying every 20 ms
    /// until `timeout`. The lock is released when `body` returns or throws.
    ///
    /// - Throws: ``OAuthError/Kind/transient`` when another holder keeps the lock past `timeout`,
    ///   ``OAuthError/Kind/storage`` when the lock file cannot be created or locked, or what
    ///   `body` throws.
    public func withExclusiveAccess<Result: Sendable>(
        timeout: Duration,
        _ body: @Sendable () async throws(OAuthError) -> Result
    ) async throws(OAuthError) -> Result {
        try prepareDirectory()
        return try await FileLock.withLock(at: lockFilePath, owner: lockOwner, timeout: timeout, body)
    }

    // MARK: - Names

    private static func validate(_ name: String, as what: String) throws(OAuthError) {
        guard !name.isEmpty else { throw OAuthError(.storage, "the \(what) is empty") }
        guard name.utf8.count <= maximumNameLength else {
            throw OAuthError(
                .storage,
                "the \(what) \"\(name.prefix(16))…\" is longer than \(maximumNameLength) characters"
            )
        }
        guard name.utf8.allSatisfy(isAllowedInName) else {
            throw OAuthError(.storage, "the \(what) \"\(name)\" may only contain letters, digits, '.', '_' and '-'")
        }
        guard !name.hasPrefix(".") else {
            throw OAuthError(.storage, "the \(what) \"\(name)\" must not start with '.'")
        }
    }

    private static func isAllowedInName(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    // MARK: - System calls

    /// Makes sure the directory exists, creating it (and missing parents) with mode 0700, and
    /// tightens it to 0700 when it is ours: created now, or derived from a name and owned by us.
    private func prepareDirectory() throws(OAuthError) {
        var isCreated = false
        var info = stat()
        if stat(directoryPath, &info) != 0 {
            let code = errno
            guard code == ENOENT else {
                throw OAuthError(
                    .storage,
                    "could not examine the directory \(directoryPath): \(systemErrorDescription(code))"
                )
            }
            try Self.makeDirectory(directoryPath)
            isCreated = true
            guard stat(directoryPath, &info) == 0 else {
                throw OAuthError(
                    .storage,
                    "could not examine the directory \(directoryPath): \(systemErrorDescription(errno))"
                )
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw OAuthError(.storage, "\(directoryPath) is not a directory")
        }
        // The umask may have taken bits off a new directory, and an old one may be too open.
        if (isCreated || ownsDirectory) && info.st_uid == geteuid() && info.st_mode & 0o777 != 0o700 {
            guard chmod(directoryPath, 0o700) == 0 else {
                throw OAuthError(
                    .storage,
                    "could not set the mode of \(directoryPath) to 0700: \(systemErrorDescription(errno))"
                )
            }
        }
    }

    /// `mkdir -p` with mode 0700 for every directory it creates.
    private static func makeDirectory(_ path: String) throws(OAuthError) {
        if mkdir(path, 0o700) == 0 { return }
        var code = errno
        if code == ENOENT {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty && parent != path {
                try makeDirectory(parent)
                if mkdir(path, 0o700) == 0 { return }
                code = errno
            }
        }
        // EEXIST: another process created it meanwhile; the caller checks it is a directory.
        guard code == EEXIST else {
            throw OAuthError(.storage, "could not create the directory \(path): \(systemErrorDescription(code))")
        }
    }

    /// Writes all of `data`, flushes it to the disk and closes the descriptor (also on failure).
    private static func writeDurably(_ data: Data, to descriptor: Int32, path: String) throws(OAuthError) {
        var failure: (step: String, code: Int32)?
        // fchmod: the umask must not leave the file with a mode other than 0600.
        if fchmod(descriptor, 0o600) != 0 {
            failure = ("set the mode of", errno)
        } else if let code = writeAll(data, to: descriptor) {
            failure = ("write", code)
        } else if fsync(descriptor) != 0 {
            failure = ("flush", errno)
        }
        // Some file systems only report a failed write when the file is closed.
        if close(descriptor) != 0 && failure == nil {
            failure = ("close", errno)
        }
        if let failure {
            throw OAuthError(.storage, "could not \(failure.step) \(path): \(systemErrorDescription(failure.code))")
        }
    }

    /// Writes all of `data`; the `errno` of the failure, or `nil`.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }

    /// Flushes the directory so the rename itself survives a crash.
    private func syncDirectory() throws(OAuthError) {
        let descriptor = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw OAuthError(
                .storage,
                "the session was written to \(filePath), but its directory could not be opened to flush it: \(systemErrorDescription(errno))"
            )
        }
        defer { close(descriptor) }
        // EINVAL: the file system does not support flushing directories; nothing more can be done.
        guard fsync(descriptor) == 0 || errno == EINVAL else {
            throw OAuthError(
                .storage,
                "the session was written to \(filePath), but its directory could not be flushed: \(systemErrorDescription(errno))"
            )
        }
    }
}
