import Foundation
import Testing

@testable import OAuth2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sessions and places shared by the store tests.
enum StoreFixtures {
    static let accessToken = "ya29.SECRET-ACCESS-TOKEN"
    static let refreshToken = "1//SECRET-REFRESH-TOKEN"
    static let clientSecret = "SECRET-CLIENT-SECRET"
    static let secrets = [accessToken, refreshToken, clientSecret]

    static func state(
        scopes: [String] = [ServiceConfiguration.googleTestScope],
        accessToken: String = accessToken
    ) -> AuthState {
        AuthState(
            configuration: .google,
            client: OAuthClient(id: "client-id.apps.example.com", secret: clientSecret),
            scopes: scopes,
            grant: GrantRecord(type: .authorizationCode, date: Date(timeIntervalSince1970: 1_700_000_000)),
            accessToken: accessToken,
            accessTokenExpiresAt: Date(timeIntervalSince1970: 1_700_003_600),
            accessTokenIssuedAt: Date(timeIntervalSince1970: 1_700_000_000),
            refreshToken: refreshToken,
            tokenType: "Bearer"
        )
    }

    /// A fresh directory under the system's temporary directory.
    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "authrpc-stores-\(UUID().uuidString)",
            isDirectory: true
        )
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func mode(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// The error `body` throws, or `nil`.
    static func error<T>(_ body: () async throws(OAuthError) -> T) async -> OAuthError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    static func expectNoSecrets(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in secrets {
            #expect(!text.contains(secret), "a secret appears in: \(text)", sourceLocation: sourceLocation)
        }
    }
}

@Suite("FileAuthSessionStore")
final class FileAuthSessionStoreTests {
    let root = StoreFixtures.temporaryDirectory()
    var environment: [String: String] { ["XDG_CONFIG_HOME": root.path, "HOME": "/nonexistent-home"] }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    func makeStore(_ name: String = "default") throws -> FileAuthSessionStore {
        try FileAuthSessionStore(name: name, applicationName: "test-app", environment: environment)
    }

    /// Runs `body` and returns the storage error it must throw.
    func storageError(
        _ body: () throws(OAuthError) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> OAuthError? {
        do {
            try body()
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.kind == .storage, sourceLocation: sourceLocation)
            return error
        }
    }

    @Test("a saved session reads back, and the file holds exactly its encoded bytes")
    func roundTrip() throws {
        let store = try makeStore()
        let state = StoreFixtures.state()
        try store.save(state)
        let bytes = try Data(contentsOf: store.fileURL)
        #expect(bytes == (try state.encoded()))
        let read = try #require(try store.retrieve())
        #expect(read.refreshToken == StoreFixtures.refreshToken)
        #expect(read.accessToken == StoreFixtures.accessToken)
        #expect(read.client == state.client)
        #expect(read.scopes == state.scopes)
        #expect(read.accessTokenExpiresAt == state.accessTokenExpiresAt)
        #expect(try read.encoded() == bytes)
    }

    @Test("the file is 0600 and its directory 0700, and a too-open directory of ours is tightened")
    func modes() throws {
        let store = try makeStore()
        try store.save(StoreFixtures.state())
        #expect(StoreFixtures.mode(of: store.fileURL.path) == 0o600)
        let directory = store.fileURL.deletingLastPathComponent().path
        #expect(StoreFixtures.mode(of: directory) == 0o700)

        #expect(chmod(directory, 0o755) == 0)
        try store.save(StoreFixtures.state())
        #expect(StoreFixtures.mode(of: directory) == 0o700)
        #expect(StoreFixtures.mode(of: store.fileURL.path) == 0o600)
    }

    @Test("a store given an explicit path creates a missing directory 0700 but leaves an existing one alone")
    func explicitPathDirectoryMode() throws {
        let shared = root.appendingPathComponent("shared", isDirectory: true)
        let store = FileAuthSessionStore(fileURL: shared.appendingPathComponent("session.json"))
        try store.save(StoreFixtures.state())
        #expect(StoreFixtures.mode(of: shared.path) == 0o700)

        #expect(chmod(shared.path, 0o755) == 0)
        try store.save(StoreFixtures.state())
        #expect(StoreFixtures.mode(of: shared.path) == 0o755)
        #expect(StoreFixtures.mode(of: store.fileURL.path) == 0o600)
    }

