#!/usr/bin/env bash
# Builds the DocC documentation of the library products AuthRPC, GoogleAPICore, OAuth2 and GoogleAuth with the
# toolchain's docc (no package plugin: swift-docc-plugin would enter every user's dependency graph).
#
#   Scripts/docs.sh --check   build the four catalogs with warnings as errors (a broken link, a
#                             parameter list that does not match) and fail when a public symbol has
#                             no documentation comment of its own or a landing page leaves a
#                             symbol or article out of its Topics
#   Scripts/docs.sh           the same, then merge the four archives into one:
#                             .build-docs/swift-authrpc.doccarchive
#
# Everything goes to .build-docs/ (never committed): the modules are compiled there with symbol
# graphs emitted (a build of their own, so the flags never invalidate .build, which `make test`
# uses), then each catalog is converted against its module's graph. OAuth2 and GoogleAuth link to
# the modules below them (``/AuthRPC/CallOptions``) through the archives built before them.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

mode="${1:-write}"
case "$mode" in
    write|--check) ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if command -v docc >/dev/null; then
    docc=(docc)
elif command -v xcrun >/dev/null && xcrun --find docc >/dev/null 2>&1; then
    docc=(xcrun docc)
else
    echo "docc not found: it comes with the Swift toolchain (swift.org or Xcode)" >&2
    exit 1
fi

out="$root/.build-docs"
graphs="$out/symbol-graphs"
modules=(AuthRPC GoogleAPICore OAuth2 GoogleAuth AuthRPCXDS)
mkdir -p "$graphs"

# The compiler writes a module's graph when it compiles the module, so an up-to-date build writes
# nothing: keep the directory between runs, and start the build over if a graph has gone missing.
for module in "${modules[@]}"; do
    if [[ ! -f "$graphs/$module.symbols.json" ]]; then
        rm -rf "$out/build" "$graphs" && mkdir -p "$graphs"
        break
    fi
done
# GoogleAuth depends on OAuth2 and AuthRPC, so building it compiles all three; GoogleAPICore and
# AuthRPCXDS (each on AuthRPC) are built beside them.
for target in GoogleAuth GoogleAPICore AuthRPCXDS; do
    swift build --scratch-path "$out/build" --target "$target" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
        -Xswiftc -symbol-graph-skip-synthesized-members -Xswiftc -emit-extension-block-symbols
done

dependencies=()
for module in "${modules[@]}"; do
    # Each catalog sees only its own module's graphs (the module and its extensions of others).
    rm -rf "${graphs:?}-$module"
    mkdir -p "$graphs-$module"
    cp "$graphs/$module.symbols.json" "$graphs-$module/"
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$graphs-$module/" \;

    archive="$out/$module.doccarchive"
    rm -rf "$archive"
    echo "docs: $module"
    "${docc[@]}" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs-$module" \
        --output-path "$archive" \
        --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
        --warnings-as-errors \
        --enable-experimental-external-link-support \
        ${dependencies[@]+"${dependencies[@]}"}
    dependencies+=(--dependency "$archive")
done

# What docc does not check: that every public symbol has a comment of its own, and that every
# symbol and article has a place in its landing page's Topics.
python3 Scripts/check_docs.py --symbol-graphs "$graphs" --archives "$out" "${modules[@]}"

if [[ "$mode" == write ]]; then
    merged="$out/swift-authrpc.doccarchive"
    rm -rf "$merged"
    archives=()
    for module in "${modules[@]}"; do archives+=("$out/$module.doccarchive"); done
    "${docc[@]}" merge "${archives[@]}" --output-path "$merged" \
        --synthesized-landing-page-name swift-authrpc >/dev/null
    echo "docs: $merged (static pages: python3 -m http.server --directory $merged,"
    echo "      then open http://localhost:8000/documentation/authrpc)"
fi
