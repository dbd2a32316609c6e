#!/usr/bin/env python3
"""Writes the hand-made seed corpora in Fuzz/Corpus/<target>/ (the committed output of this script).

    python3 Fuzz/make_seeds.py            # every target but h2-client (standard library only;
                                          # h2-tls-client from h2-client's committed seeds)
    .venv/bin/python Fuzz/make_seeds.py --h2-client
                                          # h2-client: the fault server's real bytes (needs the venv)

Seeds are small, well-formed examples of what each parser reads (plus a few near misses), so the
fuzzer starts from inputs that reach deep. Files are written deterministically (gzip without a
timestamp), so running the script again changes nothing. The RSA key in the key-file seeds is a
throwaway generated for these seeds; it signs nothing anywhere.
"""
import argparse
import base64
import gzip
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "Corpus")


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as handle:
        handle.write(data)


def frame(message, compressed=False):
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(message)) + message


def gz(data):
    return gzip.compress(data, mtime=0)


def b64(data, padded=True):
    text = base64.b64encode(data).decode()
    return text if padded else text.rstrip("=")


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# grpc.testing.SimpleResponse{payload: {body: "abc"}, username: "user", oauth_scope: "scope"}
SIMPLE_RESPONSE = b"\x0a\x05\x12\x03abc" + b"\x12\x04user" + b"\x1a\x05scope"
STATUS_DETAILS = b"\x08\x03\x12\x07bad arg"  # google.rpc.Status{code: 3, message: "bad arg"}


def grpc_response():
    grpc = "200\ncontent-type: application/grpc\n"
    write("grpc-response", "ok", (grpc + "\ngrpc-status: 0\n\n").encode() + frame(b"hello"))
    write("grpc-response", "ok-protobuf", (grpc + "\ngrpc-status: 0\ngrpc-message: \n\n").encode() + frame(SIMPLE_RESPONSE))
    write("grpc-response", "trailers-only", "200!\ncontent-type: application/grpc\ngrpc-status: 16\n"
          "grpc-message: token%20expired\nwww-authenticate: Bearer error=\"invalid_token\"\n")
    write("grpc-response", "gzip", (grpc + "grpc-encoding: gzip\n\ngrpc-status: 0\n\n").encode()
          + frame(gz(b"hello world " * 20), compressed=True))
    write("grpc-response", "deflate", (grpc + "grpc-encoding: deflate\n\ngrpc-status: 0\n\n").encode()
          + frame(zlib.compress(SIMPLE_RESPONSE * 4), compressed=True))
    write("grpc-response", "gzip-bomb", (grpc + "grpc-encoding: gzip\n\ngrpc-status: 0\n\n").encode()
          + frame(gz(bytes(1 << 20)), compressed=True))
    ok_details = b64(b"\x08\x00", False)
    write("grpc-response", "metadata", (grpc + "x-dup: one\nx-dup: two\nx-bin-bin: AAEC\nx-padded-bin: //4=\n"
          "x-multi-bin: AAE, AgM=\n\ngrpc-status: 0\nx-trailer: t1\n"
          f"grpc-status-details-bin: {ok_details}\n\n").encode() + frame(b"m"))
    write("grpc-response", "status-details", "200!\ncontent-type: application/grpc\ngrpc-status: 3\n"
          f"grpc-message: bad%20arg %zz %E2%98\ngrpc-status-details-bin: {b64(STATUS_DETAILS)}\n")
    write("grpc-response", "http-503", "503\ncontent-type: text/plain\n\n\nfault body")
    write("grpc-response", "two-messages", (grpc + "\ngrpc-status: 0\n\n").encode() + frame(b"a") + frame(b"b"))
    write("grpc-response", "truncated", (grpc + "\ngrpc-status: 0\n\n").encode() + frame(b"hello")[:7])
    write("grpc-response", "bad-status", (grpc + "\ngrpc-status: abc\n\n").encode() + frame(b"x"))