    @Test("the file goes under XDG_CONFIG_HOME when it is absolute, else under HOME/.config")
    func placement() throws {
        let xdg = try FileAuthSessionStore(
            name: "work",
            applicationName: "tool",
            environment: ["XDG_CONFIG_HOME": "/x/config", "HOME": "/home/u"]
        )
        #expect(xdg.fileURL.path == "/x/config/tool/work.json")
        let relativeXDG = try FileAuthSessionStore(
            name: "work",
            applicationName: "tool",
            environment: ["XDG_CONFIG_HOME": "relative/config", "HOME": "/home/u"]
        )
        #expect(relativeXDG.fileURL.path == "/home/u/.config/tool/work.json")
        let home = try FileAuthSessionStore(name: "work", environment: ["HOME": "/home/u"])
        #expect(home.fileURL.path == "/home/u/.config/swift-authrpc/work.json")
        let explicit = FileAuthSessionStore(fileURL: URL(fileURLWithPath: "/srv/a/b.json"))
        #expect(explicit.fileURL.path == "/srv/a/b.json")

        let error = storageError { () throws(OAuthError) in
            _ = try FileAuthSessionStore(name: "work", environment: ["HOME": "relative"])
        }
        #expect(error?.message.contains("HOME") == true)
    }

    @Test(
        "names outside [A-Za-z0-9._-], empty, too long or starting with '.' are refused",
        arguments: [
            "", ".hidden", "..", "a/b", "../escape", "a b", "naïve", "x\u{0}", String(repeating: "n", count: 129),
        ]
    )
    func invalidNames(name: String) throws {
        let error = storageError { () throws(OAuthError) in
            _ = try FileAuthSessionStore(name: name, environment: environment)
        }
        #expect(error?.message.contains("session name") == true)
        let appError = storageError { () throws(OAuthError) in
            _ = try FileAuthSessionStore(name: "ok", applicationName: name, environment: environment)
        }
        #expect(appError?.message.contains("application name") == true)
    }

    @Test(
        "names made of letters, digits, '.', '_' and '-' are accepted",
        arguments: ["default", "my-app_1.2", "A", String(repeating: "n", count: 128)]
    )
    func validNames(name: String) throws {
        let store = try FileAuthSessionStore(name: name, applicationName: name, environment: environment)
        #expect(store.fileURL.lastPathComponent == name + ".json")
        try store.save(StoreFixtures.state())
        #expect(try store.retrieve() != nil)
    }

    @Test("retrieving when nothing was saved is nil, even without the directory")
    func retrieveNothing() throws {
        let store = try makeStore()
        #expect(!FileManager.default.fileExists(atPath: store.fileURL.deletingLastPathComponent().path))
        #expect(try store.retrieve() == nil)
    }

    @Test("a corrupt file is a storage error naming the path, and the file is kept byte for byte")
    func corruptFile() throws {
        let store = try makeStore()
        try store.save(StoreFixtures.state())
        let corrupt = Data("{\"version\": 1, \"refreshToken\": \"\(StoreFixtures.refreshToken)\"".utf8)
        try corrupt.write(to: store.fileURL)

        let error = storageError { () throws(OAuthError) in _ = try store.retrieve() }
        #expect(error?.message.contains(store.fileURL.path) == true)
        StoreFixtures.expectNoSecrets(error.map { "\($0) \($0.message)" } ?? "")
        #expect(try Data(contentsOf: store.fileURL) == corrupt)

        let incomplete = Data("{\"version\": 1, \"refreshToken\": \"\(StoreFixtures.refreshToken)\"}".utf8)
        try incomplete.write(to: store.fileURL)
        let missingField = storageError { () throws(OAuthError) in _ = try store.retrieve() }
        #expect(missingField?.message.contains(store.fileURL.path) == true)
        #expect(missingField?.message.contains("missing") == true)
        StoreFixtures.expectNoSecrets(missingField?.message ?? "")
        #expect(try Data(contentsOf: store.fileURL) == incomplete)
    }

