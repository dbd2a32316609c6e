import AuthRPCSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Real files, symbolic links, FIFOs and devices in a scratch directory.
@Suite("BoundedFile: one open, the descriptor checked, a bounded read")
struct BoundedFileTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func contents(_ bytes: SecretBytes) -> String {
        bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test("a regular file is read whole; an empty one is empty")
    func regularFile() throws {
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path("a")))
        #expect(contents(try BoundedFile.read(path("a"), limit: 5)) == "hello")
        try Data().write(to: URL(fileURLWithPath: path("empty")))
        #expect(try BoundedFile.read(path("empty"), limit: 5).count == 0)
    }

    @Test("the Kubernetes Secret layout: key.json -> ..data/key.json, ..data -> ..<timestamp>")
    func kubernetesSymlinks() throws {
        let stamp = "..2026_11_25_12_00_00.123456789"
        try FileManager.default.createDirectory(atPath: path(stamp), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path("\(stamp)/key.json")))
        try FileManager.default.createSymbolicLink(atPath: path("..data"), withDestinationPath: stamp)
        try FileManager.default.createSymbolicLink(atPath: path("key.json"), withDestinationPath: "..data/key.json")
        #expect(contents(try BoundedFile.read(path("key.json"), limit: 64)) == "{}")
    }

    @Test("a missing file, a dangling link, a directory, a FIFO and a device are refused with what they are")
    func notRegularFiles() throws {
        try FileManager.default.createSymbolicLink(atPath: path("dangling"), withDestinationPath: "nowhere")
        #expect(mkfifo(path("fifo"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: path("fifo-link"), withDestinationPath: path("fifo"))
        let cases: [(String, BoundedFile.Failure.Reason, String)] = [
            (path("missing"), .notFound, "no such file"),
            (path("dangling"), .notFound, "no such file"),
            (directory.path, .notRegularFile(kind: "a directory"), "it is a directory, not a regular file"),
            // No writer: a blocking open would wait forever. This returns at once.
            (path("fifo"), .notRegularFile(kind: "a FIFO"), "it is a FIFO, not a regular file"),
            (path("fifo-link"), .notRegularFile(kind: "a FIFO"), "it is a FIFO, not a regular file"),
            ("/dev/zero", .notRegularFile(kind: "a character device"), "it is a character device, not a regular file"),
        ]
        for (path, reason, text) in cases {
            let failure = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path, limit: 64) }
            #expect(failure.reason == reason, "\(path)")
            #expect(failure.description == text, "\(path)")
        }
    }

    @Test("a file over the limit is refused; one at the limit is read")
    func limit() throws {
        try Data(repeating: 0x61, count: 100).write(to: URL(fileURLWithPath: path("big")))
        let failure = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path("big"), limit: 99) }
        #expect(failure.description == "it is larger than 99 bytes")
        #expect(try BoundedFile.read(path("big"), limit: 100).count == 100)
    }

    @Test("a file the reader may not open says so")
    func permissionDenied() throws {
        guard geteuid() != 0 else { return }  // root reads anything
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("locked")))
        #expect(chmod(path("locked"), 0) == 0)
        let failure = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path("locked"), limit: 8) }
        #expect(failure.description == "permission denied")
    }

    @Test("SecretBytes copies and clears: fill counts what was written, a failed fill counts nothing")
    func secretBytes() {
        let bytes = SecretBytes(copying: Array("secret".utf8))
        #expect(contents(bytes) == "secret")
        let filled = SecretBytes(capacity: 8)
        #expect(
            filled.fill { buffer in
                buffer.copyBytes(from: Array("abc".utf8))
                return 3
            }
        )
        #expect(contents(filled) == "abc")
        #expect(!filled.fill { _ in nil })
        #expect(filled.count == 0)

        var buffer = Array("secret".utf8)
        SecureZero.clear(&buffer)
        #expect(buffer == [0, 0, 0, 0, 0, 0])
    }
}