def grpc_metadata():
    write("grpc-metadata", "fields", "x-bin-bin: AAEC\nx-padded-bin: //4=\nx-multi-bin: AAE, AgM=\n"
          "grpc-status: 3\ngrpc-message: %09%0Atest with whitespace%0D%0A%E2%98%BA %F0%9F%98%88\n"
          f"grpc-status-details-bin: {b64(STATUS_DETAILS, False)}\nx-text: plain\n\n\x00\x01\xff")
    write("grpc-metadata", "bad-base64", "x-bin: A\nx-bin: A===\nx-bin: ,,\nx-bin:  AQ== , Ag\ngrpc-status: 016\n"
          "grpc-message: 100%\ngrpc-status-details-bin: !!!\n")


def grpc_compression():
    text = b"The quick brown fox jumps over the lazy dog. " * 8
    write("grpc-compression", "gzip", bytes([0 | 6 << 1]) + gz(text))
    write("grpc-compression", "deflate", bytes([1 | 6 << 1]) + zlib.compress(text))
    write("grpc-compression", "gzip-small-limit", bytes([0 | 2 << 1]) + gz(text))
    write("grpc-compression", "deflate-bomb", bytes([1 | 6 << 1]) + zlib.compress(bytes(8 << 20), 9))
    write("grpc-compression", "gzip-truncated", bytes([0 | 6 << 1]) + gz(text)[:30])
    write("grpc-compression", "gzip-two-members", bytes([0 | 6 << 1]) + gz(b"one") + gz(b"two"))
    write("grpc-compression", "deflate-trailing", bytes([1 | 3 << 1]) + zlib.compress(b"abc") + b"garbage")


def grpc_timeout():
    def seed(name, seconds, attoseconds):
        write("grpc-timeout", name, struct.pack(">qq", seconds, attoseconds))
    seed("one-second", 1, 0)
    seed("zero", 0, 0)
    seed("negative", -1, 0)
    seed("one-nanosecond", 0, 1_000_000_000)
    seed("sub-nanosecond", 0, 1)
    seed("eight-digit-boundary", 99, 999_999_999 * 1_000_000_000)
    seed("hours", 100_000_000, 5)
    seed("max", 2**63 - 1, 999_999_999_999_999_999)


ACCESS = "ya29.a0AfB_byC-fuzzSeedAccessToken_0123456789abcdefghijklmnopqrstuv"
REFRESH = "1//0gFuzzSeedRefreshToken-0123456789abcdefghijklmnopqrstuvwxyz"
ID_PAYLOAD = {"iss": "https://accounts.google.com", "sub": "110169484474386276334", "email": "user@example.com",
              "email_verified": True, "aud": "client-id", "iat": 1800000000, "exp": 1800003600}
ID_TOKEN = f"{b64url(json.dumps({'alg': 'RS256', 'kid': 'k1'}).encode())}.{b64url(json.dumps(ID_PAYLOAD).encode())}.{b64url(b'signature')}"


def token_response():
    write("token-response", "google", json.dumps({"access_token": ACCESS, "expires_in": 3599, "refresh_token": REFRESH,
                                                   "scope": "openid https://www.googleapis.com/auth/userinfo.email",
                                                   "token_type": "Bearer", "id_token": ID_TOKEN}, indent=2))
    write("token-response", "minimal", json.dumps({"access_token": "abc", "token_type": "bearer"}))
    write("token-response", "string-lifetime", json.dumps({"access_token": "a-b.c_d~e+f/g==", "expires_in": "1.5e3", "scope": ""}))
    write("token-response", "huge-lifetime", '{"access_token":"t","expires_in":1e300,"token_type":"BEARER"}')
    write("token-response", "mac", json.dumps({"access_token": "t", "token_type": "mac", "refresh_token": "rotated refresh"}))
    write("token-response", "bad-token", json.dumps({"access_token": "has space\r\n", "expires_in": 0, "refresh_token": REFRESH}))
    write("token-response", "error", json.dumps({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}))
    write("token-response", "types", '{"access_token":true,"expires_in":false,"refresh_token":5,"id_token":null,"scope":["a"]}')


