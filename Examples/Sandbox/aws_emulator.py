"""AWS as an external_account AWS source sees it: the EC2 instance metadata service (IMDSv2) and
the STS `GetCallerIdentity` action, whose Signature Version 4 is checked by **botocore** (AWS's
own Python implementation), not by code of ours.

Instance metadata (what the credential file's `region_url`, `url` and `imdsv2_session_token_url`
name; plain http, as on EC2):

    PUT  /latest/api/token                                  X-aws-ec2-metadata-token-ttl-seconds: 1..21600
                                                            -> a session token (text)
    GET  /latest/meta-data/placement/availability-zone      -> REGION + "a"
    GET  /latest/meta-data/iam/security-credentials[/]      -> the role's name
    GET  /latest/meta-data/iam/security-credentials/ROLE    -> {"Code", "AccessKeyId", "SecretAccessKey",
                                                                "Token", "Expiration", ...}

Every metadata GET must carry `X-aws-ec2-metadata-token` with a live session token when the
emulator requires IMDSv2 (the default; `/sandbox/imds` turns it off), else 401. A PUT that carries
`X-Forwarded-For` is refused (403), as EC2 refuses requests relayed through a proxy.

AWS STS (where Google's Security Token Service sends the signed request):

    POST /?Action=GetCallerIdentity&Version=2011-06-15      Host: sts.REGION.amazonaws.com
         the headers of the signed request                   -> GetCallerIdentityResponse (XML)

The signature is recomputed with botocore's SigV4Auth over the method, URL and the headers named
in SignedHeaders, for the access key's secret, and compared; the credential scope must name the
request's date, the region of the host and the service `sts`; `x-amz-date` must be within 15
minutes; `host` and `x-amz-date` (and `x-amz-security-token` for temporary keys) must be signed.
A failure answers 403 with AWS's error XML.

Keys are generated at start (the instance role's temporary credentials) and on request:

    POST /sandbox/keys       {"temporary": bool} -> {"access_key_id", "secret_access_key", "session_token"?}
    POST /sandbox/imds       {"require_session_token": bool}
    GET  /sandbox/stats      counters
    GET  /sandbox/requests   the metadata requests received: [{"method", "path", "headers": {name: value}}]
"""

import datetime
import hmac
import secrets
import threading
import time

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from http_peer import Answer, HTTPPeer

ACCOUNT = "123456789012"
ROLE = "sandbox-workload-role"
SESSION_TOKEN_HEADER = "X-aws-ec2-metadata-token"
TTL_HEADER = "X-aws-ec2-metadata-token-ttl-seconds"
CREDENTIALS_PATH = "/latest/meta-data/iam/security-credentials/"
ZONE_PATH = "/latest/meta-data/placement/availability-zone"
MAX_SKEW_SECONDS = 15 * 60


