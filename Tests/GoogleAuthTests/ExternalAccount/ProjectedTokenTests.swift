import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// Kubernetes projected service account tokens as GKE, EKS and AKS mount them
/// (`token -> ..data/token`, `..data -> ..<timestamp>`), and an executable source's `output_file`
/// behind a symbolic link: both are read through the link, once, on the opened file.
@Suite(
    "external_account sources through symbolic links: projected tokens, a linked output_file",
    .timeLimit(.minutes(3))
)
struct ProjectedTokenTests {
    /// The subject tokens the STS emulator received for `audience`, in order.
    static func subjectTokens(_ federation: FederationSandbox, _ audience: String) async throws -> [String] {
        try await federation.exchanges(for: audience).compactMap { ($0["form"] as? [String: String])?["subject_token"] }
    }

    @Test(
        "file source: a projected token is read through its links, and a ..data swap between two refreshes sends the new token (before: 'not a regular file', nothing sent)"
    )
    func projectedTokenAcrossASwap() async throws {
        let federation = try await FederationSandbox.make()
        let audience = federation.audience()
        let first = try await federation.mint(subject: "system:serviceaccount:default:first", audience: audience)
        let volume = try CredentialFileLayoutTests.SecretVolume(holding: Data(first.utf8), as: "token")
        let file = try volume.scratch.write(
            federation.credentialFile(audience: audience, source: ["file": volume.keyPath]),
            to: "projected.json"
        )
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: ApplicationDefaultCredentials.Environment(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": file, "HOME": volume.scratch.path],
                productNamePath: volume.scratch.url.appendingPathComponent("no-product-name").path
            )
        )
        let source = try resolved.tokenSource(scopes: [ExternalAccountTests.scope])
        _ = try await source.fetchToken()
        #expect(try await Self.subjectTokens(federation, audience) == [first])

        // The kubelet rotates the token: a new timestamped directory, ..data renamed over.
        let second = try await federation.mint(subject: "system:serviceaccount:default:second", audience: audience)
        try volume.swap(to: "..2026_11_25_13_00_00.000000001") { path in
            try Data(second.utf8).write(to: URL(fileURLWithPath: path))
        }
        _ = try await source.fetchToken()
        #expect(try await Self.subjectTokens(federation, audience) == [first, second])

        // The call through the mount is the pool's principal.
        let credentials = try GoogleCredentials(resolved, scopes: [ExternalAccountTests.scope])
        #expect(
            try await federation.google.call(credentials).message.username
                == federation.principal(subject: "system:serviceaccount:default:second")
        )
    }

    @Test(
        "executable source: an output_file behind a symbolic link is the cache it should be (before: ignored, the program ran on every refresh)"
    )
    func linkedOutputFile() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let real = scratch.url.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let linked = scratch.url.appendingPathComponent("cache.json").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: "real/cache.json")

        let (file, calls, _) = try await ExternalAccountSourceTests.executableFile(
            federation,
            scratch,
            mode: "ok",
            outputFile: linked,
            name: "linked"
        )
        let allow = ExternalAccountSourceTests.allow
        #expect(try await ExternalAccountTests.fetch(file: file, environment: allow).success != nil)
        #expect(ExternalAccountSourceTests.runs(calls) == 1)
        // The helper wrote its answer through the link; the next source reads it instead of running.
        #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("cache.json").path))
        #expect(try await ExternalAccountTests.fetch(file: file, environment: allow).success != nil)
        #expect(ExternalAccountSourceTests.runs(calls) == 1)

        // A program that answers through the linked output file alone is read too.
        let onlyLinked = scratch.url.appendingPathComponent("only.json").path
        try FileManager.default.createSymbolicLink(atPath: onlyLinked, withDestinationPath: "real/only.json")
        let (onlyFile, _, _) = try await ExternalAccountSourceTests.executableFile(
            federation,
            scratch,
            mode: "output-file-only",
            outputFile: onlyLinked,
            name: "only"
        )
        let answer = try await ExternalAccountTests.fetch(file: onlyFile, environment: allow)
        #expect(answer.success != nil, "\(String(describing: answer.failure?.message))")
    }
}
