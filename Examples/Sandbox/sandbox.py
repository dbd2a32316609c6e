#!/usr/bin/env python3
"""The local sandbox: a stand-in for grpc-test.sandbox.googleapis.com and its OAuth provider.

Starts grpc.testing.TestService on grpcio (TLS with a CA generated at start, and plaintext) and
an OAuth 2.0 / OIDC issuer on Authlib, writes the ports it bound to <state-dir>/sandbox.json,
prints `SANDBOX READY <path>`, and runs until SIGTERM/SIGINT (or stdin EOF with --exit-with-stdin).
"""

import argparse
import json
import logging
import os
import signal
import sys
import threading

import certs
import test_service

USER_EMAIL = "sandbox-user@example.com"
USER_SUB = "sandbox-user"


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", required=True, help="where certificates and sandbox.json go")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--tls-port", type=int, default=0)
    parser.add_argument("--plaintext-port", type=int, default=0)
    parser.add_argument("--issuer-port", type=int, default=0)
    parser.add_argument("--token-lifetime", type=int, default=3600, help="access-token lifetime in seconds")
    parser.add_argument("--auto-approve-device-after", type=float, default=None,
                        help="approve device-flow codes on the user's behalf after this many seconds")
    parser.add_argument("--static-token", action="append", default=[],
                        help="a token the test service accepts as the sandbox user (repeatable)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when stdin reaches EOF")
    return parser.parse_args()


def write_atomically(path, document):
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w") as handle:
        json.dump(document, handle, indent=2)
    os.replace(temporary, path)


def main():
    arguments = parse_arguments()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    state_dir = os.path.abspath(arguments.state_dir)
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    os.chmod(state_dir, 0o700)

    try:
        from issuer import Issuer
    except ImportError as error:
        sys.exit(f"sandbox: cannot load the OAuth issuer (Examples/Sandbox/issuer.py): {error}")

    paths = certs.generate(state_dir)
    issuer = Issuer(
        host=arguments.host, port=arguments.issuer_port, token_lifetime=arguments.token_lifetime,
        auto_approve_after=arguments.auto_approve_device_after, state_dir=state_dir,
        user_email=USER_EMAIL, user_sub=USER_SUB)
    issuer.start()

    static_tokens = set(arguments.static_token)

    def validate(token):
        if token in static_tokens:
            return {"user": USER_EMAIL, "sub": USER_SUB, "scope": test_service.TEST_SCOPE}
        return issuer.validate_access_token(token)

    with open(paths["server_cert"], "rb") as handle:
        certificate_pem = handle.read()
    with open(paths["server_key"], "rb") as handle:
        key_pem = handle.read()
    servers, tls_port, plaintext_port = test_service.start(
        arguments.host, arguments.tls_port, arguments.plaintext_port, certificate_pem, key_pem, validate)

    document = {
        "pid": os.getpid(),
        "host": arguments.host,
        "grpc_tls_port": tls_port,
        "grpc_plaintext_port": plaintext_port,
        "ca_cert": paths["ca_cert"],
        "server_name": "localhost",
        "issuer": issuer.url,
        "user": USER_EMAIL,
        "scope": test_service.TEST_SCOPE,
        "static_tokens": sorted(static_tokens),
    }
    ready_path = os.path.join(state_dir, "sandbox.json")
    write_atomically(ready_path, document)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if arguments.exit_with_stdin:
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    print(f"SANDBOX READY {ready_path}", flush=True)
    while not stop.wait(1.0):
        pass
    for server in servers:
        server.stop(grace=0.5).wait()
    issuer.stop()


if __name__ == "__main__":
    main()
