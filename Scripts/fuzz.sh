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
AUTHRPC_FUZZ=1 "${build[@]}" 2>&1 | grep -v "Cannot export local symbol" || true
fuzzer="$(AUTHRPC_FUZZ=1 swift build -c release --scratch-path "$scratch" --show-bin-path)/AuthRPCFuzzer"
[[ -x "$fuzzer" ]] || { echo "the fuzz driver did not build" >&2; exit 2; }

declare -A max_len
while read -r name length; do max_len[$name]=$length; done < <(AUTHRPC_FUZZ_LIST=1 "$fuzzer" 2>/dev/null)
targets=${FUZZ_TARGETS:-$(AUTHRPC_FUZZ_LIST=1 "$fuzzer" 2>/dev/null | cut -d' ' -f1)}

stamp=$(date +%Y%m%d-%H%M%S)

run() {
    local name=$1 work="$scratch/fuzz/$1"
    local artifacts="$work/artifacts-$stamp" timeout=10
    [[ $name == h2-client ]] && timeout=30
    mkdir -p "$work/corpus" "$artifacts" "$work/tmp"
    local inputs=("$work/corpus" "Fuzz/Corpus/$name")
    [[ -d "Fuzz/Regressions/$name" ]] && inputs+=("Fuzz/Regressions/$name")
    local options=(-max_total_time="$seconds" -max_len="${max_len[$name]}" -timeout="$timeout"
                   -rss_limit_mb="$rss" -malloc_limit_mb="$rss" -detect_leaks="$leaks"
                   -print_final_stats=1 -artifact_prefix="$artifacts/")
    [[ -f "Fuzz/Dictionaries/$name.dict" ]] && options+=(-dict="Fuzz/Dictionaries/$name.dict")
    echo "$name: AUTHRPC_FUZZ_TARGET=$name $fuzzer ${options[*]} ${inputs[*]}" > "$work/log"
    # Swift's own backtracer would run before libFuzzer's handler; libFuzzer's saves the input.
    # Scratch files (the session-file and adc-file targets') stay in the work folder.
    AUTHRPC_FUZZ_TARGET=$name SWIFT_BACKTRACE=enable=no TMPDIR="$PWD/$work/tmp" \
        "$fuzzer" "${options[@]}" "${inputs[@]}" >> "$work/log" 2>&1 || true
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
printf "\n%-22s %12s %8s %7s %7s %5s %7s  %s\n" target executions exec/s cov ft new rss_mb "findings (crash/leak/timeout/oom)"
found=0
for name in $targets; do
    work="$scratch/fuzz/$name"; log="$work/log"; artifacts="$work/artifacts-$stamp"
    coverage=$(grep -o "cov: [0-9]* ft: [0-9]*" "$log" | tail -1)
    count() { find "$artifacts" -name "$1-*" | wc -l; }
    crashes=$(count crash) leaks=$(count leak) timeouts=$(count timeout) ooms=$(count oom)
    total=$((crashes + leaks + timeouts + ooms))
    found=$((found + total))
    detail="$crashes/$leaks/$timeouts/$ooms"
    (( total > 0 )) && detail="$detail  in $artifacts"
    printf "%-22s %12s %8s %7s %7s %5s %7s  %s\n" "$name" "$(stat number_of_executed_units "$log")" \
        "$(stat average_exec_per_sec "$log")" "$(echo "$coverage" | awk '{print $2}')" "$(echo "$coverage" | awk '{print $4}')" \
        "$(stat new_units_added "$log")" "$(stat peak_rss_mb "$log")" "$detail"
done
echo "logs: $scratch/fuzz/<target>/log"
(( found == 0 ))
