#!/usr/bin/env python3
"""Google's reference library (google-auth) as a second opinion, for the tests.

    google_auth_check.py adc
        Resolves Application Default Credentials with google.auth.default() in this process's
        environment (GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_CONFIG, HOME, GCE_METADATA_HOST)
        and prints {"type", "principal", "quota_project_id"} as JSON, or {"type": null,
        "error": ...} when it finds nothing. For Compute Engine credentials it asks the metadata
        server for the account's email (refreshing a token), so GCE_METADATA_HOST must be set.

    google_auth_check.py universe [--impersonate EMAIL]
        Resolves Application Default Credentials with google.auth.default() and prints {"type",
        "universe_domain"}: the credential's universe as google-auth reads it (a file's
        universe_domain; for Compute Engine, the metadata server's universe/universe-domain, 404
        meaning googleapis.com). With --impersonate, google-auth's impersonated credentials on
        top of them also report "impersonation_url", the IAM Credentials URL google-auth would
        POST to in that universe: the request is recorded and refused, never sent (requests to
        the loopback metadata server still go through).

    google_auth_check.py verify-jwt --cert PEM_FILE [--audience AUD] [--token-file FILE]  < token
        Verifies a JWT read from FILE, or from stdin with google.auth.jwt.decode against the certificate (or
        public key) in PEM_FILE, checking `aud` when given; prints {"header", "claims"} as JSON,
        or exits 1 with the reason.

    google_auth_check.py external-account FILE [--scope SCOPE]...
        Loads the external_account FILE with google-auth's class for its source (identity_pool,
        pluggable or aws) in this process's environment, refreshes it
        (reading the subject token, exchanging it at the file's token_url) and prints
        {"type", "token"}: the access token the emulators gave google-auth, so a test can call
        with it and compare the requests google-auth sent with its own.

    google_auth_check.py impersonate --iam-endpoint URL (--source-key KEY | --source-metadata)
                         --target EMAIL [--delegate EMAIL]... --scope SCOPE [--lifetime SECONDS]
        google-auth's impersonated credentials (google.auth.impersonated_credentials) get one
        access token; prints {"expiry"}. google-auth always addresses iamcredentials.googleapis.com,
        so its endpoint templates are pointed at the emulator's base URL, and its assertions'
        audience at the key's token_uri: the requests are otherwise google-auth's own.

    google_auth_check.py id-token --audience AUD (--key KEY | --metadata |
                         --impersonate EMAIL --iam-endpoint URL --source-key KEY [--delegate EMAIL]...)
        One ID token from google-auth (a service account's key with target_audience, the metadata
        server's identity endpoint, or impersonation's generateIdToken); prints {"claims", "expiry"}
        (claims unverified: the token itself is not printed).

    google_auth_check.py self-signed-jwt --key KEY_FILE --audience AUD
        Loads a service-account key file with google-auth (service_account.Credentials) and makes
        the self-signed JWT it would send for AUD (google.auth.jwt.Credentials); prints {"header",
        "claims"} (the claims' values, never the signature) as JSON, or exits 1 with google-auth's
        reason for refusing the key. Nothing is sent anywhere.

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
import urllib.parse

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
    from google.auth import compute_engine, impersonated_credentials
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
    if isinstance(credentials, impersonated_credentials.Credentials):
        source = credentials._source_credentials
        source_type = ("authorized_user" if isinstance(source, user_credentials.Credentials)
                       else "service_account" if isinstance(source, service_account.Credentials)
                       else type(source).__name__)
        return {"type": "impersonated_service_account", "principal": credentials.service_account_email,
                "quota_project_id": credentials.quota_project_id, "source_type": source_type,
                "delegates": credentials._delegates or []}
    if isinstance(credentials, compute_engine.Credentials):
        credentials.refresh(google.auth.transport.requests.Request())
        return {"type": "compute_engine", "principal": credentials.service_account_email,
                "quota_project_id": credentials.quota_project_id}
    return {"type": type(credentials).__module__ + "." + type(credentials).__name__}


class _RecordingRequest:
    """Sends only to loopback (the metadata emulator); records any other URL and refuses it."""

    def __init__(self):
        import google.auth.transport.requests

        self.inner = google.auth.transport.requests.Request()
        self.refused = []

    def __call__(self, url, method="GET", body=None, headers=None, timeout=None, **kwargs):
        import google.auth.exceptions

        if _is_loopback_authority(urllib.parse.urlsplit(url).netloc):
            return self.inner(url, method=method, body=body, headers=headers, timeout=timeout, **kwargs)
        self.refused.append(url)
        raise google.auth.exceptions.TransportError(f"google_auth_check does not send to {url}")


def universe(impersonate):
    import google.auth
    import google.auth.exceptions
    from google.auth import impersonated_credentials

    credentials, _ = google.auth.default()
    result = {"type": type(credentials).__module__ + "." + type(credentials).__name__,
              "universe_domain": credentials.universe_domain}
    if impersonate:
        target = impersonated_credentials.Credentials(
            source_credentials=credentials, target_principal=impersonate,
            target_scopes=["https://www.googleapis.com/auth/cloud-platform"])
        request = _RecordingRequest()
        try:
            target.refresh(request)
        except google.auth.exceptions.GoogleAuthError:
            pass
        asked = [url for url in request.refused if url.endswith(":generateAccessToken")]
        result["impersonation_url"] = asked[0] if asked else None
    return result


def external_account(path, scopes):
    import google.auth.transport.requests
    from google.auth import aws, identity_pool, pluggable

    # Not google.auth.load_credentials_from_file: for external accounts it asks Cloud Resource
    # Manager (a Google host) for the project id, and no test may reach outside loopback.
    with open(path) as handle:
        source = json.load(handle).get("credential_source", {})
    if "environment_id" in source:
        kind = aws.Credentials
    elif "executable" in source:
        kind = pluggable.Credentials
    else:
        kind = identity_pool.Credentials
    credentials = kind.from_file(path, scopes=scopes or None)
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


def _point_iam_at(base):
    """google-auth's IAM Credentials URL templates, aimed at the emulator at `base`."""
    from google.auth import iam

    prefix = base.rstrip("/") + "/v1/projects/-/serviceAccounts/{}:"
    iam._IAM_ENDPOINT = prefix + "generateAccessToken"
    iam._IAM_IDTOKEN_ENDPOINT = prefix + "generateIdToken"