def device_authorization():
    write("device-authorization", "google", json.dumps({"device_code": "AH-1Ng2fuzzSeedDeviceCode_0123456789", "user_code": "GQVQ-JKEC",
                                                         "verification_url": "https://www.google.com/device", "expires_in": 1800, "interval": 5}))
    write("device-authorization", "rfc8628", json.dumps({"device_code": "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS", "user_code": "WDJB-MJHT",
                                                          "verification_uri": "https://example.com/device",
                                                          "verification_uri_complete": "https://example.com/device?user_code=WDJB-MJHT",
                                                          "expires_in": "1800", "interval": "5"}))
    write("device-authorization", "loopback-extreme", '{"device_code":"d","user_code":"U","verification_uri":"http://127.0.0.1:8080/device",'
          '"expires_in":-5,"interval":1e300}')
    write("device-authorization", "insecure", '{"device_code":"d","user_code":"U","verification_uri":"http://evil.example/device"}')


GOOGLE_DISCOVERY = {
    "issuer": "https://accounts.google.com",
    "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
    "device_authorization_endpoint": "https://oauth2.googleapis.com/device/code",
    "token_endpoint": "https://oauth2.googleapis.com/token",
    "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
    "revocation_endpoint": "https://oauth2.googleapis.com/revoke",
    "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
    "response_types_supported": ["code", "token", "id_token"],
    "scopes_supported": ["openid", "email", "profile"],
}


def discovery_document():
    write("discovery-document", "google", "https://accounts.google.com\n" + json.dumps(GOOGLE_DISCOVERY, indent=1))
    write("discovery-document", "loopback", "http://127.0.0.1:8080/realms/test\n" + json.dumps({
        "issuer": "http://127.0.0.1:8080/realms/test/", "token_endpoint": "http://127.0.0.1:8080/realms/test/token",
        "revocation_endpoint": "http://[::1]:8080/revoke", "userinfo_endpoint": None}))
    write("discovery-document", "insecure", "https://issuer.example\n" + json.dumps({
        "issuer": "https://issuer.example", "token_endpoint": "http://issuer.example/token"}))
    write("discovery-document", "other-issuer", "https://issuer.example/\n" + json.dumps({
        "issuer": "https://evil.example", "token_endpoint": "https://evil.example/token"}))


def id_token():
    write("id-token", "payload", json.dumps(ID_PAYLOAD))
    write("id-token", "string-verified", json.dumps({"sub": "s", "email": "e@x", "email_verified": "TRUE"}))
    write("id-token", "number-verified", '{"sub":1,"email":null,"email_verified":0}')
    write("id-token", "whole-token", ID_TOKEN)


def gtm_oauth2():
    write("gtm-oauth2", "gtmoauth2", "access_token=ya29.a0AfB&email=user%40example.com&isVerified=1&refresh_token=1%2F%2F0gRefresh-"
          "token&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.email%20openid&serviceProvider=Google&userID=110169484474386276334")
    write("gtm-oauth2", "later-writer", "refresh_token=r+plus&userEmail=a%40b.c&userEmailIsVerified=false&scope=a%20%20b&&x&refresh_token=r2")
    write("gtm-oauth2", "no-refresh", "access_token=a&scope=")


