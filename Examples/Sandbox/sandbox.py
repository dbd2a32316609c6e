#!/usr/bin/env python3
"""The local sandbox: a stand-in for grpc-test.sandbox.googleapis.com and its OAuth provider.

Runs grpc.testing.TestService on grpcio over TLS (a CA generated at every start) and over
plaintext, plus the OAuth 2.0 issuer from issuer.py and a Compute Engine metadata-server
emulator (metadata_server.py); writes Google credential files (a service-account key, an
authorized_user file) and what it bound to
<state-dir>/sandbox.json, prints `SANDBOX READY <path>` and serves until SIGTERM/SIGINT (or,
with --exit-with-stdin, until its standard input reaches EOF). See README.md.
"""

import argparse
import hmac
import ipaddress
import json
import logging
import os
import re
import signal
import socket
import ssl
import sys
import threading

import aws_emulator
import certs
import google_services
import iam_credentials
import id_tokens
import interop_service
import metadata_server
import oidc_provider
import service_accounts
import sts_emulator
import test_service

USER_EMAIL = "sandbox-user@example.com"
USER_SUB = "sandbox-user"
READY_FILE = "sandbox.json"
SERVICE_ACCOUNT_KEY_FILE = "service-account.json"
SERVICE_ACCOUNT_CERT_FILE = "service-account-cert.pem"
AUTHORIZED_USER_FILE = "authorized-user.json"
QUOTA_PROJECT = "sandbox-quota-project"
METADATA_ACCOUNT = "sandbox-compute"
IMPERSONATION_TARGET = "sandbox-target"
IMPERSONATION_DELEGATE = "sandbox-delegate"
IMPERSONATION_FORBIDDEN = "sandbox-forbidden"
IMPERSONATED_ADC_FILE = "impersonated-service-account.json"
ID_TOKEN_PUBLIC_KEY_FILE = "id-token-signer.pem"
#: The audience the gRPC test service takes ID tokens for (a Cloud Run service's URL), besides
#: `https://<name>/` for each name it answers to.
ID_TOKEN_AUDIENCE = "https://sandbox-service.a.run.app"

log = logging.getLogger("sandbox")


