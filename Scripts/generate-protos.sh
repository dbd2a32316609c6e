#!/usr/bin/env bash
# Regenerates the Swift sources for Protos/ (messages with protoc-gen-swift, clients with
# protoc-gen-authrpc-swift) using Debian's protoc, both plugins built from this package and the
# well-known types from swift-protobuf's checkout.
# The output is committed, so a normal build never runs protoc.
#
#   Scripts/generate-protos.sh          rewrite Sources/*/Generated
#   Scripts/generate-protos.sh --check  regenerate into a temporary directory and fail on any
#                                       difference from what is committed (the golden check)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

mode="${1:-write}"
case "$mode" in
    write|--check) ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }

# Both plugins come from this package (protoc-gen-swift is swift-protobuf's executable product, at
# the version Package.swift resolves), so the output matches the SwiftProtobuf linked in. They are
# built in a scratch directory of their own: single-product builds in .build would rebuild
# SwiftProtobuf without testability, and `swift test` would then rebuild it again.
tools="$root/.build-protoc-plugins"
swift build --scratch-path "$tools" --product protoc-gen-swift >/dev/null
swift build --scratch-path "$tools" --product protoc-gen-authrpc-swift >/dev/null
bin="$(swift build --scratch-path "$tools" --show-bin-path)"
# The well-known types (google/protobuf/*.proto) as the resolved swift-protobuf ships them.
well_known="$tools/checkouts/swift-protobuf/Protos/Sources/SwiftProtobuf"
[[ -f "$well_known/google/protobuf/any.proto" ]] || { echo "no well-known types at $well_known" >&2; exit 1; }

mappings="$root/Protos/module_mappings.asciipb"
generated_dirs=(Sources/AuthRPC/Generated Sources/AuthSampleService/Generated Sources/GoogleAPICore/Generated
    Examples/GooglePubSub/Generated Sources/AuthRPCCodeGen/Generated Sources/AuthRPCXDS/Generated
    Tests/InteropTests/Generated)

# Everything is generated into a temporary directory first: a failed run changes nothing.
out_root="$(mktemp -d)"
trap 'rm -rf "$out_root"' EXIT

# generate OUTPUT_DIR WHAT VISIBILITY PROTO...: one protoc run per file (auth_sample.proto and
# interop.proto both define grpc.testing.TestService, which one descriptor pool cannot hold twice).
# WHAT is "messages", "messages+clients" or "messages-unmapped" (the generator's own copy of the
# annotations it reads, with every type in its module). The service configs in SERVICE_CONFIGS
# (gRPC's JSON, paths under Protos) are embedded in the clients of the services they name.
SERVICE_CONFIGS=()
generate() {
    local out="$out_root/$1" what="$2" visibility="$3"; shift 3
    mkdir -p "$out"
    for proto in "$@"; do
        local arguments=(-I Protos -I "$well_known"
            --plugin=protoc-gen-swift="$bin/protoc-gen-swift" --swift_out="$out"
            --swift_opt=Visibility="$visibility" --swift_opt=FileNaming=DropPath --swift_opt=UseAccessLevelOnImports=true)
        if [[ "$what" != messages-unmapped ]]; then
            arguments+=(--swift_opt=ProtoPathModuleMappings="$mappings")
        fi
        if [[ "$what" == messages+clients ]]; then
            arguments+=(--plugin=protoc-gen-authrpc-swift="$bin/protoc-gen-authrpc-swift" --authrpc-swift_out="$out"
                --authrpc-swift_opt=Visibility="$visibility" --authrpc-swift_opt=FileNaming=DropPath
                --authrpc-swift_opt=ProtoPathModuleMappings="$mappings" --authrpc-swift_opt=UseAccessLevelOnImports=true)
            for config in "${SERVICE_CONFIGS[@]}"; do
                arguments+=(--authrpc-swift_opt=ServiceConfig="$root/Protos/$config")
            done
        fi
        protoc "${arguments[@]}" "$proto"
    done
}

generate Sources/AuthRPC/Generated messages Public google/rpc/status.proto
generate Sources/AuthSampleService/Generated messages+clients Public \
    grpc/testing/auth_sample.proto grpc/testing/interop.proto
generate Sources/GoogleAPICore/Generated messages Public \
    google/rpc/error_details.proto google/iam/v1/policy.proto google/iam/v1/options.proto google/type/expr.proto
SERVICE_CONFIGS=(service_configs/longrunning_grpc_service_config.json service_configs/iam_policy_grpc_service_config.json)
generate Sources/GoogleAPICore/Generated messages+clients Public \
    google/longrunning/operations_proto.proto google/cloud/location/locations.proto google/iam/v1/iam_policy.proto
SERVICE_CONFIGS=(service_configs/pubsub_grpc_service_config.json)
generate Examples/GooglePubSub/Generated messages+clients Public google/pubsub/v1/pubsub.proto google/pubsub/v1/schema.proto
SERVICE_CONFIGS=()
# The annotations protoc-gen-authrpc-swift reads from the descriptors it is given.
generate Sources/AuthRPCCodeGen/Generated messages-unmapped Internal \
    google/api/http.proto google/api/annotations.proto google/api/routing.proto google/api/client.proto \
    google/api/launch_stage.proto google/longrunning/operations_proto.proto google/rpc/status.proto
# The subset of Envoy's xDS v3 messages the xDS client decodes (our own .proto files, checked
# against the real descriptors by Tests/Peers/test_xds_proto_subset.py).
generate Sources/AuthRPCXDS/Generated messages Internal $(cd Protos && find xds_subset -name '*.proto' | LC_ALL=C sort)
# The test services the interop tests call on the sandbox (AIP-4222's routing examples, a
# long-running method).
generate Tests/InteropTests/Generated messages+clients Internal authrpc/testing/google_api_examples.proto

if [[ "$mode" == --check ]]; then
    status=0
    for dir in "${generated_dirs[@]}"; do
        if ! diff -ru "$dir" "$out_root/$dir"; then status=1; fi
    done
    if [[ $status -ne 0 ]]; then
        echo "golden check FAILED: the committed generated sources differ from what Protos/ and the generators produce now (diff above: committed, then regenerated); run 'make protos' and commit the result" >&2
        exit 1
    fi
    echo "golden check: $(find "$out_root/Sources" -name '*.swift' | wc -l) generated files match Protos/"
else
    for dir in "${generated_dirs[@]}"; do
        rm -rf "$dir"
        mv "$out_root/$dir" "$dir"
    done
    echo "generated: $(find "${generated_dirs[@]}" -name '*.swift' | sort | tr '\n' ' ')"
fi