def session_file():
    state = {
        "accessToken": ACCESS,
        "accessTokenExpiresAt": "2027-01-15T08:00:00Z",
        "accessTokenIssuedAt": "2027-01-15T07:00:00Z",
        "client": {"authentication": "client_secret_basic", "id": "client-id.apps.googleusercontent.com", "secret": "client-secret-value"},
        "configuration": {"authorizationEndpoint": "https://accounts.google.com/o/oauth2/v2/auth", "issuer": "https://accounts.google.com",
                          "tokenEndpoint": "https://oauth2.googleapis.com/token",
                          "deviceAuthorizationEndpoint": "https://oauth2.googleapis.com/device/code",
                          "revocationEndpoint": "https://oauth2.googleapis.com/revoke"},
        "grant": {"date": "2027-01-15T07:00:00Z", "id": "5F0B3C4E-8E3A-4C1B-9D2E-1A2B3C4D5E6F", "type": "device_code"},
        "grantedScopes": ["openid", "email"],
        "idToken": ID_TOKEN,
        "refreshToken": REFRESH,
        "scopes": ["openid", "email"],
        "tokenType": "Bearer",
        "version": 1,
    }
    write("session-file", "full", json.dumps(state, indent=2, sort_keys=True))
    legacy = {key: state[key] for key in ("client", "configuration", "scopes", "refreshToken", "version")}
    legacy["grant"] = {"date": "2026-03-01T10:20:30Z", "redirectURI": "http://127.0.0.1:53682/", "type": "authorization_code"}
    legacy["isAccessTokenStale"] = True
    legacy["authorizationError"] = {"code": "invalid_grant", "date": "2026-03-02T00:00:00Z", "description": "revoked"}
    write("session-file", "legacy-grant", json.dumps(legacy, indent=2, sort_keys=True))
    newer = dict(state, version=2)
    write("session-file", "newer-version", json.dumps(newer, sort_keys=True))


def loopback_request():
    write("loopback-request", "redirect", "GET /oauth2callback?state=Xyz_123&code=4%2F0AbCdEf&scope=email%20openid HTTP/1.1\r\n"
          "Host: 127.0.0.1:53682\r\nUser-Agent: Mozilla/5.0\r\nAccept: text/html\r\n\r\n")
    write("loopback-request", "error", "GET /?error=access_denied&error_description=The+user+said+no&state=s HTTP/1.0\r\n\r\n")
    write("loopback-request", "favicon", "GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\n\r\n")
    write("loopback-request", "incomplete", "GET /cb?code=1 HTTP/1.1\r\nHost: x\r\n")
    write("loopback-request", "invalid", "POST cb HTTP/2\r\n\r\n")
    write("loopback-request", "absolute-form", "GET http://127.0.0.1:53682/cb?state=s&code=c HTTP/1.1\r\nHost: 127.0.0.1:53682\r\n\r\n")
    write("loopback-request", "repeated-state", "GET /cb?state=a&code=c&state=b HTTP/1.1\r\nHost: 127.0.0.1:53682\r\n\r\n")
    write("loopback-request", "folded-field", "GET /cb HTTP/1.1\r\nHost: 127.0.0.1:53682\r\nX-A: b\r\n c\r\n\r\n")
    write("loopback-request", "cookies", "GET /cb?state=%E2%9C%93&code=x+y HTTP/1.1\r\nHost: 127.0.0.1:53682\r\n"
          + "".join("Cookie: c%d=v\xe9\r\n" % i for i in range(8)) + "\r\n")


def oauth_syntax():
    for name, text in [("number", "3600"), ("exponent", "-1.5e+2"), ("bearer", "ya29.a0-_~+/x=="), ("scopes", "openid  email profile"),
                       ("form", "grant_type=refresh_token&refresh_token=1%2F%2F0g&x=a+b%20c&flag&=v"), ("loopback", "http://127.0.0.1:8080/cb"),
                       ("https", "https://accounts.google.com/o/oauth2/v2/auth?x=1"), ("ipv6", "http://[::1]:9/t"),
                       ("error-code", "invalid_grant"), ("unicode", "caf\u00e9 \u2603 %E2%98%83")]:
        write("oauth-syntax", name, text)