class StartupError(Exception):
    """Something the sandbox needs is missing or unusable; the message says what."""


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(
        description="Local gRPC test service (grpcio, TLS + plaintext) and OAuth 2.0 issuer for swift-authrpc.")
    parser.add_argument("--state-dir", required=True,
                        help="directory for the certificates and sandbox.json (created, mode 0700)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--tls-port", type=int, default=0, help="gRPC over TLS (0: any free port)")
    parser.add_argument("--plaintext-port", type=int, default=0, help="gRPC over h2c (0: any free port)")
    parser.add_argument("--issuer-port", type=int, default=0, help="OAuth issuer over http (0: any free port)")
    parser.add_argument("--metadata-port", type=int, default=0,
                        help="Compute Engine metadata-server emulator over http (0: any free port)")
    parser.add_argument("--oidc-port", type=int, default=0,
                        help="the OIDC provider of subject tokens (GitHub Actions and Azure URL sources) (0: any free port)")
    parser.add_argument("--sts-port", type=int, default=0,
                        help="the Security Token Service emulator (0: any free port)")
    parser.add_argument("--aws-port", type=int, default=0,
                        help="the AWS emulator: instance metadata (IMDSv2) and STS GetCallerIdentity (0: any free port)")
    parser.add_argument("--iam-port", type=int, default=0,
                        help="IAM Credentials API emulator over http (0: any free port)")
    parser.add_argument("--token-lifetime", type=int, default=3600, help="access-token lifetime in seconds")
    parser.add_argument("--auto-approve-device-after", type=float, default=None, metavar="SECONDS",
                        help="approve device-flow codes on the sandbox user's behalf after this long")
    parser.add_argument("--static-token", action="append", default=[], metavar="TOKEN",
                        help="a bearer token accepted as the sandbox user with the test scope (repeatable)")
    parser.add_argument("--tls-name", action="append", default=[], metavar="NAME",
                        help="another DNS name the server certificate holds (repeatable), for clients that reach "
                             "the sandbox by a production name through a hosts file of their own")
    parser.add_argument("--hostile-text", action="store_true",
                        help="the issuer's user codes, verification URIs, error descriptions and ID-token emails "
                             "carry terminal escape sequences and a forged line (for testing clients)")
    parser.add_argument("--issuer-tls", action="store_true",
                        help="serve the OAuth issuer over https, with the sandbox's CA-signed server certificate")
    parser.add_argument("--public-name", metavar="NAME",
                        help="a DNS name the server certificate also carries and the issuer's URL uses instead of "
                             "--host (for clients that resolve it through a private hosts file, or a proxy that does)")
    parser.add_argument("--interop", action="store_true",
                        help="also serve gRPC's interop TestService (interop_service.py) over TLS and plaintext, "
                             "tokens optional, on ports of its own")
    parser.add_argument("--exit-with-stdin", action="store_true",
                        help="exit when standard input reaches EOF (the parent holds the pipe)")
    arguments = parser.parse_args(argv)

    for name in ("tls_port", "plaintext_port", "issuer_port", "metadata_port", "iam_port", "oidc_port", "sts_port",
                 "aws_port"):
        if not 0 <= getattr(arguments, name) <= 65535:
            parser.error(f"--{name.replace('_', '-')} must be between 0 and 65535")
    if arguments.token_lifetime <= 0:
        parser.error("--token-lifetime must be a positive number of seconds")
    if arguments.auto_approve_device_after is not None and arguments.auto_approve_device_after < 0:
        parser.error("--auto-approve-device-after must not be negative")
    for name in arguments.tls_name:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+",
                            name):
            parser.error(f"--tls-name {name!r} is not a DNS name")
    for token in arguments.static_token:
        if not token or any(not 0x21 <= ord(character) <= 0x7E for character in token):
            parser.error("--static-token must be non-empty printable ASCII without spaces")
    if arguments.public_name is not None and not re.fullmatch(
            r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", arguments.public_name):
        parser.error("--public-name must be a lower-case DNS name")
    if not _is_loopback(arguments.host):
        parser.error(f"--host {arguments.host!r} is not a loopback address; the sandbox only listens on loopback")
    return arguments


def _issuer_tls(paths):
    """The issuer's TLS: the sandbox's server certificate, HTTP/1.1."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths["server_cert"], paths["server_key"])
    context.set_alpn_protocols(["http/1.1"])
    return context


def _is_loopback(host):
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except socket.gaierror:
        return False
    return bool(addresses) and all(ipaddress.ip_address(address.split("%")[0]).is_loopback for address in addresses)


def _load_issuer_class():
    try:
        from issuer import Issuer
    except Exception as error:  # ImportError, or an error inside issuer.py or its dependencies
        raise StartupError(
            f"cannot load the OAuth issuer from {os.path.join(os.path.dirname(os.path.abspath(__file__)), 'issuer.py')}: "
            f"{type(error).__name__}: {error}") from None
    return Issuer


def _prepare_state_dir(path):
    path = os.path.abspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
        # A sandbox.json left by an earlier run must not be mistaken for this run's.
        stale = os.path.join(path, READY_FILE)
        if os.path.lexists(stale):
            os.remove(stale)
    except OSError as error:
        raise StartupError(f"cannot use the state directory {path}: {error}") from None
    return path


def _write_json_atomically(path, document):
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds the static tokens
    with os.fdopen(descriptor, "w") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _token_validator(static_tokens, issuer, jwt_audiences=(), id_token_signer=None, id_token_audiences=()):
    static = [token.encode() for token in static_tokens]

    def validate(token):
        candidate = token.encode("utf-8", "replace")
        if any(hmac.compare_digest(candidate, known) for known in static):
            return {"user": USER_EMAIL, "sub": USER_SUB, "scope": test_service.TEST_SCOPE, "client_id": None}
        identity = issuer.validate_access_token(token)
        if identity is None and id_token_signer is not None and id_token_signer.is_ours(token):
            # A Google-style ID token (private Cloud Run, IAP): google-auth checks its signature,
            # times and audience.
            claims = id_token_signer.verify(token, id_token_audiences)
            if claims is None:
                return None
            return {"user": claims.get("email") or claims["sub"], "sub": claims["sub"], "scope": "",
                    "client_id": claims.get("azp"), "audience": claims["aud"]}
        if identity is None and token.count(".") == 2:
            # A service account's self-signed JWT ("JWT access"), checked against the hosts served.
            identity = issuer.verify_jwt_access(token, jwt_audiences)
        return identity

    return validate


def _jwt_audiences(host, server_names):
    """`https://<host>/` for every name the service answers to: what a self-signed JWT's aud must be."""
    hosts = {*server_names, host}
    return sorted(f"https://[{name}]/" if ":" in name else f"https://{name}/" for name in hosts)


def _write_google_credentials(state_dir, issuer):
    """The service-account key (Google's JSON format, a fresh RSA key), its certificate, and an
    authorized_user file for the sandbox user (gcloud's ADC format); returns their paths and the
    account."""
    account = issuer.add_service_account("sandbox-sa")
    key_path = os.path.join(state_dir, SERVICE_ACCOUNT_KEY_FILE)
    service_accounts.write_private_json(key_path, issuer.service_account_key(account))
    cert_path = os.path.join(state_dir, SERVICE_ACCOUNT_CERT_FILE)
    with open(cert_path, "w") as handle:
        handle.write(account.certificate_pem)
    user_path = os.path.join(state_dir, AUTHORIZED_USER_FILE)
    service_accounts.write_private_json(user_path, issuer.authorized_user(quota_project_id=QUOTA_PROJECT))
    return account, key_path, cert_path, user_path


def _start_iam(arguments, issuer, signer, validate, key_account, compute_account, state_dir, user_path):
    """The IAM Credentials emulator, with three more service accounts: a target that the sandbox
    user, the key's account, the metadata server's account and the delegate may impersonate; a
    delegate that the user and the key's account may impersonate (for a chain); and an account
    nobody may impersonate. Also writes gcloud's impersonated_service_account ADC file (the
    sandbox user as source, the target as the account). Returns the emulator and the sandbox.json
    fields it adds."""
    target = issuer.add_service_account(IMPERSONATION_TARGET)
    delegate = issuer.add_service_account(IMPERSONATION_DELEGATE)
    forbidden = issuer.add_service_account(IMPERSONATION_FORBIDDEN)

    def account_id(email):
        account = issuer.service_accounts.get(email)
        return account.client_id if account is not None else None

    try:
        iam = iam_credentials.IAMCredentials(
            arguments.host, arguments.iam_port, validate,
            lambda email, scope, lifetime: issuer.mint_access_token(email, scope, lifetime),
            signer, account_id)
    except OSError as error:
        raise StartupError(f"the IAM Credentials emulator did not start on {arguments.host}:{arguments.iam_port}: {error}") from None
    for principal in (USER_EMAIL, key_account.email, compute_account.email, delegate.email):
        iam.allow(target.email, principal)
    for principal in (USER_EMAIL, key_account.email):
        iam.allow(delegate.email, principal)
    iam.start()
    with open(user_path) as handle:
        source = json.load(handle)
    adc_path = os.path.join(state_dir, IMPERSONATED_ADC_FILE)
    # What `gcloud auth application-default login --impersonate-service-account TARGET` writes.
    service_accounts.write_private_json(adc_path, {
        "delegates": [],
        "service_account_impersonation_url": iam.endpoint(target.email),
        "source_credentials": source,
        "type": "impersonated_service_account",
    })
    return iam, {
        "iam_endpoint": iam.url,
        "impersonation_target": target.email,
        "impersonation_delegate": delegate.email,
        "impersonation_forbidden": forbidden.email,
        "impersonated_adc_file": adc_path,
    }


def _write_public_key(state_dir, signer):
    path = os.path.join(state_dir, ID_TOKEN_PUBLIC_KEY_FILE)
    with open(path, "w") as handle:
        handle.write(signer.public_pem)
    return path


def _watch_stdin(stop):
    try:
        stream = sys.stdin.buffer if sys.stdin is not None else None
        while stream is not None and stream.read1(65536):
            pass
    except (OSError, ValueError):
        pass
    log.info("standard input closed: stopping")
    stop.set()


def run(arguments):
    stop = threading.Event()

    def on_signal(number, _frame):
        log.info("%s: stopping", signal.Signals(number).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if arguments.exit_with_stdin:
        threading.Thread(target=_watch_stdin, args=(stop,), name="stdin-watch", daemon=True).start()

    Issuer = _load_issuer_class()
    state_dir = _prepare_state_dir(arguments.state_dir)
    public_names = [arguments.public_name] if arguments.public_name else []
    paths = certs.generate(state_dir, extra_names=[*public_names, *arguments.tls_name])
    with open(paths["server_cert"], "rb") as handle:
        certificate_pem = handle.read()
    with open(paths["server_key"], "rb") as handle:
        key_pem = handle.read()

    static_tokens = list(dict.fromkeys(arguments.static_token))
    issuer = Issuer(
        host=arguments.host, port=arguments.issuer_port, token_lifetime=arguments.token_lifetime,
        auto_approve_after=arguments.auto_approve_device_after, state_dir=state_dir,
        user_email=USER_EMAIL, user_sub=USER_SUB, hostile_text=arguments.hostile_text,
        public_name=arguments.public_name, ssl_context=_issuer_tls(paths) if arguments.issuer_tls else None)
    servers = []
    metadata = None
    federation = []
    iam = None
    signer = id_tokens.IDTokenSigner()
    issuer.id_tokens = signer
    try:
        try:
            issuer.start()
        except Exception as error:
            raise StartupError(f"the OAuth issuer did not start on {arguments.host}:{arguments.issuer_port}: {error}") from None
        account, key_path, cert_path, user_path = _write_google_credentials(state_dir, issuer)
        compute_account = issuer.add_service_account(METADATA_ACCOUNT)
        try:
            metadata = metadata_server.MetadataServer(
                arguments.host, arguments.metadata_port, compute_account.email, service_accounts.PROJECT_ID,
                ["https://www.googleapis.com/auth/cloud-platform", test_service.TEST_SCOPE],
                lambda scope: issuer.mint_access_token(compute_account.email, scope),
                identity=lambda audience, include_email, extra: signer.issue(
                    compute_account.email, compute_account.client_id, audience, include_email, extra))
        except OSError as error:
            raise StartupError(f"the metadata server emulator did not start on {arguments.host}:{arguments.metadata_port}: {error}") from None
        metadata.start()
        try:
            oidc = oidc_provider.OIDCProvider(arguments.host, arguments.oidc_port)
            aws = aws_emulator.AWSEmulator(arguments.host, arguments.aws_port)
            sts = sts_emulator.SecurityTokenService(
                arguments.host, arguments.sts_port, oidc, aws,
                lambda principal, scope, lifetime: issuer.mint_access_token(principal, scope, lifetime))
        except OSError as error:
            raise StartupError(f"the federation peers did not start on {arguments.host}: {error}") from None
        federation = [oidc, aws, sts]
        for peer in federation:
            peer.start()
        jwt_audiences = _jwt_audiences(arguments.host, (certs.SERVER_NAME, *certs.SERVER_ALIASES, *arguments.tls_name))
        id_token_audiences = [ID_TOKEN_AUDIENCE] + jwt_audiences
        validate = _token_validator(static_tokens, issuer, jwt_audiences, signer, id_token_audiences)
        iam, impersonation = _start_iam(arguments, issuer, signer, validate, account, compute_account,
                                        state_dir, user_path)
        try:
            generated = os.path.join(state_dir, "generated")
            servers, tls_port, plaintext_port = test_service.start(
                arguments.host, arguments.tls_port, arguments.plaintext_port, certificate_pem, key_pem,
                validate, generated, extra_services=[google_services.registrar(validate, generated)])
            interop = {}
            if arguments.interop:
                interop_servers, interop_tls, interop_plaintext, server_id = interop_service.start(
                    arguments.host, 0, 0, certificate_pem, key_pem, validate, generated, state_dir)
                servers += interop_servers
                interop = {"interop_tls_port": interop_tls, "interop_plaintext_port": interop_plaintext,
                           "interop_server_id": server_id}
        except RuntimeError as error:
            raise StartupError(str(error)) from None

        ready_path = os.path.join(state_dir, READY_FILE)
        _write_json_atomically(ready_path, {
            "pid": os.getpid(),
            "host": arguments.host,
            "grpc_tls_port": tls_port,
            "grpc_plaintext_port": plaintext_port,
            "ca_cert": paths["ca_cert"],
            # The server's certificate and key, for other test servers that need one the CA signed.
            "server_cert": paths["server_cert"],
            "server_key": paths["server_key"],
            "server_name": certs.SERVER_NAME,
            "server_aliases": list(certs.SERVER_ALIASES),
            "issuer": issuer.url,
            "user": USER_EMAIL,
            "scope": test_service.TEST_SCOPE,
            "static_tokens": static_tokens,
            "token_endpoint": f"{issuer.url}/token",
            "service_account_key": key_path,
            "service_account_email": account.email,
            "service_account_cert": cert_path,
            "authorized_user_file": user_path,
            "quota_project_id": QUOTA_PROJECT,
            "metadata_host": metadata.authority,
            "metadata_email": compute_account.email,
            "jwt_audiences": jwt_audiences,
            "oidc_issuer": oidc.issuer,
            "actions_id_token_request_url": oidc.github_token_url,
            "actions_id_token_request_token": oidc.actions_request_token,
            "sts_url": sts.url,
            "sts_token_url": sts.token_url,
            "sts_project_number": sts_emulator.PROJECT_NUMBER,
            "aws_url": aws.url,
            "aws_region": aws.region,
            **impersonation,
            "id_token_audience": ID_TOKEN_AUDIENCE,
            "id_token_audiences": id_token_audiences,
            "id_token_public_key": _write_public_key(state_dir, signer),
            **interop,
        })
        log.info("gRPC TLS on %s:%d, plaintext on %s:%d, issuer at %s, %d static token(s)",
                 arguments.host, tls_port, arguments.host, plaintext_port, issuer.url, len(static_tokens))
        if not stop.is_set():
            print(f"SANDBOX READY {ready_path}", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        stopping = [server.stop(grace=0.5) for server in servers]
        for done in stopping:
            done.wait(3)
        if metadata is not None:
            metadata.stop()
        for peer in federation:
            peer.stop()
        if iam is not None:
            iam.stop()
        try:
            issuer.stop()
        except Exception:
            log.exception("stopping the issuer failed")
    log.info("stopped")


def main(argv=None):
    arguments = parse_arguments(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        run(arguments)
        status = 0
    except StartupError as error:
        print(f"sandbox: error: {error}", file=sys.stderr)
        status = 1
    except Exception:
        log.exception("sandbox: unexpected error")
        status = 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without waiting on worker threads (a handler still sleeping, a keep-alive HTTP
    # connection): everything that matters was stopped above.
    os._exit(status)


if __name__ == "__main__":
    main()