    @Test(
        "the session file is opened once and checked: a FIFO (no writer) fails at once, a directory and an oversized file fail, a symbolic link is followed (before: retrieve blocked on the FIFO and read any size)"
    )
    func notARegularSessionFile() throws {
        let store = try makeStore()
        let directory = store.fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        #expect(mkfifo(store.fileURL.path, 0o600) == 0)
        let fifo = storageError { () throws(OAuthError) in _ = try store.retrieve() }
        #expect(fifo?.message == "could not read \(store.fileURL.path): it is a FIFO, not a regular file")
        try store.remove()
        #expect(!FileManager.default.fileExists(atPath: store.fileURL.path), "remove takes the FIFO away")

        try FileManager.default.createDirectory(at: store.fileURL, withIntermediateDirectories: false)
        let folder = storageError { () throws(OAuthError) in _ = try store.retrieve() }
        #expect(folder?.message == "could not read \(store.fileURL.path): it is a directory, not a regular file")
        try FileManager.default.removeItem(at: store.fileURL)

        try Data(repeating: UInt8(ascii: " "), count: FileAuthSessionStore.maximumFileSize + 1).write(to: store.fileURL)
        let large = storageError { () throws(OAuthError) in _ = try store.retrieve() }
        #expect(
            large?.message
                == "could not read \(store.fileURL.path): it is larger than \(FileAuthSessionStore.maximumFileSize) bytes"
        )
        try FileManager.default.removeItem(at: store.fileURL)

