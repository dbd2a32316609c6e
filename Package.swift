// swift-tools-version:6.2
// Authenticated unary gRPC calls over libnghttp2 + OpenSSL, with an OAuth 2.0 AuthSession.
import PackageDescription

// Every hand-written target: Swift 6 mode, and the compiler checks each file's imports (a module
// used in a public signature must be imported `public`; a member is visible only where its
// module is imported) and spells existentials (as grpc-swift-2's defaultSwiftSettings).
let defaultSwiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "swift-authrpc",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AuthRPC", targets: ["AuthRPC"]),
        .library(name: "AuthSampleService", targets: ["AuthSampleService"]),
        .library(name: "OAuth2", targets: ["OAuth2"]),
        .library(name: "GoogleAuth", targets: ["GoogleAuth"]),
        .executable(name: "auth_sample", targets: ["AuthSample"]),
        .executable(name: "interop_client", targets: ["InteropClient"]),
        .executable(name: "protoc-gen-authrpc-swift", targets: ["protoc-gen-authrpc-swift"]),
        .plugin(name: "AuthRPCGenerator", targets: ["AuthRPCGenerator"]),
        .library(name: "GoogleAPICore", targets: ["GoogleAPICore"]),
        .library(name: "AuthRPCTracing", targets: ["AuthRPCTracing"]),
        .library(name: "AuthRPCMetrics", targets: ["AuthRPCMetrics"]),
        .library(name: "AuthRPCXDS", targets: ["AuthRPCXDS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Only the AuthRPCTracing and AuthRPCMetrics products (and their tests) use these; AuthRPC
        // does not, so its dependency graph stays as small as it was.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        // C shims: module maps and the few macros Swift cannot import. Each is imported
        // `internal` by the one target that owns its concept.
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"]), .brew(["nghttp2"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(name: "CPlatform"),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // Internal: locks, wake-ups, errno text and descriptors (as NIOConcurrencyHelpers and
        // NIO's System.swift). No product.
        .target(
            name: "AuthRPCSystem",
            dependencies: ["CPlatform"],
            swiftSettings: defaultSwiftSettings
        ),

        // Internal: SHA-256, HMAC, RSA keys with RS256 signing, random bytes, all from
        // OpenSSL (as swift-crypto's CryptoBoringWrapper). No product.
        .target(
            name: "AuthCrypto",
            dependencies: ["COpenSSL", "AuthRPCSystem"],
            swiftSettings: defaultSwiftSettings
        ),

        // Internal: the package's transport, knowing nothing of gRPC: HTTP/2 connections (the I/O loop,
        // nghttp2 sessions, streams), HTTP/1.1 exchanges, the HTTP CONNECT tunnel, TLS and sockets.
        // No product; imported `internal` by AuthRPC and by OAuth2's transport only.
        .target(
            name: "AuthRPCTransport",
            dependencies: ["CNGHTTP2", "COpenSSL", "AuthRPCSystem", "AuthCrypto"],
            swiftSettings: defaultSwiftSettings
        ),

        // gRPC unary calls: Channel, CallOptions, Metadata, RPCError, framing, compression, credentials.
        .target(
            name: "AuthRPC",
            dependencies: [
                "AuthRPCTransport", "AuthRPCSystem", "AuthRPCSyntax", "CZlib",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // A client span per call (OpenTelemetry's rpc.* attributes, the trace context injected into
        // the request metadata), as an interceptor, on swift-distributed-tracing.
        .target(
            name: "AuthRPCTracing",
            dependencies: ["AuthRPC", .product(name: "Tracing", package: "swift-distributed-tracing")],
            swiftSettings: defaultSwiftSettings
        ),

        // Call durations, attempts and token requests per method, as an interceptor, on swift-metrics.
        .target(
            name: "AuthRPCMetrics",
            dependencies: ["AuthRPC", .product(name: "CoreMetrics", package: "swift-metrics")],
            swiftSettings: defaultSwiftSettings
        ),

        // xDS (gRFC A27/A28): the bootstrap, the subset of Envoy's xDS v3 messages a proxyless
        // client decodes (Protos/xds, generated), and their validation into routes, clusters and
        // endpoints; the ADS stream, the `xds` scheme and the clients' status (XDSScheme). A target
        // and product of its own so that AuthRPC's dependency graph stays as it is (GoogleAuth:
        // the `google_default` channel credentials).
        .target(
            name: "AuthRPCXDS",
            dependencies: [
                "AuthRPC", "AuthRPCSystem", "AuthRPCTransport", "GoogleAuth",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // Generated messages and typed clients for grpc.testing.TestService.
        .target(
            name: "AuthSampleService",
            dependencies: [
                "AuthRPC",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // What only Google APIs need, as Google's gax libraries hold it: routing headers
        // (`x-goog-request-params`), `x-goog-api-client`, pages of list methods and long-running
        // operations, with the messages and clients of Google's common services
        // (google.longrunning.Operations, google.cloud.location.Locations, google.iam.v1.IAMPolicy)
        // generated from the vendored googleapis protos in Protos/google. Generated Google clients
        // depend on it.
        .target(
            name: "GoogleAPICore",
            dependencies: [
                "AuthRPC", "AuthRPCSyntax",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // Internal: the text syntaxes the package's targets share, each written once: percent-encoding,
        // base64url, Google's path templates (the client generator parses them as the runtime matches
        // them) and gRPC's service config (the generator checks the files it embeds as the runtime
        // loads them). No dependency, no product.
        .target(
            name: "AuthRPCSyntax",
            swiftSettings: defaultSwiftSettings
        ),

        // Generated messages and clients for Google Cloud Pub/Sub (google.pubsub.v1) from the protos
        // google-cloud-pubsub ships (Protos/google/pubsub): an example of a generated Google client
        // (Google ships one package per service), used by Examples/GoogleAPIs and the interop tests.
        .target(
            name: "GooglePubSub",
            dependencies: [
                "AuthRPC", "GoogleAPICore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Examples/GooglePubSub",
            swiftSettings: defaultSwiftSettings
        ),

        // The client generator: typed AuthRPC clients for the services of any .proto file.
        .target(
            name: "AuthRPCCodeGen",
            dependencies: [
                "AuthRPCSyntax",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .executableTarget(
            name: "protoc-gen-authrpc-swift",
            dependencies: [
                "AuthRPCCodeGen",
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // The build-tool plugin: protoc with protoc-gen-swift and protoc-gen-authrpc-swift over a
        // target's .proto files, configured by its authrpc-swift-config.json.
        .plugin(
            name: "AuthRPCGenerator",
            capability: .buildTool(),
            dependencies: [
                "protoc-gen-authrpc-swift",
                .product(name: "protoc-gen-swift", package: "swift-protobuf"),
            ]
        ),

        // OAuth 2.0 sessions (refresh, flows, stores) that plug in as a call's token provider.
        .target(
            name: "OAuth2",
            dependencies: [
                "AuthRPC", "AuthRPCTransport", "AuthRPCSyntax", "AuthCrypto", "AuthRPCSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // Google credentials (service accounts, authorized users, Compute Engine, ADC) as token sources.
        .target(
            name: "GoogleAuth",
            dependencies: [
                "OAuth2", "AuthRPC", "AuthRPCSyntax", "AuthCrypto", "AuthRPCSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: defaultSwiftSettings
        ),

        // The auth sample CLI: sign in, then call grpc.testing.TestService/UnaryCall.
        .executableTarget(
            name: "AuthSample",
            dependencies: [
                "AuthRPC", "AuthRPCXDS", "AuthSampleService", "OAuth2", "GoogleAuth", "AuthRPCSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/AuthSample",
            swiftSettings: defaultSwiftSettings
        ),

        // gRPC's interop test client: the unary and auth cases of doc/interop-test-descriptions.md
        // with the standard flags, against any interop server. Public API only.
        .executableTarget(
            name: "InteropClient",
            dependencies: [
                "AuthRPC", "AuthSampleService", "OAuth2", "GoogleAuth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Examples/InteropClient",
            swiftSettings: defaultSwiftSettings
        ),

        // Pub/Sub and IAM with Application Default Credentials, through the generated clients
        // (Examples/GoogleAPIs; the interop tests run it against the sandbox by Google's name).
        .executableTarget(
            name: "GoogleAPIsExample",
            dependencies: ["AuthRPC", "GoogleAuth", "GoogleAPICore", "GooglePubSub", "OAuth2"],
            path: "Examples/GoogleAPIs",
            swiftSettings: defaultSwiftSettings
        ),

        // Starts the real peers the tests talk to (the sandbox and the HTTP/2 fault server).
        .target(
            name: "TestSupport",
            dependencies: ["AuthRPC", "AuthRPCSystem", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport",
            swiftSettings: defaultSwiftSettings
        ),
        // What OAuth2's and GoogleAuth's tests share: a recording transport in front of the
        // product's default one.
        .target(
            name: "OAuth2TestSupport",
            dependencies: ["OAuth2", "AuthRPCSystem"],
            path: "Tests/OAuth2TestSupport",
            swiftSettings: defaultSwiftSettings
        ),
        // The chaos soak's client (Tests/Peers/chaos_soak.py drives it: `make soak`).
        .executableTarget(
            name: "ChaosSoak",
            dependencies: ["AuthRPC", "AuthSampleService", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ChaosSoak",
            swiftSettings: defaultSwiftSettings
        ),
        // A client the channel tests run where the test runner cannot go: in a mount namespace
        // with its own hosts file (Tests/AuthRPCTests/Connection/NameResolutionTests.swift).
        .executableTarget(
            name: "ChannelProbe",
            dependencies: ["AuthRPC", "AuthSampleService"],
            path: "Tests/ChannelProbe",
            swiftSettings: defaultSwiftSettings
        ),
        // Connects with AuthRPCTransport where the test runner cannot go: inside a network namespace
        // the Happy Eyeballs test makes (Tests/AuthRPCTransportTests/Network); and exits after its
        // first use of OpenSSL, for OpenSSLExitTests.
        .executableTarget(
            name: "ConnectProbe",
            dependencies: ["AuthRPCTransport", "AuthRPCSystem", "COpenSSL"],
            path: "Tests/ConnectProbe",
            swiftSettings: defaultSwiftSettings
        ),
        // The shared syntaxes, and that the runtime and the client generator, which share them,
        // accept and refuse the same service configs.
        .testTarget(
            name: "AuthRPCSyntaxTests",
            dependencies: ["AuthRPCSyntax", "AuthRPC", "AuthRPCCodeGen"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCSystemTests",
            dependencies: ["AuthRPCSystem"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthCryptoTests",
            dependencies: ["AuthCrypto", "AuthRPCSyntax", "TestSupport"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCTransportTests",
            dependencies: ["AuthRPCTransport", "AuthRPCSystem", "TestSupport", "ConnectProbe"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCTests",
            dependencies: [
                "AuthRPCTransport", "AuthRPC", "AuthRPCSyntax", "AuthRPCSystem", "AuthSampleService", "TestSupport",
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "GoogleAPICoreTests",
            dependencies: ["GoogleAPICore", "AuthRPC", "AuthRPCSystem", "TestSupport"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCXDSTests",
            dependencies: [
                "AuthRPCXDS", "AuthRPC", "AuthRPCTransport", "AuthSampleService", "TestSupport", "GoogleAuth",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCTracingTests",
            dependencies: [
                "AuthRPCTracing", "AuthRPC", "AuthRPCSystem", "TestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCMetricsTests",
            dependencies: [
                "AuthRPCMetrics", "AuthRPC", "AuthRPCSystem", "TestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "InteropTests",
            dependencies: [
                "AuthRPC", "AuthSampleService", "GoogleAPICore", "GooglePubSub", "OAuth2", "GoogleAuth",
                "TestSupport",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "OAuth2Tests",
            dependencies: [
                "OAuth2", "AuthRPC", "AuthRPCSyntax", "AuthCrypto", "AuthRPCSystem", "AuthSampleService", "TestSupport",
                "OAuth2TestSupport",
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthSampleTests",
            dependencies: ["AuthRPCSystem", "TestSupport"],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "GoogleAuthTests",
            dependencies: [
                "GoogleAuth", "OAuth2", "AuthRPC", "AuthCrypto", "AuthRPCSystem", "AuthSampleService", "TestSupport",
                "OAuth2TestSupport",
            ],
            swiftSettings: defaultSwiftSettings
        ),
        .testTarget(
            name: "AuthRPCCodeGenTests",
            dependencies: [
                "AuthRPCCodeGen", "TestSupport",
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: defaultSwiftSettings
        ),
    ]
)

// The fuzz entry points (Fuzz/Targets: one per parser fed by the network or disk) build into one
// of two targets, never both, since a file belongs to one target only:
// - normally, the FuzzReplay test target: `swift test` replays every committed seed and past
//   finding (Fuzz/Corpus, Fuzz/Regressions) through them, without a fuzzer build;
// - under `make fuzz` (AUTHRPC_FUZZ=1, its own scratch path .build-fuzz), the libFuzzer driver.
// Both reach internal parsers with @testable imports (debug builds are compiled for testing).
// COpenSSL is the server's side of the h2-tls-client target: a real TLS peer in the same process.
let fuzzDependencies: [Target.Dependency] = [
    "AuthRPCTransport", "AuthRPC", "AuthRPCSyntax", "AuthCrypto", "AuthRPCSystem", "AuthSampleService", "OAuth2",
    "GoogleAuth", "COpenSSL",
    .product(name: "SwiftProtobuf", package: "swift-protobuf"),
]
let fuzzData = ["Corpus", "Regressions", "Dictionaries", "README.md", "make_seeds.py"]
if Context.environment["AUTHRPC_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "AuthRPCFuzzer",
            dependencies: fuzzDependencies,
            path: "Fuzz",
            exclude: fuzzData + ["Replay"],
            swiftSettings: defaultSwiftSettings
        )
    )
} else {
    package.targets.append(
        .testTarget(
            name: "FuzzReplay",
            dependencies: fuzzDependencies,
            path: "Fuzz",
            exclude: fuzzData + ["Driver"],
            swiftSettings: defaultSwiftSettings
        )
    )
}
