import AuthRPCSystem
import Testing

@testable import AuthRPC

/// `CallOptions` keeps its values in one shared, copy-on-write storage: a copy must never see a
/// change made through another, and the storage every default-made `CallOptions` shares must
/// never change.
@Suite("CallOptions copy-on-write storage")
struct CallOptionsStorageTests {
    struct FixedProvider: AuthTokenProvider {
        func token() async throws -> String { "provided-token" }
    }

    @Test("options are one word")
    func oneWord() {
        #expect(MemoryLayout<CallOptions>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<CallOptions?>.size == MemoryLayout<Int>.size)
    }

    @Test("a change to a copy, by assignment or in place, leaves the original as it was")
    func copiesAreIndependent() {
        let original = CallOptions(
            timeout: .seconds(5),
            credentials: .accessToken("token"),
            initialMetadata: ["x-a": "1"],
            authority: "a.example:443",
            userAgentPrefix: "app/1",
            maxResponseMessageBytes: 10,
            compression: .gzip,
            allowsInsecureCredentials: true,
            retriesUnauthenticatedOnce: false,
            maxRequestMessageBytes: 20,
            retryPolicy: RetryPolicy(
                maxAttempts: 3,
                initialBackoff: .seconds(1),
                maxBackoff: .seconds(2),
                backoffMultiplier: 2
            ),
            waitForReady: true
        )
        var copy = original
        copy.timeout = .seconds(9)
        copy.initialMetadata.addString("2", forKey: "x-b")
        copy.interceptors.append(InterceptorTests.Tagging(name: "copy", log: Locked([])))
        copy.authTokenProvider = FixedProvider()
        copy.authority = nil
        copy.userAgentPrefix = nil
        copy.maxResponseMessageBytes = 11
        copy.compression = nil
        copy.allowsInsecureCredentials = false
        copy.retriesUnauthenticatedOnce = true
        copy.maxRequestMessageBytes = nil
        copy.retryPolicy = nil
        copy.waitForReady = false

        #expect(original.timeout == .seconds(5))
        #expect(original.initialMetadata == ["x-a": "1"])
        #expect(original.interceptors.isEmpty)
        #expect(original.oauth2AccessToken == "token")
        #expect(original.authority == "a.example:443")
        #expect(original.userAgentPrefix == "app/1")
        #expect(original.maxResponseMessageBytes == 10)
        #expect(original.compression == .gzip)
        #expect(original.allowsInsecureCredentials)
        #expect(!original.retriesUnauthenticatedOnce)
        #expect(original.maxRequestMessageBytes == 20)
        #expect(original.retryPolicy?.maxAttempts == 3)
        #expect(original.waitForReady)

        #expect(copy.timeout == .seconds(9))
        #expect(copy.initialMetadata["x-b"].first == .string("2"))
        #expect(copy.initialMetadata.count == 2)
        #expect(copy.interceptors.count == 1)
        #expect(copy.authTokenProvider is FixedProvider)
        #expect(copy.authority == nil)
        #expect(copy.maxResponseMessageBytes == 11)
        #expect(copy.retryPolicy == nil)
        #expect(!copy.waitForReady)
    }

    @Test("options made with every default share one storage, which changing one of them never touches")
    func sharedDefaults() {
        var first = CallOptions()
        var second = CallOptions(timeout: nil, initialMetadata: [:])
        #expect(first.storage === second.storage)
        first.timeout = .seconds(1)
        first.initialMetadata.addString("1", forKey: "x-a")
        second.oauth2AccessToken = "token"
        #expect(first.storage !== second.storage)

        let fresh = CallOptions()
        #expect(fresh.timeout == nil)
        #expect(fresh.initialMetadata.isEmpty)
        #expect(fresh.credentials == nil)
        #expect(fresh.retriesUnauthenticatedOnce)
        #expect(first.timeout == .seconds(1))
        #expect(first.oauth2AccessToken == nil)
        #expect(second.timeout == nil)
        #expect(second.initialMetadata.isEmpty)
    }

    @Test("a change to options no other copy shares is made in place")
    func uniqueChangesInPlace() {
        // Identities, not references: holding the storage would make it shared. A copy would be
        // allocated while the old storage is still alive, so at another address.
        var options = CallOptions(timeout: .seconds(1))
        let identity = ObjectIdentifier(options.storage)
        options.timeout = .seconds(2)
        #expect(ObjectIdentifier(options.storage) == identity)
        options.initialMetadata.addString("1", forKey: "x-a")
        #expect(ObjectIdentifier(options.storage) == identity)
        #expect(options.timeout == .seconds(2))
    }

    @Test("a service config's defaults fill in only what the caller left unset, and copy nothing when they add nothing")
    func methodConfigDefaults() {
        var options = CallOptions(timeout: .seconds(3))
        let shared = options
        options.applyDefaults(from: MethodConfig(names: [MethodConfig.Name(service: "s")]))
        #expect(options.storage === shared.storage)

        options.applyDefaults(
            from: MethodConfig(
                names: [MethodConfig.Name(service: "s")],
                timeout: .seconds(10),
                waitForReady: true,
                maxRequestMessageBytes: 5,
                maxResponseMessageBytes: 6
            )
        )
        #expect(options.timeout == .seconds(3))
        #expect(options.waitForReady)
        #expect(options.maxRequestMessageBytes == 5)
        #expect(options.maxResponseMessageBytes == 6)
        #expect(shared.maxRequestMessageBytes == nil)
        #expect(!shared.waitForReady)
    }
}
