// swift-tools-version:6.2
// Authenticated unary gRPC calls over libnghttp2 + OpenSSL, with an OAuth 2.0 AuthSession.
import PackageDescription

let package = Package(
    name: "swift-authrpc",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AuthRPC", targets: ["AuthRPC"]),
        .library(name: "AuthSampleService", targets: ["AuthSampleService"]),
        .library(name: "OAuth2", targets: ["OAuth2"]),
        .library(name: "GoogleAuth", targets: ["GoogleAuth"]),
        .executable(name: "auth_sample", targets: ["AuthSample"]),
        .executable(name: "protoc-gen-authrpc-swift", targets: ["protoc-gen-authrpc-swift"]),
        .plugin(name: "AuthRPCGenerator", targets: ["AuthRPCGenerator"]),
        .library(name: "GoogleCommonProtos", targets: ["GoogleCommonProtos"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // C shims: module maps and the few macros Swift cannot import.
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

        // HTTP/2 client: connection, TLS, nghttp2 session, I/O thread, streams. Knows nothing of gRPC.
        .target(
            name: "HTTP2Client",
            dependencies: ["CNGHTTP2", "COpenSSL", "CZlib", "CPlatform"]
        ),

        // gRPC unary calls: Channel, CallOptions, Metadata, Status/RPCError, framing, codecs, credentials.
        .target(
            name: "AuthRPC",
            dependencies: [
                "HTTP2Client",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Generated messages and typed clients for grpc.testing.TestService.
        .target(
            name: "AuthSampleService",
            dependencies: [
                "AuthRPC",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),

        // Generated messages and clients for Google's common services (google.longrunning.Operations,
        // google.cloud.location.Locations) from the vendored googleapis protos in Protos/google.
        .target(
            name: "GoogleCommonProtos",
            dependencies: [
                "AuthRPC",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),

        // The client generator: typed AuthRPC clients for the services of any .proto file.
        .target(
            name: "AuthRPCCodeGen",
            dependencies: [.product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf")]
        ),
        .executableTarget(name: "protoc-gen-authrpc-swift", dependencies: ["AuthRPCCodeGen"]),

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
            dependencies: ["AuthRPC", "HTTP2Client", .product(name: "Logging", package: "swift-log")]
        ),

        // Google credentials (service accounts, authorized users, Compute Engine, ADC) as token sources.
        .target(
            name: "GoogleAuth",
            dependencies: ["OAuth2", "AuthRPC", "HTTP2Client", .product(name: "Logging", package: "swift-log")]
        ),

        // The auth sample CLI: sign in, then call grpc.testing.TestService/UnaryCall.
        .executableTarget(
            name: "AuthSample",
            dependencies: [
                "AuthRPC", "AuthSampleService", "OAuth2", "GoogleAuth", "HTTP2Client",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/AuthSample"
        ),

        // Starts the real peers the tests talk to (the sandbox and the HTTP/2 fault server).
        .target(
            name: "TestSupport",
            dependencies: ["AuthRPC", "HTTP2Client", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        // The chaos soak's client (Tests/Peers/chaos_soak.py drives it: `make soak`).
        .executableTarget(
            name: "ChaosSoak",
            dependencies: ["AuthRPC", "AuthSampleService", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ChaosSoak"
        ),
        .testTarget(name: "HTTP2ClientTests", dependencies: ["HTTP2Client", "TestSupport"]),
        .testTarget(name: "AuthRPCTests", dependencies: ["HTTP2Client", "AuthRPC", "AuthSampleService", "TestSupport"]),
        .testTarget(name: "InteropTests", dependencies: ["AuthRPC", "AuthSampleService", "GoogleCommonProtos", "OAuth2", "TestSupport"]),
        .testTarget(name: "OAuth2Tests", dependencies: ["HTTP2Client", "OAuth2", "AuthRPC", "AuthSampleService", "TestSupport"]),
        .testTarget(name: "AuthSampleTests", dependencies: ["HTTP2Client", "TestSupport"]),
        .testTarget(name: "GoogleAuthTests", dependencies: ["HTTP2Client", "GoogleAuth", "OAuth2", "AuthRPC", "AuthSampleService", "TestSupport"]),
        .testTarget(
            name: "AuthRPCCodeGenTests",
            dependencies: [
                "AuthRPCCodeGen", "TestSupport",
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ]
        ),
    ]
)

// The fuzz entry points (Fuzz/Targets: one per parser fed by the network or disk) build into one
// of two targets, never both, since a file belongs to one target only:
// - normally, the FuzzReplay test target: `swift test` replays every committed seed and past
//   finding (Fuzz/Corpus, Fuzz/Regressions) through them, without a fuzzer build;
// - under `make fuzz` (AUTHRPC_FUZZ=1, its own scratch path .build-fuzz), the libFuzzer driver.
// Both reach internal parsers with @testable imports (debug builds are compiled for testing).
let fuzzDependencies: [Target.Dependency] = [
    "HTTP2Client", "AuthRPC", "AuthSampleService", "OAuth2", "GoogleAuth",
    .product(name: "SwiftProtobuf", package: "swift-protobuf"),
]
let fuzzData = ["Corpus", "Regressions", "Dictionaries", "README.md", "make_seeds.py"]
if Context.environment["AUTHRPC_FUZZ"] == "1" {
    package.targets.append(.executableTarget(name: "AuthRPCFuzzer", dependencies: fuzzDependencies, path: "Fuzz", exclude: fuzzData + ["Replay"]))
} else {
    package.targets.append(.testTarget(name: "FuzzReplay", dependencies: fuzzDependencies, path: "Fuzz", exclude: fuzzData + ["Driver"]))
}
