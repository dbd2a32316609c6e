#!/usr/bin/env bash
# The public API held still: compares every library product with the 0.1 baseline commit
# (swift package diagnose-api-breaking-changes) and fails on a break that CHANGELOG.md does not
# list. A listed break is a line of CHANGELOG.md of the form
#
#   - `API breakage: <the tool's message, exactly>` — why
#
# so every break a release ships is written down, with its reason, where users read.
#
#   Scripts/api-check.sh BASELINE
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

baseline="${1:?usage: $0 BASELINE-COMMIT}"
git cat-file -e "$baseline^{commit}" 2>/dev/null || {
    echo "api-check: the baseline $baseline is not a commit of this clone (a shallow clone?)" >&2
    exit 1
}

products=(AuthRPC AuthSampleService OAuth2 GoogleAuth GoogleAPICore AuthRPCTracing AuthRPCMetrics)

allowlist="$(mktemp)"
trap 'rm -f "$allowlist"' EXIT
# The tool's messages, as the CHANGELOG quotes them between backticks.
sed -n 's/^[[:space:]]*- `\(API breakage: [^`]*\)`.*/\1/p' CHANGELOG.md >"$allowlist"

echo "api-check: ${products[*]} against $baseline ($(wc -l <"$allowlist") break(s) listed in CHANGELOG.md)"
swift package diagnose-api-breaking-changes "$baseline" \
    --products "${products[@]}" \
    --breakage-allowlist-path "$allowlist" \
    --baseline-dir "$root/.build-api-baseline/$baseline"
