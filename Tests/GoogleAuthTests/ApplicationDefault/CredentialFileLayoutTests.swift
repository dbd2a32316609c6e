import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Credential files where deployments put them: a Kubernetes Secret volume (symbolic links into a
/// timestamped directory, swapped atomically on update), and what can go wrong there.
@Suite("Credential files in real layouts: Kubernetes Secret mounts, FIFOs swapped in, oversized files")
struct CredentialFileLayoutTests {
    /// A Secret or projected volume as the kubelet writes it:
    /// `dir/..2026_11_25_12_00_00.123456789/key.json`, `dir/..data -> ..2026_…`,
    /// `dir/key.json -> ..data/key.json` (a projected service account token is `token`).
    struct SecretVolume {
        let scratch: ScratchDirectory
        let directory: URL
        let fileName: String
        static let firstStamp = "..2026_11_25_12_00_00.123456789"

        init(holding contents: Data, as fileName: String = "key.json") throws {
            self.fileName = fileName
            scratch = try ScratchDirectory()
            directory = scratch.url.appendingPathComponent("secret-volume")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try write(contents, under: Self.firstStamp)
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("..data").path,
                withDestinationPath: Self.firstStamp
            )
            try FileManager.default.createSymbolicLink(
                atPath: keyPath,
                withDestinationPath: "..data/\(fileName)"
            )
        }

        /// What the pod names: `dir/key.json`.
        var keyPath: String { directory.appendingPathComponent(fileName).path }

        private func write(_ contents: Data, under stamp: String) throws {
            let timestamped = directory.appendingPathComponent(stamp)
            try FileManager.default.createDirectory(at: timestamped, withIntermediateDirectories: true)
            try contents.write(to: timestamped.appendingPathComponent(fileName))
        }

        /// An update as the kubelet makes it: a new timestamped directory, then `..data` renamed
        /// over to point at it. `makeKey` puts what the new directory holds at the file's name.
        func swap(to stamp: String, _ makeKey: (_ path: String) throws -> Void) throws {
            let timestamped = directory.appendingPathComponent(stamp)
            try FileManager.default.createDirectory(at: timestamped, withIntermediateDirectories: true)
            try makeKey(timestamped.appendingPathComponent(fileName).path)
            let temporary = directory.appendingPathComponent("..data_tmp").path
            try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: stamp)
            #expect(rename(temporary, directory.appendingPathComponent("..data").path) == 0)
        }
    }

    @Test(
        "GOOGLE_APPLICATION_CREDENTIALS and ServiceAccountKey read a key through a Kubernetes Secret mount (before: 'is not a regular file')"
    )
    func kubernetesSecretMount() async throws {
        let google = try await GoogleSandbox.shared()
        let volume = try SecretVolume(
            holding: try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
        )
        let key = try ServiceAccountKey(contentsOfFile: volume.keyPath)
        #expect(key.clientEmail == google.serviceAccountEmail)
        #expect(key.source == volume.keyPath)

        let resolved = try ApplicationDefaultCredentials.resolve(
            in: ApplicationDefaultCredentials.Environment(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": volume.keyPath, "HOME": volume.scratch.path],
                productNamePath: volume.scratch.url.appendingPathComponent("no-product-name").path
            )
        )
        #expect(resolved.identity.principal == google.serviceAccountEmail)
        // The credentials work: the server sees the account.
        let credentials = try GoogleCredentials(resolved, scopes: [ServiceConfiguration.googleTestScope])
        #expect(try await google.call(credentials).message.username == google.serviceAccountEmail)

        // An update of the Secret (a new key) is read from the same path.
        let other = try await google.newServiceAccountKey()
        try volume.swap(to: "..2026_11_25_13_00_00.000000001") { path in try other.write(to: URL(fileURLWithPath: path))
        }
        #expect(try ServiceAccountKey(contentsOfFile: volume.keyPath).clientEmail == other.jsonString("client_email"))
    }

    @Test(
        "a FIFO swapped in behind the links is refused at once with a clear error, never waited on; so is an oversized file"
    )
    func fifoAndOversizedBehindTheLinks() async throws {
        let google = try await GoogleSandbox.shared()
        let volume = try SecretVolume(
            holding: try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
        )
        try volume.swap(to: "..2026_11_25_14_00_00.000000002") { path in #expect(mkfifo(path, 0o600) == 0) }
        let environment = ApplicationDefaultCredentials.Environment(
            variables: ["GOOGLE_APPLICATION_CREDENTIALS": volume.keyPath, "HOME": volume.scratch.path],
            productNamePath: volume.scratch.url.appendingPathComponent("no-product-name").path
        )
        // No writer holds the FIFO: a blocking open, or a read after a separate type check, hangs here.
        let fifo = try #require(throws: OAuthError.self) { try ApplicationDefaultCredentials.resolve(in: environment) }
        #expect(fifo.kind == .invalidConfiguration)
        #expect(
            fifo.message
                == "GOOGLE_APPLICATION_CREDENTIALS: cannot read \(volume.keyPath): it is a FIFO, not a regular file",
            "\(fifo.message)"
        )
        let key = try #require(throws: OAuthError.self) { try ServiceAccountKey(contentsOfFile: volume.keyPath) }
        #expect(key.message == "cannot read \(volume.keyPath): it is a FIFO, not a regular file")

        try volume.swap(to: "..2026_11_25_15_00_00.000000003") { path in
            try Data(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1).write(to: URL(fileURLWithPath: path))
        }
        let large = try #require(throws: OAuthError.self) { try ApplicationDefaultCredentials.resolve(in: environment) }
        #expect(
            large.message.hasSuffix("cannot read \(volume.keyPath): it is larger than 65536 bytes"),
            "\(large.message)"
        )
    }

    @Test("gcloud's well-known file may be a symbolic link too (dotfiles managers link it)")
    func wellKnownFileThroughALink() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let target = try scratch.write(
            try Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath)),
            to: "dotfiles/adc.json"
        )
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("home/.config/gcloud"),
            withIntermediateDirectories: true
        )
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.appendingPathComponent("home/.config/gcloud/application_default_credentials.json").path,
            withDestinationPath: target
        )
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: ApplicationDefaultCredentials.Environment(
                variables: ["HOME": scratch.url.appendingPathComponent("home").path],
                productNamePath: scratch.url.appendingPathComponent("no-product-name").path
            )
        )
        #expect(resolved.identity.kind == .authorizedUser)
    }
}