def throwaway_keys():
    """The seeds' RSA key as PKCS#8 and PKCS#1 PEM: the one already in the committed seeds, else a new one."""
    directory = os.path.join(CORPUS, "service-account-key")
    try:
        with open(os.path.join(directory, "google-format")) as handle:
            pkcs8 = json.load(handle)["private_key"]
        with open(os.path.join(directory, "pkcs1-loopback")) as handle:
            pkcs1 = json.load(handle)["private_key"]
        return pkcs8, pkcs1
    except (OSError, ValueError, KeyError):
        pass
    pkcs8 = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                           check=True, capture_output=True, text=True).stdout
    pkcs1 = subprocess.run(["openssl", "rsa", "-traditional"], input=pkcs8, check=True, capture_output=True, text=True).stdout
    return pkcs8, pkcs1


def key_files():
    pkcs8, pkcs1 = throwaway_keys()
    key = {"type": "service_account", "project_id": "fuzz-project", "private_key_id": "0123456789abcdef0123456789abcdef01234567",
           "private_key": pkcs8, "client_email": "fuzz@fuzz-project.iam.gserviceaccount.com", "client_id": "100000000000000000001",
           "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
           "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs", "universe_domain": "googleapis.com"}
    user = {"account": "", "client_id": "000000000000-fuzzseedclientid.apps.googleusercontent.com",
            "client_secret": "fuzz-seed-client-secret", "quota_project_id": "fuzz-project",
            "refresh_token": REFRESH, "type": "authorized_user", "universe_domain": "googleapis.com"}
    return key, dict(key, private_key=pkcs1, token_uri="http://127.0.0.1:8080/token"), user


def google():
    key, pkcs1_key, user = key_files()
    write("service-account-key", "google-format", json.dumps(key, indent=2))
    write("service-account-key", "pkcs1-loopback", json.dumps(pkcs1_key))
    write("service-account-key", "truncated-key", json.dumps(dict(key, private_key=key["private_key"][:400])))
    write("authorized-user", "gcloud", json.dumps(user, indent=2))
    write("authorized-user", "bad-field", json.dumps(dict(user, client_secret="has space", refresh_token=7)))
    write("adc-file", "service-account", json.dumps(key, indent=2))
    write("adc-file", "authorized-user", json.dumps(user))
    write("adc-file", "metadata-host", "metadata.google.internal:80\n")
    write("adc-file", "google-vm", "Google Compute Engine\n")
    write("adc-file", "other-type", '{"type":"external_account"}')


# --- h2-client: the server's bytes after its SETTINGS frame, recorded from the fault server -------------

# Scenario name, and the request's x-fault-* knobs sized so the seed stays under the target's -max_len.
H2_MAX_LENGTH = 16384  # the h2-client target's -max_len (FuzzTarget.all)
H2_SCENARIOS = [(name, {}) for name in [
    "EchoRequest", "TrailersOnly", "HTTPStatus", "NonGRPCContentType", "BadGRPCStatus", "SplitPrefix", "CompressedNoEncoding",
    "UnsupportedEncoding", "GzipResponse", "TwoMessages", "ZeroMessages", "RstStream", "GoawayThenComplete", "GoawayNotProcessed",
    "GoawayThenClose", "Informational", "SpecialMessage", "MalformedMessage", "Metadata", "StatusDetails", "HostileText",
    "CloseMidStream", "ConnectionError"]] + [
    # Header-list bounds: one 4000-byte value indexed once, then referenced a byte a time.
    ("HeaderFlood", {"x-fault-count": "200"}),
    ("HeaderFlood-trailers", {"x-fault-count": "200", "x-fault-where": "trailers"}),
    ("HeaderFlood-informational", {"x-fault-count": "200", "x-fault-where": "informational"}),
    ("InformationalFlood", {"x-fault-count": "20"}),
    ("Oversized", {"x-fault-size": "8192"}),
    # Control-frame floods against nghttp2's bounds: 1000 unsent PING ACKs (as many PINGs as fit in -max_len),
    # 32 entries per SETTINGS frame, 8 CONTINUATION frames per header block.
    ("PingFlood", {"x-fault-count": "900"}),
    ("SettingsFlood", {"x-fault-count": "100"}),
    ("ContinuationFlood", {"x-fault-count": "100"}),
]


