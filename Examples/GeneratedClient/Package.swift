// swift-tools-version:6.2
// An app of its own that calls the sandbox through a client generated at build time: a .proto and
// authrpc-swift-config.json in the target, swift-authrpc's AuthRPCGenerator plugin on it.
import PackageDescription

let package = Package(
    name: "GeneratedClient",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-authrpc", path: "../.."),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    ],
    targets: [
        .executableTarget(
            name: "GeneratedClient",
            dependencies: [
                .product(name: "AuthRPC", package: "swift-authrpc"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            plugins: [.plugin(name: "AuthRPCGenerator", package: "swift-authrpc")]
        )
    ]
)