        // A session kept elsewhere and linked in (a dotfiles manager) is read through the link.
        let elsewhere = try makeStore("elsewhere")
        try elsewhere.save(StoreFixtures.state())
        try FileManager.default.createSymbolicLink(at: store.fileURL, withDestinationURL: elsewhere.fileURL)
        #expect(try store.retrieve()?.refreshToken == StoreFixtures.refreshToken)
    }

    @Test("a stray temporary file from an interrupted save does not disturb the session")
    func strayTemporaryFile() throws {
        let store = try makeStore()
        let first = StoreFixtures.state(scopes: ["first"])
        try store.save(first)
        let directory = store.fileURL.deletingLastPathComponent()
        let stray = directory.appendingPathComponent(".default.json.0123abcd.tmp")
        let partial = try StoreFixtures.state(scopes: ["second"]).encoded().prefix(40)
        try partial.write(to: stray)

        #expect(try store.retrieve()?.scopes == ["first"])
        #expect(try Data(contentsOf: store.fileURL) == first.encoded())
        try store.save(StoreFixtures.state(scopes: ["second"]))
        #expect(try store.retrieve()?.scopes == ["second"])
    }

    @Test("a save that fails before the rename leaves the previous file unchanged and no temporary file")
    func failedSaveKeepsPrevious() throws {
        let store = try makeStore()
        let first = StoreFixtures.state(scopes: ["first"])
        try store.save(first)
        let before = try Data(contentsOf: store.fileURL)
        let directory = store.fileURL.deletingLastPathComponent().path
        let second = StoreFixtures.state(scopes: ["second"])

        var temporaryPath: String?
        let error = storageError { () throws(OAuthError) in
            try store.save(second) { path throws(OAuthError) in
                temporaryPath = path
                // The new session is fully written, 0600, beside the target, not yet renamed.
                #expect(FileManager.default.contents(atPath: path) == (try? second.encoded()))
                #expect(StoreFixtures.mode(of: path) == 0o600)
                #expect((path as NSString).deletingLastPathComponent == directory)
                throw OAuthError(.storage, "simulated failure before rename")
            }
        }
        #expect(error?.message == "simulated failure before rename")
        let path = try #require(temporaryPath)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try Data(contentsOf: store.fileURL) == before)
        // The session and the lock file the save took; no temporary file.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                "default.json", "default.json.lock",
            ]
        )
        #expect(try store.retrieve()?.scopes == ["first"])
    }

    @Test("remove deletes the file; removing nothing is fine")
    func remove() throws {
        let store = try makeStore()
        try store.remove()
        try store.save(StoreFixtures.state())
        try store.remove()
        #expect(!FileManager.default.fileExists(atPath: store.fileURL.path))
        #expect(try store.retrieve() == nil)
        try store.remove()
    }

    @Test("while one store holds the lock, another instance on the same file times out with a transient error")
    func exclusiveAccessExcludes() async throws {
        let holder = try makeStore()
        let other = try makeStore()
        // The uncontended lock waits only for a descriptor copy a fork of another test holds
        // until it execs: long on a loaded machine, so these waits are long too.
        let waited = try await holder.withExclusiveAccess(timeout: .seconds(60)) {
            () async throws(OAuthError) -> Duration in
            let start = ContinuousClock.now
            let error = await StoreFixtures.error { () async throws(OAuthError) in
                try await other.withExclusiveAccess(timeout: .milliseconds(150)) {
                    () async throws(OAuthError) -> Void in
                    Issue.record("the second store entered while the first held the lock")
                }
            }
            #expect(error?.kind == .transient)
            #expect(error?.message.contains(other.lockFilePath) == true)
            return ContinuousClock.now - start
        }
        #expect(waited >= .milliseconds(150))
        #expect(StoreFixtures.mode(of: holder.lockFilePath) == 0o600)
        // Released after the body returned. Not `.zero`: a process another test forks at that
        // moment holds a copy of the lock's descriptor (and so the flock) until it execs.
        let entered = try await other.withExclusiveAccess(timeout: .seconds(60)) { () async throws(OAuthError) in true }
        #expect(entered)
    }

    @Test("the lock is released when the body throws")
    func exclusiveAccessReleasedOnThrow() async throws {
        let store = try makeStore()
        do {
            try await store.withExclusiveAccess(timeout: .seconds(60)) { () async throws(OAuthError) in
                throw OAuthError(.flowFailed, "body failed")
            }
            Issue.record("expected the body's error")
        } catch {
            #expect(error.kind == .flowFailed)
        }
        // Not `.zero`: a process another test forks meanwhile holds a copy of the lock's
        // descriptor until it execs. A lock left held would make this time out.
        let entered = try await makeStore().withExclusiveAccess(timeout: .seconds(60)) {
            () async throws(OAuthError) in true
        }
        #expect(entered)
    }

    @Test("concurrent read-modify-write under the lock loses no update")
    func exclusiveAccessSerializes() async throws {
        let initial = try makeStore()
        try initial.save(StoreFixtures.state(scopes: []))
        let stores = try (0..<8).map { _ in try makeStore() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    // Only a lost hand-off may reach the bound, however loaded the machine is.
                    try await store.withExclusiveAccess(timeout: .seconds(300)) { () async throws(OAuthError) in
                        guard var state = try store.retrieve() else {
                            throw OAuthError(.storage, "the session vanished")
                        }
                        try? await Task.sleep(for: .milliseconds(5))
                        state.scopes.append("s\(index)")
                        try store.save(state)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try initial.retrieve()?.scopes.sorted() == (0..<8).map { "s\($0)" }.sorted())
    }

    @Test("no token or secret appears in error messages or descriptions")
    func noSecretsInMessages() async throws {
        let store = try makeStore()
        let second = try makeStore()
        let state = StoreFixtures.state()
        try store.save(state)
        // The file itself must hold the secrets, or this test would prove nothing.
        let onDisk = String(decoding: try Data(contentsOf: store.fileURL), as: UTF8.self)
        #expect(
            onDisk.contains(StoreFixtures.refreshToken) && onDisk.contains(StoreFixtures.accessToken)
                && onDisk.contains(StoreFixtures.clientSecret)
        )

        var texts = [state.description, String(describing: store)]
        let failedSave = storageError { () throws(OAuthError) in
            try store.save(state) { _ throws(OAuthError) in throw OAuthError(.storage, "stop") }
        }
        texts.append(failedSave.map(String.init(describing:)) ?? "")
        try Data(#"{"version": "\#(StoreFixtures.refreshToken)"}"#.utf8).write(to: store.fileURL)
        texts.append(storageError { () throws(OAuthError) in _ = try store.retrieve() }?.message ?? "")
        try Data(StoreFixtures.accessToken.utf8).write(to: store.fileURL)
        texts.append(storageError { () throws(OAuthError) in _ = try store.retrieve() }?.message ?? "")
        let timeout = try await store.withExclusiveAccess(timeout: .seconds(60)) { () async throws(OAuthError) in
            await StoreFixtures.error { () async throws(OAuthError) in
                try await second.withExclusiveAccess(timeout: .milliseconds(30)) { () async throws(OAuthError) in
                    "entered"
                }
            }
        }
        #expect(timeout?.kind == .transient)
        texts.append(timeout?.message ?? "")
        #expect(texts.count == 6 && texts.allSatisfy { !$0.isEmpty })
        for text in texts { StoreFixtures.expectNoSecrets(text) }
    }
}