class AWSEmulator(HTTPPeer):
    def __init__(self, host, port, region="us-west-2"):
        super().__init__("aws", host, port)
        self.region = region
        self._lock = threading.Lock()
        self._keys = {}             # access key id -> (secret, session token or None, arn)
        self._session_tokens = {}   # token -> expiry (monotonic)
        self._require_session_token = True
        self._stats = {"session_tokens": 0, "metadata_requests": 0, "metadata_refused": 0,
                       "caller_identity_requests": 0, "signatures_verified": 0, "signatures_refused": 0}
        self._requests = []
        self.role_credentials = self.new_keys(temporary=True, arn=f"arn:aws:sts::{ACCOUNT}:assumed-role/{ROLE}/i-0sandbox")
        self.route("PUT", "/latest/api/token", self._session_token)
        self.route("GET", ZONE_PATH, self._zone)
        self.route("GET", lambda path: (path + "/").startswith(CREDENTIALS_PATH), self._credentials)
        self.route("POST", "/", self._caller_identity)
        self.route("POST", "/sandbox/keys", self._new_keys_endpoint)
        self.route("POST", "/sandbox/imds", self._imds_knob)
        self.route("GET", "/sandbox/stats", lambda request: Answer.json(200, self._counters()))
        self.route("GET", "/sandbox/requests", lambda request: Answer.json(200, self._recorded()))

    def new_keys(self, temporary=False, arn=None):
        prefix = "ASIA" if temporary else "AKIA"
        access_key_id = prefix + "".join(secrets.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        secret = secrets.token_urlsafe(30)
        token = secrets.token_urlsafe(64) if temporary else None
        arn = arn or f"arn:aws:iam::{ACCOUNT}:user/sandbox-user-{access_key_id[-6:].lower()}"
        with self._lock:
            self._keys[access_key_id] = (secret, token, arn)
        keys = {"access_key_id": access_key_id, "secret_access_key": secret, "arn": arn}
        if token:
            keys["session_token"] = token
        return keys

    def _count(self, name):
        with self._lock:
            self._stats[name] += 1

    def _counters(self):
        with self._lock:
            return dict(self._stats)

    def _recorded(self):
        with self._lock:
            return list(self._requests)

    def _record(self, request):
        with self._lock:
            self._requests.append({"method": request.method, "path": request.path,
                                   "headers": {name.lower(): value for name, value in request.headers.items()
                                               if name.lower().startswith("x-aws-")}})

    # -- instance metadata ----------------------------------------------------------------------

    def _session_token(self, request):
        self._record(request)
        if request.header("X-Forwarded-For"):
            return Answer.text(403, "Forbidden")
        try:
            ttl = int(request.header(TTL_HEADER) or "")
        except ValueError:
            ttl = 0
        if not 1 <= ttl <= 21600:
            return Answer.text(400, "Bad Request")
        token = secrets.token_urlsafe(40)
        with self._lock:
            self._session_tokens[token] = time.monotonic() + ttl
            self._stats["session_tokens"] += 1
        return Answer(200, token, "text/plain", headers={TTL_HEADER: str(ttl)})

    def _authorized(self, request):
        token = request.header(SESSION_TOKEN_HEADER)
        with self._lock:
            expiry = self._session_tokens.get(token) if token else None
            required = self._require_session_token
        if token is not None:
            return expiry is not None and expiry > time.monotonic()
        return not required

    def _metadata(self, request, answer):
        self._record(request)
        self._count("metadata_requests")
        if not self._authorized(request):
            self._count("metadata_refused")
            return Answer.text(401, "Unauthorized")
        return answer()

    def _zone(self, request):
        return self._metadata(request, lambda: Answer.text(200, self.region + "a"))

    def _credentials(self, request):
        role = (request.path + "/")[len(CREDENTIALS_PATH):].rstrip("/")

        def answer():
            if role == "":
                return Answer.text(200, ROLE)
            if role != ROLE:
                return Answer.text(404, "Not Found")
            keys = self.role_credentials
            expiration = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=6)
            return Answer.json(200, {
                "Code": "Success", "LastUpdated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "Type": "AWS-HMAC", "AccessKeyId": keys["access_key_id"], "SecretAccessKey": keys["secret_access_key"],
                "Token": keys["session_token"], "Expiration": expiration.strftime("%Y-%m-%dT%H:%M:%SZ"),
            })

        return self._metadata(request, answer)

    # -- STS GetCallerIdentity -------------------------------------------------------------------

    def verify(self, method, url, headers):
        """Checks a signed GetCallerIdentity request with botocore; returns (arn, None) or (None, why)."""
        lowered = {name.lower(): value for name, value in headers.items()}
        authorization = lowered.get("authorization", "")
        prefix = "AWS4-HMAC-SHA256 "
        if not authorization.startswith(prefix):
            return None, "the Authorization header is not AWS4-HMAC-SHA256"
        fields = {}
        for part in authorization[len(prefix):].split(","):
            name, _, value = part.strip().partition("=")
            fields[name] = value
        credential = fields.get("Credential", "").split("/")
        if len(credential) != 5 or credential[4] != "aws4_request":
            return None, "the Credential is not KEY/DATE/REGION/SERVICE/aws4_request"
        access_key_id, date_stamp, region, service, _ = credential
        signed = fields.get("SignedHeaders", "").split(";")
        amz_date = lowered.get("x-amz-date", "")
        with self._lock:
            key = self._keys.get(access_key_id)
        if key is None:
            return None, "the access key is unknown"
        secret, session_token, arn = key
        host = lowered.get("host", "")
        if host != f"sts.{region}.amazonaws.com":
            return None, f"the host {host!r} is not sts.{region}.amazonaws.com"
        if service != "sts":
            return None, "the credential scope's service is not sts"
        if "host" not in signed or "x-amz-date" not in signed:
            return None, "host and x-amz-date must be signed"
        if signed != sorted(signed):
            return None, "SignedHeaders is not sorted"
        if session_token is not None and ("x-amz-security-token" not in signed or lowered.get("x-amz-security-token") != session_token):
            return None, "the temporary key's session token is not signed or not the one issued"
        if not amz_date.startswith(date_stamp):
            return None, "the credential scope's date is not the request's"
        try:
            moment = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            return None, "x-amz-date is not YYYYMMDDTHHMMSSZ"
        if abs((datetime.datetime.now(datetime.timezone.utc) - moment).total_seconds()) > MAX_SKEW_SECONDS:
            return None, "x-amz-date is more than 15 minutes off"
        missing = [name for name in signed if name not in lowered]
        if missing:
            return None, f"signed headers are missing: {', '.join(missing)}"
        # botocore computes the signature the request should carry from exactly the signed headers.
        aws_request = AWSRequest(method=method, url=url, data=b"",
                                 headers={name: lowered[name] for name in signed})
        aws_request.context["timestamp"] = amz_date
        signer = SigV4Auth(Credentials(access_key_id, secret, session_token), service, region)
        canonical = signer.canonical_request(aws_request)
        expected = signer.signature(signer.string_to_sign(aws_request, canonical), aws_request)
        if not hmac.compare_digest(expected, fields.get("Signature", "")):
            return None, "the signature does not match"
        return arn, None

    def _caller_identity(self, request):
        self._count("caller_identity_requests")
        if request.query.get("Action") != "GetCallerIdentity" or request.query.get("Version") != "2011-06-15":
            return self._error(400, "InvalidAction", "only GetCallerIdentity (2011-06-15) is served")
        host = request.header("Host") or ""
        url = f"https://{host}/" + (f"?{request.raw_query}" if request.raw_query else "")
        arn, why = self.verify("POST", url, dict(request.headers.items()))
        if arn is None:
            self._count("signatures_refused")
            self.log.info("refused a GetCallerIdentity request: %s", why)
            return self._error(403, "SignatureDoesNotMatch", why)
        self._count("signatures_verified")
        user_id = arn.rsplit("/", 1)[-1]
        return Answer(200, (
            '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
            f"<GetCallerIdentityResult><Arn>{arn}</Arn><UserId>{user_id}</UserId><Account>{ACCOUNT}</Account>"
            "</GetCallerIdentityResult><ResponseMetadata><RequestId>"
            f"{secrets.token_hex(16)}</RequestId></ResponseMetadata></GetCallerIdentityResponse>"), "text/xml")

    @staticmethod
    def _error(status, code, message):
        return Answer(status, (
            '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
            f"<Code>{code}</Code><Message>{message}</Message></Error></ErrorResponse>"), "text/xml")

    # -- knobs ----------------------------------------------------------------------------------

    def _new_keys_endpoint(self, request):
        body = request.json() or {}
        return Answer.json(200, self.new_keys(temporary=bool(body.get("temporary"))))

    def _imds_knob(self, request):
        body = request.json() or {}
        with self._lock:
            self._require_session_token = bool(body.get("require_session_token", True))
        return Answer.json(200, {"require_session_token": self._require_session_token})
