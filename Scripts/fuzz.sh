#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer driver (coverage + AddressSanitizer, in its own scratch path
# .build-fuzz) and runs each fuzz target for a bounded time from the committed seeds, then prints
# what each run did. Fuzz/README.md explains the targets and the choices below.
#
#   FUZZ_SECONDS=60       how long each target runs
#   FUZZ_TARGETS="a b"    only these targets (default: every one the driver lists)
#   FUZZ_JOBS=1           how many targets run at once
#   FUZZ_RSS_MB=2048      memory bound per process (-rss_limit_mb, and -malloc_limit_mb)
#   FUZZ_LEAKS=1          LeakSanitizer after inputs that allocated more than they freed (0: off)
#
# Exits 1 when a run found a crash, a broken rule, a timeout or an out-of-memory; the inputs are
# in .build-fuzz/fuzz/<target>/artifacts-<time>/, to be committed under Fuzz/Regressions/<target>/
# with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
rss=${FUZZ_RSS_MB:-2048}
leaks=${FUZZ_LEAKS:-1}
scratch=.build-fuzz

# Optimized as it ships, but compiled for testing (the targets reach internal parsers with
# @testable imports). --sanitize=fuzzer makes SwiftPM link libFuzzer's main instead of the
# executable's; the frontend keeps only the last -sanitize flag it is given, so both sanitizers go
# in one -Xswiftc flag after it.
build=(swift build -c release --scratch-path "$scratch" --product AuthRPCFuzzer
       --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing)
echo "building the fuzz driver: AUTHRPC_FUZZ=1 ${build[*]}"
# The linker's "Cannot export local symbol" notes are noise; a failed build must not fall back on
# an older driver.
if ! AUTHRPC_FUZZ=1 "${build[@]}" 2>&1 | { grep -v "Cannot export local symbol" || true; }; then
    echo "the fuzz driver did not build" >&2
    exit 2
fi
fuzzer="$(AUTHRPC_FUZZ=1 swift build -c release --scratch-path "$scratch" --show-bin-path)/AuthRPCFuzzer"

declare -A max_len
while read -r name length; do max_len[$name]=$length; done < <(AUTHRPC_FUZZ_LIST=1 "$fuzzer" 2>/dev/null)
targets=${FUZZ_TARGETS:-$(AUTHRPC_FUZZ_LIST=1 "$fuzzer" 2>/dev/null | cut -d' ' -f1)}

stamp=$(date +%Y%m%d-%H%M%S)

run() {
    local name=$1 work="$scratch/fuzz/$1"
    local artifacts="$work/artifacts-$stamp" input_timeout=10
    [[ $name == h2-client || $name == h2-tls-client ]] && input_timeout=30
    mkdir -p "$work/corpus" "$artifacts" "$work/tmp"
    local inputs=("$work/corpus" "Fuzz/Corpus/$name")
    [[ -d "Fuzz/Regressions/$name" ]] && inputs+=("Fuzz/Regressions/$name")
    local options=(-max_total_time="$seconds" -max_len="${max_len[$name]}" -timeout="$input_timeout"
                   -rss_limit_mb="$rss" -malloc_limit_mb="$rss" -detect_leaks="$leaks"
                   -print_final_stats=1 -artifact_prefix="$artifacts/")
    [[ -f "Fuzz/Dictionaries/$name.dict" ]] && options+=(-dict="Fuzz/Dictionaries/$name.dict")
    echo "$name: AUTHRPC_FUZZ_TARGET=$name $fuzzer ${options[*]} ${inputs[*]}" > "$work/log"
    # Swift's own backtracer would run before libFuzzer's handler; libFuzzer's saves the input.
    # Scratch files (the session-file and adc-file targets') stay in the work folder. libFuzzer
    # stops itself after -max_total_time (plus at most one input's -timeout); the outer timeout
    # only guards against the fuzzer process itself hanging, which the summary reports.
    AUTHRPC_FUZZ_TARGET=$name SWIFT_BACKTRACE=enable=no TMPDIR="$PWD/$work/tmp" \
        timeout --kill-after=10 $((seconds + 4 * input_timeout + 60)) \
        "$fuzzer" "${options[@]}" "${inputs[@]}" >> "$work/log" 2>&1 || echo "exit status $?" >> "$work/log"
    echo "finished $name"
}

running=0
for name in $targets; do
    [[ -n "${max_len[$name]:-}" ]] || { echo "unknown fuzz target $name" >&2; exit 2; }
    echo "fuzzing $name for ${seconds}s"
    run "$name" &
    running=$((running + 1))
    if (( running >= jobs )); then wait -n; running=$((running - 1)); fi
done
wait

stat() { grep -o "^stat::$1: *[0-9]*" "$2" | tail -1 | grep -o "[0-9]*$" || echo "-"; }
# The last status line: "#N ... cov: C ft: F corp: U/Sb ...".
status() { grep -o "$1: [0-9]*[a-zA-Z]*/*[0-9]*[a-zA-Z]*" "$2" | tail -1 | cut -d' ' -f2; }
printf "\n%-22s %11s %7s %6s %6s %12s %5s %6s  %s\n" target executions exec/s cov ft "corpus/bytes" new rss_mb \
    "findings crash/leak/timeout/oom"
found=0
for name in $targets; do
    work="$scratch/fuzz/$name"; log="$work/log"; artifacts="$work/artifacts-$stamp"
    count() { find "$artifacts" -name "$1-*" | wc -l; }
    crashes=$(count crash) leaks=$(count leak) timeouts=$(count timeout) ooms=$(count oom)
    total=$((crashes + leaks + timeouts + ooms))
    detail="$crashes/$leaks/$timeouts/$ooms"
    (( total > 0 )) && detail="$detail  in $artifacts"
    # A run that ended without libFuzzer's final statistics did not finish its campaign (it could
    # not start, or was killed): that is a finding too, even with no input saved.
    if ! grep -q "^stat::number_of_executed_units" "$log"; then
        total=$((total + 1))
        detail="$detail  the fuzzer did not finish: see $log"
    fi
    found=$((found + total))
    printf "%-22s %11s %7s %6s %6s %12s %5s %6s  %s\n" "$name" "$(stat number_of_executed_units "$log")" \
        "$(stat average_exec_per_sec "$log")" "$(status cov "$log")" "$(status ft "$log")" "$(status corp "$log")" \
        "$(stat new_units_added "$log")" "$(stat peak_rss_mb "$log")" "$detail"
done
echo "logs: $scratch/fuzz/<target>/log; corpora grown by this and earlier runs: $scratch/fuzz/<target>/corpus"
(( found == 0 ))
