#!/usr/bin/env bash
# Runs the Swift suites under ThreadSanitizer and under AddressSanitizer at the same time, each from
# the build directory `make test-sanitize` built, each one test at a time (see the Makefile). Each
# run is one test process that mostly waits on one core, so the two side by side take about as long
# as the slower one; in turn they took 18 minutes of CI's 60. Every line says which run printed it;
# the exit status is the first failure's.
#
#   Scripts/test-sanitize.sh [extra `swift test` arguments, e.g. --filter NAME]
set -uo pipefail
cd "$(dirname "$0")/.."

run() {
    local name=$1
    shift
    local started=$SECONDS
    "$@" 2>&1 | sed -u "s/^/[$name] /"
    local status=${PIPESTATUS[0]}
    echo "[$name] exit $status after $((SECONDS - started)) s"
    return "$status"
}

TSAN_OPTIONS="halt_on_error=1 atexit_sleep_ms=0 suppressions=$PWD/Tests/tsan-suppressions.txt" \
    run tsan swift test --skip-build --sanitize=thread --scratch-path .build-tsan --no-parallel "$@" &
tsan=$!
ASAN_OPTIONS=detect_leaks=0 \
    run asan swift test --skip-build --sanitize=address --scratch-path .build-asan --no-parallel "$@" &
asan=$!

wait "$tsan"
tsan_status=$?
wait "$asan"
asan_status=$?
if ((tsan_status != 0)); then exit "$tsan_status"; fi
exit "$asan_status"
