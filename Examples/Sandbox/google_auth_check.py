#!/usr/bin/env python3
"""Google's reference library (google-auth) as a second opinion, for the tests.

    google_auth_check.py adc
        Resolves Application Default Credentials with google.auth.default() in this process's
        environment (GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_CONFIG, HOME, GCE_METADATA_HOST)
        and prints {"type", "principal", "quota_project_id"} as JSON, or {"type": null,
        "error": ...} when it finds nothing. For Compute Engine credentials it asks the metadata
        server for the account's email (refreshing a token), so GCE_METADATA_HOST must be set.

    google_auth_check.py verify-jwt --cert PEM_FILE [--audience AUD]  < token
        Verifies a JWT read from stdin with google.auth.jwt.decode against the certificate (or
        public key) in PEM_FILE, checking `aud` when given; prints {"header", "claims"} as JSON,
        or exits 1 with the reason.

    google_auth_check.py external-account FILE [--scope SCOPE]...
        Loads the external_account (or external_account_authorized_user) FILE with
        google.auth.load_credentials_from_file in this process's environment, refreshes it
        (reading the subject token, exchanging it at the file's token_url) and prints
        {"type", "token"}: the access token the emulators gave google-auth, so a test can call
        with it and compare the requests google-auth sent with its own.

Traffic rule: google-auth probes `GCE_METADATA_IP` (169.254.169.254 unless set) to decide whether
it runs on Compute Engine. This tool never lets it: GCE_METADATA_IP and GCE_METADATA_HOST default
to a closed loopback port, and a non-loopback value for either is refused before google-auth is
imported (it reads them at import time).
"""

import argparse
import base64
import ipaddress
import json
import os
import sys

CLOSED_LOOPBACK = "127.0.0.1:9"


def _is_loopback_authority(value):
    host = value.rsplit(":", 1)[0] if value.count(":") == 1 or value.startswith("[") else value
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _confine_metadata_traffic():
    for name in ("GCE_METADATA_IP", "GCE_METADATA_HOST"):
        value = os.environ.get(name) or CLOSED_LOOPBACK
        if not _is_loopback_authority(value):
            sys.exit(f"google_auth_check: {name}={value!r} is not a loopback address; refusing to run")
        os.environ[name] = value
    os.environ.setdefault("GCE_METADATA_DETECT_RETRIES", "1")
    os.environ.setdefault("GCE_METADATA_TIMEOUT", "2")


def resolve_adc():
    import google.auth
    import google.auth.exceptions
    import google.auth.transport.requests
    from google.auth import compute_engine
    from google.oauth2 import credentials as user_credentials
    from google.oauth2 import service_account

    try:
        credentials, _ = google.auth.default()
    except google.auth.exceptions.DefaultCredentialsError as error:
        return {"type": None, "error": str(error)}
    if isinstance(credentials, service_account.Credentials):
        return {"type": "service_account", "principal": credentials.service_account_email,
                "quota_project_id": credentials.quota_project_id}
    if isinstance(credentials, user_credentials.Credentials):
        return {"type": "authorized_user", "principal": credentials.client_id,
                "quota_project_id": credentials.quota_project_id}
    if isinstance(credentials, compute_engine.Credentials):
        credentials.refresh(google.auth.transport.requests.Request())
        return {"type": "compute_engine", "principal": credentials.service_account_email,
                "quota_project_id": credentials.quota_project_id}
    return {"type": type(credentials).__module__ + "." + type(credentials).__name__}


def external_account(path, scopes):
    import google.auth
    import google.auth.transport.requests

    credentials, _ = google.auth.load_credentials_from_file(path, scopes=scopes or None)
    credentials.refresh(google.auth.transport.requests.Request())
    return {"type": type(credentials).__module__ + "." + type(credentials).__name__, "token": credentials.token}


def verify_jwt(token, certificate_path, audience):
    import google.auth.exceptions
    from google.auth import jwt

    with open(certificate_path) as handle:
        certificate = handle.read()
    header_segment = token.split(".", 1)[0]
    header = json.loads(base64.urlsafe_b64decode(header_segment + "=" * (-len(header_segment) % 4)))
    try:
        claims = jwt.decode(token, certs=certificate, audience=audience)
    except (ValueError, google.auth.exceptions.GoogleAuthError) as error:
        sys.exit(f"google_auth_check: the JWT does not verify: {error}")
    return {"header": header, "claims": claims}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("adc", help="resolve Application Default Credentials with google-auth")
    verify = commands.add_parser("verify-jwt", help="verify a JWT (read from stdin) with google-auth")
    verify.add_argument("--cert", required=True, help="PEM certificate or public key of the signer")
    verify.add_argument("--audience", help="the aud the JWT must carry")
    external = commands.add_parser("external-account", help="refresh an external_account file with google-auth")
    external.add_argument("file")
    external.add_argument("--scope", action="append", default=[])
    arguments = parser.parse_args(argv)

    _confine_metadata_traffic()
    if arguments.command == "adc":
        result = resolve_adc()
    elif arguments.command == "external-account":
        result = external_account(arguments.file, arguments.scope)
    else:
        result = verify_jwt(sys.stdin.read().strip(), arguments.cert, arguments.audience)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
