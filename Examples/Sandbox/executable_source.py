#!/usr/bin/env python3
"""A credential helper for external_account executable sources: prints the versioned JSON
response google-auth and swift-authrpc read, with the subject token from a file (which a test
fills with a token the sandbox's OIDC provider minted), or misbehaves as asked.

    executable_source.py --token-file FILE [--mode MODE] [--environment-file FILE]
                         [--expires-in SECONDS] [--calls-file FILE]

| Mode | What it does |
| --- | --- |
| `ok` (default) | prints `{"version": 1, "success": true, "token_type": ..., "id_token": ..., "expiration_time": now + expires-in}`; with `GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE` set, also writes it there |
| `output-file-only` | writes the response to the output file only and prints nothing |
| `no-expiration` | prints a successful response without `expiration_time` |
| `saml` | prints a saml2 response (`saml_response`) |
| `failure` | prints `{"version": 1, "success": false, "code": "401", "message": "the helper is not signed in"}` |
| `exit` | writes `helper: cannot reach the identity provider` to stderr and exits 3 |
| `hang` | starts a child that sleeps, then sleeps itself (both must be killed at the timeout) |
| `flood` | prints 10 MB |
| `expired` | prints a successful response whose `expiration_time` is an hour ago |
| `version` | prints a response with `version` 2 |
| `token-type` | prints a response with `token_type` `urn:ietf:params:oauth:token-type:access_token` |
| `not-json` | prints `this is not JSON` |

`--environment-file` receives the `GOOGLE_EXTERNAL_ACCOUNT_*` variables it was given (JSON), and
`--calls-file` one line per run, so a test can see what the helper got and how often it ran.
The token type is `GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE` (jwt or id_token as the file says).
"""

import argparse
import json
import os
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--environment-file")
    parser.add_argument("--calls-file")
    parser.add_argument("--expires-in", type=int, default=3600)
    arguments = parser.parse_args()

    if arguments.environment_file:
        seen = {name: value for name, value in os.environ.items() if name.startswith("GOOGLE_EXTERNAL_ACCOUNT_")}
        with open(arguments.environment_file, "w") as handle:
            json.dump(seen, handle)
    if arguments.calls_file:
        with open(arguments.calls_file, "a") as handle:
            handle.write(f"{os.getpid()}\n")

    with open(arguments.token_file) as handle:
        token = handle.read().strip()
    token_type = os.environ.get("GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE", "urn:ietf:params:oauth:token-type:jwt")
    response = {"version": 1, "success": True, "token_type": token_type, "id_token": token,
                "expiration_time": int(time.time()) + arguments.expires_in}
    mode = arguments.mode
    output_file = os.environ.get("GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE")

    if mode == "exit":
        sys.stderr.write("helper: cannot reach the identity provider\n")
        sys.exit(3)
    if mode == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], stdout=subprocess.DEVNULL)
        time.sleep(600)
    if mode == "flood":
        chunk = "x" * 65536
        for _ in range(160):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return
    if mode == "not-json":
        print("this is not JSON")
        return
    if mode == "failure":
        response = {"version": 1, "success": False, "code": "401", "message": "the helper is not signed in"}
    elif mode == "expired":
        response["expiration_time"] = int(time.time()) - 3600
    elif mode == "version":
        response["version"] = 2
    elif mode == "token-type":
        response["token_type"] = "urn:ietf:params:oauth:token-type:access_token"
    elif mode == "no-expiration":
        del response["expiration_time"]
    elif mode == "saml":
        response = {"version": 1, "success": True, "token_type": "urn:ietf:params:oauth:token-type:saml2",
                    "saml_response": token, "expiration_time": response["expiration_time"]}

    text = json.dumps(response)
    if output_file and mode in ("ok", "output-file-only"):
        with open(output_file, "w") as handle:
            handle.write(text)
    if mode != "output-file-only":
        print(text)


if __name__ == "__main__":
    main()
