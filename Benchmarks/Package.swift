// swift-tools-version:6.2
// The performance comparison: swift-authrpc against grpc-swift-2 and h2load, on one grpc-swift-2
// server. Its own package, so grpc-swift-2 never enters the library's dependency graph.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "swift-authrpc-benchmarks",
    platforms: [.macOS(.v15)],
    products: [
        // Preloaded into BenchClient (LD_PRELOAD) for the allocation counts; never linked.
        .library(name: "MallocCounter", type: .dynamic, targets: ["MallocCounter"])
    ],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    ],
    targets: [
        // Counts malloc/free (and bytes) across the process; BenchClient reads it through dlsym.
        .target(name: "MallocCounter"),
        // grpc.testing.TestService/UnaryCall on grpc-swift-2 (h2c and TLS): the common server.
        .executableTarget(
            name: "BenchServer",
            dependencies: [
                .product(name: "AuthSampleService", package: rootIdentity),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // One client binary, three implementations: swift-authrpc (static token or AuthSession)
        // and grpc-swift-2, measured the same way. AuthRPCXDS registers the `xds` scheme for
        // `--target xds:///NAME` (what a call on an xDS channel costs over round robin).
        .executableTarget(
            name: "BenchClient",
            dependencies: [
                .product(name: "AuthRPC", package: rootIdentity),
                .product(name: "AuthRPCXDS", package: rootIdentity),
                .product(name: "AuthSampleService", package: rootIdentity),
                .product(name: "OAuth2", package: rootIdentity),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
    ]
)
