#!/usr/bin/env bash
# `make demo`: auth_sample against the local sandbox, offline, in one command.
#
# Starts the sandbox (grpcio test service over TLS with a CA it generates, Authlib issuer with
# 10-second access tokens), signs in with the device flow as a user would (the sandbox approves
# on the user's behalf after a few seconds), calls the test service with the stored session,
# waits past the access token's expiry, calls again (the refresh happens inside the call),
# shows the session's status, then calls as the sandbox's service account (status, then a call
# with a token from the JWT bearer grant), then stops the sandbox. Nothing is left running, also when
# interrupted: the sandbox exits when this script's pipe to it closes, however the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
AUTH_SAMPLE=${AUTH_SAMPLE:-$(swift build --product auth_sample --show-bin-path)/auth_sample}
TOKEN_LIFETIME=10

work=$(mktemp -d "${TMPDIR:-/tmp}/authrpc-demo.XXXXXX")
sandbox_pid=""
cleanup() {
    exec 3>&- 2>/dev/null || true            # EOF on the sandbox's stdin: it stops by itself
    if [ -n "$sandbox_pid" ] && kill -0 "$sandbox_pid" 2>/dev/null; then
        kill "$sandbox_pid" 2>/dev/null || true
        wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted"; exit 130' INT TERM

if [ -t 1 ]; then
    step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
    step() { printf '\n== %s\n' "$*"; }
fi

step "Starting the local sandbox (grpcio TestService over TLS, Authlib OAuth issuer)"
mkfifo "$work/sandbox.stdin"
"$PYTHON" Examples/Sandbox/sandbox.py --state-dir "$work/sandbox" --exit-with-stdin \
    --token-lifetime "$TOKEN_LIFETIME" --auto-approve-device-after 3 \
    < "$work/sandbox.stdin" > "$work/sandbox.out" 2> "$work/sandbox.log" &
sandbox_pid=$!
exec 3> "$work/sandbox.stdin"
for _ in $(seq 1 600); do
    grep -q "SANDBOX READY" "$work/sandbox.out" 2>/dev/null && break
    if ! kill -0 "$sandbox_pid" 2>/dev/null; then
        echo "demo: the sandbox did not start:" >&2
        cat "$work/sandbox.log" >&2
        exit 1
    fi
    sleep 0.1
done
grep -q "SANDBOX READY" "$work/sandbox.out" || { echo "demo: the sandbox did not start within 60 s" >&2; exit 1; }

field() { "$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$work/sandbox/sandbox.json" "$1"; }
issuer=$(field issuer)
target="localhost:$(field grpc_tls_port)"
ca_cert=$(field ca_cert)
echo "issuer:       $issuer (access tokens live ${TOKEN_LIFETIME} s)"
echo "test service: $target (TLS, CA $ca_cert)"

# Sessions go to a throwaway config directory, never to the user's own.
export XDG_CONFIG_HOME="$work/config"
unset AUTH_SAMPLE_ACCESS_TOKEN

step "auth_sample login --device   (the sandbox approves on the user's behalf after 3 s)"
"$AUTH_SAMPLE" login --issuer "$issuer" --client-id sandbox-cli --device

step "auth_sample call   (with the stored session's token)"
"$AUTH_SAMPLE" call --target "$target" --ca-cert "$ca_cert"

wait_for=$((TOKEN_LIFETIME + 1))
step "Waiting ${wait_for} s, past the access token's expiry"
if [ -t 1 ]; then
    for ((left = wait_for; left > 0; left--)); do printf '\r  %2d s left' "$left"; sleep 1; done
    printf '\r  the access token has expired\n'
else
    sleep "$wait_for"
    echo "  the access token has expired"
fi

step "auth_sample call   (the session refreshes the token inside the call)"
"$AUTH_SAMPLE" call --target "$target" --ca-cert "$ca_cert"

step "auth_sample status   (never shows tokens)"
"$AUTH_SAMPLE" status

# The sandbox wrote a service-account key in Google's format (a new RSA key each run); its
# token_uri is the sandbox issuer, which checks the RS256 assertion with the key's public half.
step "auth_sample status --service-account-key   (type, principal, source; never the key)"
"$AUTH_SAMPLE" status --service-account-key "$(field service_account_key)"

step "auth_sample call --service-account-key   (a service account's token from the JWT bearer grant)"
"$AUTH_SAMPLE" call --target "$target" --ca-cert "$ca_cert" --service-account-key "$(field service_account_key)"

step "Stopping the sandbox"
exec 3>&-
wait "$sandbox_pid" 2>/dev/null || true
sandbox_pid=""
echo "demo: done"
