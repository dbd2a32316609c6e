import Foundation
import TestSupport

/// `Tests/Peers/rs256_peer.py`: pyca/cryptography as an independent RS256 signer and verifier
/// (its own key generation, encodings and checks), one command per child process.
enum RS256Peer {
    /// Runs `command` with `request` on its stdin; the JSON object it prints. The child is waited
    /// for on a thread of its own, not on one of the cooperative pool's.
    static func run(_ command: String, _ request: [String: Any] = [:]) async throws -> [String: Any] {
        let input = try JSONSerialization.data(withJSONObject: request)
        let output: Data = try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try blockingRun(command, input) }) }.start()
        }
        guard let object = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw PeerError("rs256_peer.py \(command) printed no JSON object")
        }
        return object
    }

    private static func blockingRun(_ command: String, _ input: Data) throws -> Data {
        let process = Process()
        process.executableURL = PackageRoot.python
        process.arguments = [PackageRoot.url.appendingPathComponent("Tests/Peers/rs256_peer.py").path, command]
        let stdin = Pipe.closedOnExec()
        let stdout = Pipe.closedOnExec()
        // stderr goes to a file, so a chatty child never blocks on a pipe nobody reads.
        let errorsURL = FileManager.default.temporaryDirectory.appendingPathComponent("rs256-peer-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsURL) }
        let errors = try FileHandle(forWritingTo: errorsURL)
        defer { try? errors.close() }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = errors
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let exit = ChildExit.waitBlocking(for: process)
        guard exit.code == 0, !exit.signalled else {
            let stderr = (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? ""
            throw PeerError("rs256_peer.py \(command) failed (\(exit.code)): \(stderr)")
        }
        return output
    }
}