def capture_h2(repo):
    state = tempfile.mkdtemp(prefix="fuzz-seeds-")
    server = subprocess.Popen([sys.executable, os.path.join(repo, "Tests/Peers/h2_fault_server.py"), "--state-dir", state,
                               "--exit-with-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("FAULTS READY"), line
        with open(os.path.join(state, "faults.json")) as handle:
            faults = json.load(handle)
        for name, knobs in H2_SCENARIOS:
            raw = record(faults["host"], faults["ports"]["h2c"], name.split("-")[0], knobs)
            write("h2-client", name, zero_gzip_times(strip_first_settings(raw))[:H2_MAX_LENGTH])
    finally:
        server.stdin.close()
        server.wait(timeout=10)
        shutil.rmtree(state, ignore_errors=True)


def record(host, port, scenario, knobs):
    """The server's raw bytes for one request on stream 1, until the stream ends or the connection closes."""
    import h2.config
    import h2.connection
    import h2.events
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
    connection.initiate_connection()
    sock = socket.create_connection((host, port))
    sock.settimeout(0.5)
    sock.sendall(connection.data_to_send())
    connection.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "fuzz.test"),
                                (":path", f"/fault.Fault/{scenario}"), ("content-type", "application/grpc"), ("te", "trailers"),
                                *knobs.items()])
    connection.send_data(1, frame(b"hello"), end_stream=True)
    sock.sendall(connection.data_to_send())
    received = b""
    deadline = time.monotonic() + 2
    done = False
    while not done and time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        received += chunk
        try:
            events = connection.receive_data(chunk)
        except Exception:
            break
        for event in events:
            if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset, h2.events.ConnectionTerminated)):
                done = True
        sock.sendall(connection.data_to_send())
    sock.close()
    return received


def strip_first_settings(raw):
    """Drops the server's preface SETTINGS frame (the harness sends its own)."""
    length = int.from_bytes(raw[0:3], "big")
    assert raw[3] == 4, "the server did not start with SETTINGS"
    return raw[9 + length:]


def zero_gzip_times(raw):
    """Sets the modification time in every gzip header (`1f 8b 08`, flags, 4 bytes of time) to 0:
    the fault server compresses with its clock, and the seeds must not change from run to run."""
    data = bytearray(raw)
    start = data.find(b"\x1f\x8b\x08")
    while start >= 0 and start + 8 <= len(data):
        data[start + 4:start + 8] = bytes(4)
        start = data.find(b"\x1f\x8b\x08", start + 3)
    return bytes(data)


def proxy_connect_answer():
    """A piece-size byte, then a proxy's answer to CONNECT."""
    seeds = {
        "tinyproxy-200": b"HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy/1.11.1\r\n\r\n",
        "200-with-server-bytes": b"HTTP/1.1 200 OK\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
        "407": b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\n\r\n",
        "lf-only": b"HTTP/1.1 200 OK\nVia: proxy\n\n",
        "interim": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
        "garbage": b"SSH-2.0-OpenSSH_9.2 \x1b[2J\x00\xff\r\n",
        "folded": b"HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",
        "endless": b"HTTP/1.1 200 OK\r\nX: " + b"a" * 2000,
    }
    for index, (name, answer) in enumerate(seeds.items()):
        write("proxy-connect-answer", name, bytes([index * 13 % 256]) + answer)