def _aim_assertions_at(key_path):
    """google-auth names Google's token endpoint as every service-account assertion's `aud`,
    whatever the key's token_uri; the sandbox issuer takes only its own, as this package sends:
    aim google-auth's constant at the key's token_uri (the assertions are otherwise its own)."""
    from google.oauth2 import service_account

    with open(key_path) as handle:
        service_account._GOOGLE_OAUTH2_TOKEN_ENDPOINT = json.load(handle)["token_uri"]


def _impersonated(arguments, scopes):
    from google.auth import compute_engine, impersonated_credentials
    from google.oauth2 import service_account

    _point_iam_at(arguments.iam_endpoint)
    if getattr(arguments, "source_metadata", False):
        source = compute_engine.Credentials()
    else:
        _aim_assertions_at(arguments.source_key)
        source = service_account.Credentials.from_service_account_file(arguments.source_key)
    return impersonated_credentials.Credentials(
        source_credentials=source, target_principal=arguments.target, target_scopes=scopes,
        delegates=arguments.delegate or None, lifetime=arguments.lifetime)


def impersonate(arguments):
    import google.auth.transport.requests

    credentials = _impersonated(arguments, [arguments.scope])
    credentials.refresh(google.auth.transport.requests.Request())
    return {"expiry": credentials.expiry.isoformat()}


def id_token(arguments):
    import google.auth.transport.requests
    from google.auth import compute_engine, impersonated_credentials, jwt
    from google.oauth2 import service_account

    request = google.auth.transport.requests.Request()
    if arguments.key:
        _aim_assertions_at(arguments.key)
        credentials = service_account.IDTokenCredentials.from_service_account_file(
            arguments.key, target_audience=arguments.audience)
    elif arguments.metadata:
        credentials = compute_engine.IDTokenCredentials(
            request, target_audience=arguments.audience, use_metadata_identity_endpoint=True)
    else:
        arguments.target, arguments.lifetime = arguments.impersonate, None
        credentials = impersonated_credentials.IDTokenCredentials(
            _impersonated(arguments, ["https://www.googleapis.com/auth/cloud-platform"]),
            target_audience=arguments.audience, include_email=True)
    credentials.refresh(request)
    return {"claims": jwt.decode(credentials.token, verify=False), "expiry": credentials.expiry.isoformat()}


