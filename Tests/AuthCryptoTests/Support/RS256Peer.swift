import Foundation
import TestSupport

/// `Tests/Peers/rs256_peer.py`: pyca/cryptography as an independent RS256 signer and verifier
/// (its own key generation, encodings and checks), one command per child process.
enum RS256Peer {
    /// Runs `command` with `request` on its stdin; the JSON object it prints.
    static func run(_ command: String, _ request: [String: Any] = [:]) async throws -> [String: Any] {
        let result = try await ChildProcess.run(
            PackageRoot.python,
            [PackageRoot.url.appendingPathComponent("Tests/Peers/rs256_peer.py").path, command],
            input: try JSONSerialization.data(withJSONObject: request)
        )
        guard result.status == 0 else {
            throw PeerError("rs256_peer.py \(command) failed (\(result.status)): \(result.stderr)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw PeerError("rs256_peer.py \(command) printed no JSON object")
        }
        return object
    }
}