def http1_response():
    """A byte (bit 0: HEAD; the rest: piece size - 1), then an HTTP/1.1 response."""
    seeds = {
        "content-length": (0, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
        "chunked-trailers": (6, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: t\r\n\r\n"),
        "to-the-close": (14, b"HTTP/1.0 400 Bad Request\r\n\r\n{\"error\":\"invalid_grant\"}"),
        "head": (1, b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"),
        "interim": (2, b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"),
        "redirect": (8, b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/\r\nContent-Length: 0\r\n\r\n"),
        "two-lengths": (4, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy"),
        "te-and-length": (4, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n"),
        "over-limit": (254, b"HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n" + b"a" * 1001),
        "bad-chunk": (10, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
    }
    for name, (selector, response) in seeds.items():
        write("http1-response", name, bytes([selector]) + response)


def der(tag, body):
    """One DER value: the tag, its definite length, the body."""
    if len(body) < 0x80:
        return bytes([tag, len(body)]) + body
    size = len(body).to_bytes((len(body).bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def seeds_certificate():
    """A self-signed Ed25519 certificate for localhost, built by hand: well formed, trusted by
    nobody, its key and signature fixed bytes that match no private key."""
    sequence = lambda *parts: der(0x30, b"".join(parts))
    ed25519 = sequence(der(0x06, bytes([0x2B, 0x65, 0x70])))
    name = sequence(der(0x31, sequence(der(0x06, bytes([0x55, 0x04, 0x03])), der(0x0C, b"localhost"))))
    validity = sequence(der(0x17, b"260101000000Z"), der(0x17, b"360101000000Z"))
    public_key = sequence(ed25519, der(0x03, b"\x00" + bytes(range(32))))
    alternative_names = sequence(sequence(
        der(0x06, bytes([0x55, 0x1D, 0x11])), der(0x04, sequence(der(0x82, b"localhost")))))
    tbs = sequence(der(0xA0, der(0x02, b"\x02")), der(0x02, b"\x01\x23"), ed25519, name, validity, name, public_key,
                   der(0xA3, alternative_names))
    return sequence(tbs, ed25519, der(0x03, b"\x00" + bytes(range(64, 128))))


def tls_handshake():
    """A piece-size byte, then a server's answer to the client's ClientHello: TLS records."""
    record = lambda kind, body, version=0x0303: struct.pack("!BHH", kind, version, len(body)) + body
    message = lambda kind, body: bytes([kind]) + len(body).to_bytes(3, "big") + body
    extension = lambda kind, body: struct.pack("!HH", kind, len(body)) + body
    alpn_h2 = extension(16, struct.pack("!H", 3) + b"\x02h2")

    def server_hello(random, extensions, session_id=bytes(range(32)), suite=0xC02F):
        body = (struct.pack("!H", 0x0303) + random + bytes([len(session_id)]) + session_id
                + struct.pack("!HB", suite, 0) + struct.pack("!H", len(extensions)) + extensions)
        return message(2, body)

    random = bytes(range(100, 132))
    tls12_hello = server_hello(random, extension(0xFF01, b"\x00") + extension(11, b"\x01\x00") + alpn_h2)
    certificate = seeds_certificate()
    certificates = message(11, (len(certificate) + 3).to_bytes(3, "big") + len(certificate).to_bytes(3, "big")
                           + certificate)
    # ECDHE over x25519 (named curve 29), a 32-byte point, then an Ed25519 signature (0x0807) of 64 bytes.
    key_exchange = message(12, b"\x03\x00\x1d\x20" + bytes(range(32)) + b"\x08\x07\x00\x40" + bytes(64))
    hello_done = message(14, b"")
    flight = [tls12_hello, certificates, key_exchange, hello_done]
    messages = b"".join(flight)
    tls13_hello = server_hello(random, extension(43, b"\x03\x04") + extension(51, struct.pack("!HH", 29, 32)
                                                                                + bytes(range(32))), suite=0x1301)
    seeds = {
        "tls12-flight": b"".join(record(22, part) for part in flight),
        "tls12-one-record": record(22, messages),
        "tls12-fragmented": b"".join(record(22, messages[i:i + 37]) for i in range(0, len(messages), 37)),
        "tls12-downgrade-sentinel": record(22, server_hello(random[:24] + b"DOWNGRD\x01", alpn_h2)),
        "tls13-hello": record(22, tls13_hello) + record(20, b"\x01") + record(23, bytes(range(40))),
        "fatal-alert": record(21, b"\x02\x28"),
        "close-notify": record(21, b"\x01\x00"),
        "empty-records": record(22, b"") + record(23, b"") + record(22, tls12_hello),
        "overflow-record": struct.pack("!BHH", 22, 0x0303, 0x4801) + bytes(300),
        "change-cipher-spec-first": record(20, b"\x01") + record(22, tls12_hello),
        "data-before-hello": record(23, bytes(range(48))),
        "ssl3-version": record(22, tls12_hello, version=0x0300),
        "plain-http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
        "short-header": b"\x16\x03\x03",
    }
    for index, (name, answer) in enumerate(seeds.items()):
        write("tls-handshake", name, bytes([index * 29 % 256]) + answer)


def h2_tls_client():
    """The h2-client seeds (the fault server's real bytes) behind a record-size byte and a flags
    byte: records of 1, 7, 100, 1,024 and 16,384 bytes, key updates asked of the client, after
    every fourth record, and close_notify, each seed one way."""
    source = os.path.join(CORPUS, "h2-client")
    # (record-size byte, flags): 0 -> 1 byte, 6 -> 7, 99 -> 100, 135 -> 1,024, 255 -> 16,384.
    ways = [(255, 0), (0, 4), (6, 1), (99, 2), (135, 5), (255, 7)]
    for index, name in enumerate(sorted(os.listdir(source))):
        with open(os.path.join(source, name), "rb") as handle:
            answer = handle.read()
        size, flags = ways[index % len(ways)]
        write("h2-tls-client", name, bytes([size, flags]) + answer)


def response_body():
    # ResponseBodyTarget: a limit byte, then `op a b c` operations (op: action << 4 | stream).
    def op(action, stream, a, b, c):
        return bytes([action << 4 | stream, a, b, c])

    def start(stream, declared, c):  # a prefix declaring declared (a multiple of 16), 64 x c of it
        return op(0, stream, declared >> 12 & 0xff, declared >> 4 & 0xff, c)

    def chunk(stream, count):
        return op(1, stream, count >> 8 & 0x7f, count & 0xff, 0)

    def in_place(stream, frame_left, c=0x7f):  # frame_left a multiple of 4
        return op(2, stream, frame_left >> 10 & 0xff, frame_left >> 2 & 0xff, c)

    def close(stream):
        return op(3, stream, 0, 0, 0)

    one_mib = (1 << 20) - 16
    frames = start(0, one_mib, 255) + b"".join(in_place(0, 262140) for _ in range(5)) + close(0)
    write("response-body", "one-message-in-frames", b"\x00" + frames)
    promises = b"".join(start(stream, 512 << 10, 16) for stream in range(12))
    turns = b"".join(in_place(stream, 65536, 0x7f if stream % 2 else 0xff) for stream in range(12))
    write("response-body", "interleaved-promises", b"\x00" + promises + turns + close(0) + close(1) + promises)
    write("response-body", "past-the-limit", b"\x10" + start(3, one_mib, 64) + in_place(3, 262140)
          + chunk(3, 30000) + chunk(3, 30000))
    write("response-body", "second-message", b"\x00" + start(5, 4096, 64) + start(5, 200 << 10, 4)
          + in_place(5, 131072) + chunk(5, 20000))
    write("response-body", "chunks-then-in-place", b"\x00" + start(7, 300 << 10, 1) + chunk(7, 20000)
          + chunk(7, 30000) + in_place(7, 200000, 0x40) + in_place(7, 200000, 0xc0) + chunk(7, 5))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--h2-client", action="store_true", help="record the h2-client seeds from the fault server")
    arguments = parser.parse_args()
    repo = os.path.dirname(HERE)
    if arguments.h2_client:
        capture_h2(repo)
        return
    grpc_response()
    grpc_metadata()
    grpc_compression()
    grpc_timeout()
    token_response()
    device_authorization()
    discovery_document()
    id_token()
    gtm_oauth2()
    session_file()
    loopback_request()
    oauth_syntax()
    google()
    proxy_connect_answer()
    http1_response()
    tls_handshake()
    h2_tls_client()
    response_body()


if __name__ == "__main__":
    main()
