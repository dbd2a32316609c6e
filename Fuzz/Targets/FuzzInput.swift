import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Splits a fuzz input into the parts a target needs, in a text-like layout so that seeds stay
/// readable and mutations of one part leave the others in place.
struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// `true` once every byte was taken.
    var isAtEnd: Bool { position >= bytes.count }

    /// The bytes up to the next `\n` (not included), or to the end; the `\n` is consumed.
    mutating func line() -> ArraySlice<UInt8> {
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\n") { position += 1 }
        let line = bytes[start..<position]
        if position < bytes.count { position += 1 }
        return line
    }

    /// Lines up to the next empty line (consumed) or the end.
    mutating func lines() -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        while !isAtEnd {
            let line = line()
            if line.isEmpty { break }
            lines.append(line)
        }
        return lines
    }

    /// Whatever is left.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.count }
        return bytes[min(position, bytes.count)...]
    }

    /// `name: value` lines as header fields (the value starts after `:` and one optional space);
    /// a line without `:` is a name with an empty value.
    static func fields(_ lines: [ArraySlice<UInt8>]) -> [(name: String, value: String)] {
        lines.map { line in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon != line.startIndex else {
                return (String(decoding: line, as: UTF8.self), "")
            }
            var valueStart = colon + 1
            if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
            return (
                String(decoding: line[..<colon], as: UTF8.self), String(decoding: line[valueStart...], as: UTF8.self)
            )
        }
    }
}

/// The scratch directory of the target called `target` (`$TMPDIR/authrpc-fuzz-<pid>-<target>`,
/// made by ``writeScratchFile(_:to:)``): one per target, with no parent shared between targets,
/// since the replay test runs them in parallel and each removes its own when done.
func scratchDirectory(_ target: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
        "authrpc-fuzz-\(getpid())-\(target)",
        isDirectory: true
    )
}

/// Replaces the file at `url` with `bytes` (making its directory, 0700, when missing), without
/// the flush Foundation's writes do: a fuzz input is not worth an fsync, and hundreds a second
/// would wait for the disk.
func writeScratchFile(_ bytes: [UInt8], to url: URL) throws(OracleViolation) {
    var descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    if descriptor < 0 && errno == ENOENT {
        try? FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    }
    guard descriptor >= 0 else { throw OracleViolation("the fuzzer cannot write \(url.path): errno \(errno)") }
    defer { close(descriptor) }
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { throw OracleViolation("the fuzzer cannot write \(url.path): errno \(errno)") }
        written += count
    }
}