def self_signed_jwt(key_path, audience):
    from google.auth import jwt
    from google.oauth2 import service_account

    try:
        source = service_account.Credentials.from_service_account_file(key_path)
    except (ValueError, KeyError) as error:
        sys.exit(f"google_auth_check: google-auth refuses the key: {error}")
    token = jwt.Credentials.from_signing_credentials(source, audience=audience)._make_jwt()[0]
    if isinstance(token, bytes):
        token = token.decode()
    header_segment, claims_segment = token.split(".")[:2]

    def decoded(segment):
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))

    return {"header": decoded(header_segment), "claims": decoded(claims_segment)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("adc", help="resolve Application Default Credentials with google-auth")
    uni = commands.add_parser("universe", help="the ADC credential's universe as google-auth reads it")
    uni.add_argument("--impersonate", metavar="EMAIL", help="also the IAM Credentials URL for impersonating EMAIL")
    verify = commands.add_parser("verify-jwt", help="verify a JWT (read from stdin) with google-auth")
    verify.add_argument("--cert", required=True, help="PEM certificate or public key of the signer")
    verify.add_argument("--audience", help="the aud the JWT must carry")
    external = commands.add_parser("external-account", help="refresh an external_account file with google-auth")
    external.add_argument("file")
    external.add_argument("--scope", action="append", default=[])
    imp = commands.add_parser("impersonate", help="one impersonated access token from google-auth")
    imp.add_argument("--iam-endpoint", required=True, help="the IAM Credentials emulator's base URL")
    source = imp.add_mutually_exclusive_group(required=True)
    source.add_argument("--source-key", help="a service-account key as the source credential")
    source.add_argument("--source-metadata", action="store_true", help="the metadata server as the source")
    imp.add_argument("--target", required=True)
    imp.add_argument("--delegate", action="append", default=[])
    imp.add_argument("--scope", required=True)
    imp.add_argument("--lifetime", type=int, default=3600)
    ident = commands.add_parser("id-token", help="one ID token from google-auth")
    ident.add_argument("--audience", required=True)
    how = ident.add_mutually_exclusive_group(required=True)
    how.add_argument("--key", help="a service-account key (JWT bearer grant with target_audience)")
    how.add_argument("--metadata", action="store_true", help="the metadata server's identity endpoint")
    how.add_argument("--impersonate", metavar="EMAIL", help="generateIdToken for EMAIL")
    ident.add_argument("--iam-endpoint")
    ident.add_argument("--source-key")
    ident.add_argument("--delegate", action="append", default=[])
    verify.add_argument("--token-file", help="read the JWT from this file instead of stdin")
    signed = commands.add_parser("self-signed-jwt", help="the self-signed JWT google-auth makes with a key file")
    signed.add_argument("--key", required=True, help="the service-account key file (JSON)")
    signed.add_argument("--audience", required=True, help="the JWT's aud")
    arguments = parser.parse_args(argv)
    if arguments.command == "id-token" and arguments.impersonate and not (arguments.iam_endpoint and arguments.source_key):
        parser.error("--impersonate needs --iam-endpoint and --source-key")
    for name in ("iam_endpoint",):
        value = getattr(arguments, name, None)
        if value and not _is_loopback_authority(urllib.parse.urlsplit(value).netloc):
            parser.error(f"--{name.replace('_', '-')} {value!r} is not on a loopback address")

    _confine_metadata_traffic()
    if arguments.command == "adc":
        result = resolve_adc()
    elif arguments.command == "universe":
        result = universe(arguments.impersonate)
    elif arguments.command == "external-account":
        result = external_account(arguments.file, arguments.scope)
    elif arguments.command == "impersonate":
        result = impersonate(arguments)
    elif arguments.command == "id-token":
        result = id_token(arguments)
    elif arguments.command == "self-signed-jwt":
        result = self_signed_jwt(arguments.key, arguments.audience)
    else:
        if arguments.token_file:
            with open(arguments.token_file) as handle:
                token = handle.read().strip()
        else:
            token = sys.stdin.read().strip()
        result = verify_jwt(token, arguments.cert, arguments.audience)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
