#!/usr/bin/env bash
# Regenerates the Swift sources for Protos/ with Debian's protoc and protoc-gen-swift built
# from the swift-protobuf package this project depends on. The output is committed, so a
# normal build never runs protoc (swift-protobuf's build plugin would compile protoc itself).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }

swift package resolve >/dev/null
plugin_scratch="$root/.build-protoc-gen-swift"
swift build -c release --product protoc-gen-swift \
    --package-path "$root/.build/checkouts/swift-protobuf" --scratch-path "$plugin_scratch"
plugin="$plugin_scratch/release/protoc-gen-swift"

generate() { # generate OUTPUT_DIR PROTO...
    local out="$1"; shift
    mkdir -p "$out"
    # One protoc run per file: auth_sample.proto and interop.proto both define
    # grpc.testing.TestService, which one descriptor pool cannot hold twice.
    for proto in "$@"; do
        protoc --plugin=protoc-gen-swift="$plugin" \
            --swift_opt=Visibility=Public --swift_opt=FileNaming=DropPath \
            --swift_out="$out" -I Protos -I /usr/include "$proto"
    done
}

generate Sources/AuthSampleService/Generated grpc/testing/auth_sample.proto grpc/testing/interop.proto
generate Sources/AuthRPC/Generated google/rpc/status.proto
echo "generated: $(ls Sources/AuthSampleService/Generated Sources/AuthRPC/Generated | tr '\n' ' ')"
