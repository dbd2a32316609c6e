#!/usr/bin/env python3
"""An xDS control plane for the tests: ADS, state of the world, xDS v3, on grpcio + xds-protos.

It serves envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources on one
loopback address and holds a set of resources per type URL (LDS, RDS, CDS, EDS), which a test
changes at any time (`ControlPlane.set`, `.remove`, `.set_raw`); every open stream is then sent
the new state of the types it subscribes to. `ControlPlane.inject` plays a hostile control plane:
it sends exactly the messages it is given (bytes that are no DiscoveryResponse, one over the
client's size bound, a flood of updates) to the streams open at the time, once. Every request a
client sends is recorded (type URL, version_info, response_nonce, resource names, error_detail),
so a test can see its ACKs and NACKs.

The builders below (`listener`, `route_configuration`, `cluster`, `endpoints`) make the resources
the scenarios use, with the real type URLs. The test control plane is one of the project's own:
its only clients are the tests' (grpcio's xDS client as the reference, and ours).
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import sys
import threading
import urllib.parse
import urllib.request
from concurrent import futures

import grpc
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2, config_source_pb2, health_check_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.config.listener.v3 import api_listener_pb2, listener_pb2
from envoy.config.route.v3 import route_components_pb2, route_pb2
from envoy.extensions.filters.http.router.v3 import router_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import http_connection_manager_pb2 as hcm_pb2
from envoy.service.discovery.v3 import discovery_pb2
from google.protobuf import any_pb2, duration_pb2, wrappers_pb2
from envoy.type.matcher.v3 import string_pb2

LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener"
ROUTE_CONFIGURATION = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
ENDPOINTS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
TYPE_URLS = (LISTENER, ROUTE_CONFIGURATION, CLUSTER, ENDPOINTS)
ADS_SERVICE = "envoy.service.discovery.v3.AggregatedDiscoveryService"

# Bounds on what one client may make the control plane hold.
MAX_NAMES_PER_REQUEST = 10_000
MAX_RECORDED_REQUESTS = 100_000


def packed(message):
    value = any_pb2.Any()
    value.Pack(message)
    return value


def name_of(type_url, message):
    return message.cluster_name if type_url == ENDPOINTS else message.name


# --- Builders -------------------------------------------------------------------------------

def router_filter():
    return hcm_pb2.HttpFilter(name="envoy.filters.http.router", typed_config=packed(router_pb2.Router()))


def listener(name, route_config_name=None, inline_routes=None, filters=None):
    """An API listener: routes from RDS (`route_config_name`) or inline (a RouteConfiguration)."""
    manager = hcm_pb2.HttpConnectionManager(http_filters=filters if filters is not None else [router_filter()])
    if inline_routes is not None:
        manager.route_config.CopyFrom(inline_routes)
    else:
        manager.rds.route_config_name = route_config_name
        manager.rds.config_source.ads.SetInParent()
    return listener_pb2.Listener(name=name, api_listener=api_listener_pb2.ApiListener(api_listener=packed(manager)))


def route(cluster=None, weighted=None, prefix="", path=None, headers=(), max_stream_duration=None):
    """A route: to one `cluster` or to `weighted` [(cluster, weight)], matching a prefix or a path
    and header matchers (route_components_pb2.HeaderMatcher)."""
    match = route_components_pb2.RouteMatch(headers=list(headers))
    if path is not None:
        match.path = path
    else:
        match.prefix = prefix
    action = route_components_pb2.RouteAction()
    if weighted is not None:
        for cluster_name, weight in weighted:
            action.weighted_clusters.clusters.add(name=cluster_name, weight=wrappers_pb2.UInt32Value(value=weight))
    else:
        action.cluster = cluster
    if max_stream_duration is not None:
        action.max_stream_duration.max_stream_duration.CopyFrom(duration_pb2.Duration(seconds=max_stream_duration))
    return route_components_pb2.Route(match=match, route=action)


def exact_header(name, value):
    return route_components_pb2.HeaderMatcher(name=name, exact_match=value)


def route_configuration(name, domains, routes):
    host = route_components_pb2.VirtualHost(name=f"{name}-host", domains=list(domains), routes=list(routes))
    return route_pb2.RouteConfiguration(name=name, virtual_hosts=[host])


def cluster(name, service_name="", lb_policy=cluster_pb2.Cluster.ROUND_ROBIN):
    value = cluster_pb2.Cluster(name=name, type=cluster_pb2.Cluster.EDS, lb_policy=lb_policy)
    value.eds_cluster_config.eds_config.ads.SetInParent()
    value.eds_cluster_config.service_name = service_name
    return value


def endpoints(cluster_name, localities):
    """A ClusterLoadAssignment; `localities` is [(priority, weight, zone, [(host, port, health)])],
    health one of "HEALTHY", "UNKNOWN", "UNHEALTHY", "DRAINING"."""
    value = endpoint_pb2.ClusterLoadAssignment(cluster_name=cluster_name)
    for priority, weight, zone, backends in localities:
        entry = value.endpoints.add(priority=priority, load_balancing_weight=wrappers_pb2.UInt32Value(value=weight))
        entry.locality.CopyFrom(base_pb2.Locality(region="test", zone=zone))
        for host, port, health in backends:
            address = address_pb2.Address(socket_address=address_pb2.SocketAddress(address=host, port_value=port))
            entry.lb_endpoints.add(endpoint=endpoint_components_pb2.Endpoint(address=address),
                                   health_status=health_check_pb2.HealthStatus.Value(health))
    return value


# --- The server -----------------------------------------------------------------------------

class ControlPlane:
    """The resources, the open streams, and the record of every request."""

    def __init__(self, authorizer=None):
        """`authorizer(token)` (optional) decides each ADS stream's bearer token: it returns None
        to accept it, or the reason to refuse it (the stream then ends UNAUTHENTICATED)."""
        self._authorizer = authorizer
        # ("accepted" | "refused", reason or "", the token's fingerprint), one per stream
        self._authorizations = []
        self._lock = threading.Condition()
        self._resources = {type_url: {} for type_url in TYPE_URLS}
        self._raw = {}  # type_url -> [Any]: sent as is instead of _resources (invalid updates)
        self._versions = {type_url: 1 for type_url in TYPE_URLS}
        self._requests = []
        self._sent = []  # (type_url, version_info, nonce) of every response sent
        self._nonce = 0
        self._injected = []  # messages (DiscoveryResponse or raw bytes) for the streams open when added
        self._streams = {"open": 0, "ended": 0}  # ADS streams open now, and ended so far
        self._server = None
        self.port = None

    # The state, changed by the tests.

    def set(self, type_url, *messages):
        """Adds or replaces resources of one type (by name) and sends the new state."""
        with self._lock:
            for message in messages:
                self._resources[type_url][name_of(type_url, message)] = packed(message)
            self._raw.pop(type_url, None)
            self._bump(type_url)

    def remove(self, type_url, name):
        with self._lock:
            self._resources[type_url].pop(name, None)
            self._bump(type_url)

    def set_raw(self, type_url, anys):
        """Sends exactly these Any values for a type (until the next `set`): for invalid updates."""
        with self._lock:
            self._raw[type_url] = list(anys)
            self._bump(type_url)

    def inject(self, messages, answered=True):
        """Sends `messages` (DiscoveryResponse, or bytes sent as the message as they are) once, in
        order, on every stream open now; a stream opened later is not sent them. Responses are
        recorded as sent (for a test to find their ACKs) unless the client is not to answer them
        (`answered=False`: it must end the stream instead)."""
        with self._lock:
            for message in messages:
                if isinstance(message, discovery_pb2.DiscoveryResponse):
                    self._nonce += 1
                    message.nonce = str(self._nonce)
                    if answered and len(self._sent) < MAX_RECORDED_REQUESTS:
                        self._sent.append((message.type_url, message.version_info, message.nonce))
                self._injected.append(message)
            self._lock.notify_all()

    def _bump(self, type_url):
        self._versions[type_url] += 1
        self._lock.notify_all()

    # What the clients sent.

    def requests(self, type_url=None):
        with self._lock:
            return [r for r in self._requests if type_url is None or r.type_url == type_url]

    def wait_for_request(self, predicate, timeout=30):
        """The first request (recorded or to come) that satisfies `predicate`, or None at timeout."""
        with self._lock:
            found = []

            def check():
                found[:] = [r for r in self._requests if predicate(r)]
                return bool(found)

            self._lock.wait_for(check, timeout=timeout)
            return found[0] if found else None

    def sent(self):
        with self._lock:
            return list(self._sent)

    def authorizations(self):
        with self._lock:
            return list(self._authorizations)

    def streams(self, until_open=None, timeout=20):
        """How many ADS streams are open and how many have ended; with `until_open`, first waits
        (at most `timeout` seconds) until that many are open."""
        with self._lock:
            if until_open is not None:
                self._lock.wait_for(lambda: self._streams["open"] == until_open, timeout=timeout)
            return dict(self._streams)

    def _stream_ended(self):
        with self._lock:
            self._streams["open"] -= 1
            self._streams["ended"] += 1
            self._lock.notify_all()

    def _authorize(self, context):
        """Checks the stream's `authorization: Bearer` token with the authorizer; never records it."""
        headers = dict(context.invocation_metadata())
        scheme, _, token = headers.get("authorization", "").partition(" ")
        reason = ("no bearer token" if scheme.lower() != "bearer" or not token
                  else self._authorizer(token))
        # Which token it was, without the token: the first 12 hex digits of its SHA-256.
        fingerprint = hashlib.sha256(token.encode("utf-8")).hexdigest()[:12] if token else ""
        with self._lock:
            if len(self._authorizations) < MAX_RECORDED_REQUESTS:
                self._authorizations.append(("refused" if reason else "accepted", reason or "", fingerprint))
        if reason:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, reason)

    # The ADS stream.

    def StreamAggregatedResources(self, request_iterator, context):
        # Counted from the handler's start to the RPC's end, however it ends (the client's
        # RST_STREAM or closed connection included).
        with self._lock:
            self._streams["open"] += 1
        if not context.add_callback(self._stream_ended):
            self._stream_ended()  # already over
        if self._authorizer is not None:
            self._authorize(context)
        subscriptions = {}  # type_url -> set of names
        sent = {}  # type_url -> (version, names) last sent
        closed = []

        def read():
            try:
                for request in request_iterator:
                    with self._lock:
                        if len(self._requests) < MAX_RECORDED_REQUESTS:
                            self._requests.append(request)
                        if request.type_url in TYPE_URLS and len(request.resource_names) <= MAX_NAMES_PER_REQUEST:
                            subscriptions[request.type_url] = set(request.resource_names)
                        self._lock.notify_all()
            except grpc.RpcError:
                pass
            finally:
                with self._lock:
                    closed.append(True)
                    self._lock.notify_all()

        threading.Thread(target=read, daemon=True).start()
        with self._lock:
            injected = len(self._injected)  # what was injected before this stream is not for it
        while context.is_active():
            with self._lock:
                due = [t for t in TYPE_URLS if t in subscriptions
                       and sent.get(t) != (self._versions[t], frozenset(subscriptions[t]))]
                hostile = self._injected[injected:]
                injected = len(self._injected)
                if not due and not hostile:
                    if closed:
                        return
                    self._lock.wait(timeout=0.5)
                    continue
                responses = list(hostile)
                for type_url in due:
                    names = subscriptions[type_url]
                    if type_url in self._raw:
                        resources = self._raw[type_url]
                    else:
                        resources = [value for name, value in self._resources[type_url].items() if name in names]
                    self._nonce += 1
                    responses.append(discovery_pb2.DiscoveryResponse(
                        version_info=str(self._versions[type_url]), resources=resources, type_url=type_url,
                        nonce=str(self._nonce)))
                    sent[type_url] = (self._versions[type_url], frozenset(names))
                    if len(self._sent) < MAX_RECORDED_REQUESTS:
                        self._sent.append((type_url, str(self._versions[type_url]), str(self._nonce)))
            yield from responses

    # Life cycle.

    def start(self, host="127.0.0.1", port=0, tls=None):
        """Serves on `host:port` (0: any free port), over TLS when `tls` is (certificate chain PEM,
        private key PEM)."""
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=32), options=[("grpc.so_reuseport", 0)])
        # Registered by hand rather than through ads_pb2_grpc so that injected bytes go out as they are.
        handler = grpc.method_handlers_generic_handler(ADS_SERVICE, {
            "StreamAggregatedResources": grpc.stream_stream_rpc_method_handler(
                self.StreamAggregatedResources,
                request_deserializer=discovery_pb2.DiscoveryRequest.FromString,
                response_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString()),
        })
        self._server.add_generic_rpc_handlers((handler,))
        if tls is None:
            self.port = self._server.add_insecure_port(f"{host}:{port}")
        else:
            chain, key = tls
            self.port = self._server.add_secure_port(f"{host}:{port}", grpc.ssl_server_credentials([(key, chain)]))
        if self.port == 0:
            raise RuntimeError(f"cannot listen on {host}:{port}")
        self._server.start()
        return self.port

    def stop(self):
        if self._server is not None:
            self._server.stop(grace=None).wait()
            self._server = None


# --- Sample responses -----------------------------------------------------------------------

def sample_responses():
    """One DiscoveryResponse per type, encoded by the real (xds-protos) messages, with fields the
    client's subset does not declare set as a real control plane sets them (stat_prefix,
    codec_type, connect_timeout, ...): what the Swift tests decode with the subset."""
    manager = hcm_pb2.HttpConnectionManager(
        stat_prefix="svc", codec_type=hcm_pb2.HttpConnectionManager.AUTO, http_filters=[router_filter()])
    manager.rds.route_config_name = "svc-routes"
    manager.rds.config_source.ads.SetInParent()
    manager.rds.config_source.resource_api_version = config_source_pb2.ApiVersion.V3
    lds = listener_pb2.Listener(name="svc", api_listener=api_listener_pb2.ApiListener(api_listener=packed(manager)))

    canary = route_components_pb2.HeaderMatcher(
        name="x-track", string_match=string_pb2.StringMatcher(exact="Canary", ignore_case=True))
    routes = [
        route(cluster="canary", headers=[canary]),
        route(weighted=[("c1", 75), ("c2", 25)], prefix="/grpc.testing.TestService/", max_stream_duration=5),
    ]
    rds = route_configuration("svc-routes", ["svc", "*.svc.example.com"], routes)
    rds.virtual_hosts[0].routes[1].route.timeout.CopyFrom(duration_pb2.Duration(seconds=30))
    rds.virtual_hosts[0].routes[1].name = "weighted"

    cds = cluster("c1", service_name="c1-eds")
    cds.connect_timeout.CopyFrom(duration_pb2.Duration(seconds=1))
    cds.dns_lookup_family = cluster_pb2.Cluster.V4_ONLY

    eds = endpoints("c1-eds", [
        (0, 3, "a", [("127.0.0.2", 50051, "HEALTHY"), ("127.0.0.3", 50051, "UNHEALTHY")]),
        (0, 1, "b", [("::1", 50052, "UNKNOWN")]),
        (1, 1, "c", [("127.0.0.4", 50053, "HEALTHY")]),
    ])
    responses = {}
    for nonce, (type_url, message) in enumerate(
            [(LISTENER, lds), (ROUTE_CONFIGURATION, rds), (CLUSTER, cds), (ENDPOINTS, eds)], start=1):
        response = discovery_pb2.DiscoveryResponse(
            version_info="v1", resources=[packed(message)], type_url=type_url, nonce=f"nonce-{nonce}")
        response.control_plane.identifier = "authrpc-test-control-plane"
        responses[type_url] = base64.b64encode(response.SerializeToString()).decode("ascii")
    return responses


# --- Serving, for the Swift tests -----------------------------------------------------------

def request_json(request):
    detail = None
    if request.HasField("error_detail"):
        detail = {"code": request.error_detail.code, "message": request.error_detail.message}
    return {"type_url": request.type_url, "version_info": request.version_info,
            "response_nonce": request.response_nonce, "resource_names": list(request.resource_names),
            "error_detail": detail, "node_id": request.node.id if request.HasField("node") else None}


def bounded(command, key, limit=1 << 26):
    """The command's size or count `key`: a mistyped command must not exhaust the machine."""
    value = int(command[key])
    if not 0 < value <= limit:
        raise ValueError(f"{key} must be between 1 and {limit}")
    return value


def apply_command(plane, command):
    """One change a test asks for (a JSON object, `op` naming it)."""
    op = command.get("op")
    if op == "basic":
        # listener -> RDS route configuration -> cluster -> EDS endpoints (one HEALTHY locality).
        backends = [(host, int(port), "HEALTHY") for host, port in command["backends"]]
        plane.set(ENDPOINTS, endpoints(command["eds"], [(0, 1, "a", backends)]))
        plane.set(CLUSTER, cluster(command["cluster"], service_name=command["eds"]))
        plane.set(ROUTE_CONFIGURATION, route_configuration(
            command["route"], [command["listener"]], [route(cluster=command["cluster"], prefix="/")]))
        plane.set(LISTENER, listener(command["listener"], route_config_name=command["route"]))
    elif op == "routes":
        # listener -> RDS routes, each to a cluster or a weighted set, matched by a prefix and
        # exact header values, with an optional max_stream_duration (seconds); each cluster (EDS
        # service NAME-eds) with localities [priority, weight, zone, [[host, port(, health)], ...]].
        routes = []
        for spec in command["routes"]:
            headers = [exact_header(name, value) for name, value in spec.get("headers", [])]
            weighted = [(name, int(weight)) for name, weight in spec["weighted"]] if "weighted" in spec else None
            routes.append(route(cluster=spec.get("cluster"), weighted=weighted, prefix=spec.get("prefix", "/"),
                                headers=headers, max_stream_duration=spec.get("max_stream_duration")))
        plane.set(ENDPOINTS, *[
            endpoints(f"{name}-eds", [(int(priority), int(weight), zone,
                                       [(backend[0], int(backend[1]), backend[2] if len(backend) > 2 else "HEALTHY")
                                        for backend in backends])
                                      for priority, weight, zone, backends in localities])
            for name, localities in command["clusters"].items()])
        plane.set(CLUSTER, *[cluster(name, service_name=f"{name}-eds") for name in command["clusters"]])
        plane.set(ROUTE_CONFIGURATION, route_configuration(command["route"], [command["listener"]], routes))
        plane.set(LISTENER, listener(command["listener"], route_config_name=command["route"]))
    elif op == "ring_hash_cluster":
        # An update the client must NACK (gRFC A27: only ROUND_ROBIN), sent instead of every cluster.
        plane.set_raw(CLUSTER, [packed(cluster(command["cluster"], service_name=command["eds"],
                                               lb_policy=cluster_pb2.Cluster.RING_HASH))])
    elif op == "cluster":
        plane.set(CLUSTER, cluster(command["cluster"], service_name=command["eds"]))
    # A hostile control plane, on the streams open now (see ControlPlane.inject).
    elif op == "garbage":
        # Field 0 with wire type 7: bytes no protobuf parser accepts.
        plane.inject([b"\xff" * 64])
    elif op == "oversize":
        # A DiscoveryResponse of about `bytes` bytes: one CDS resource of junk.
        filler = any_pb2.Any(type_url=CLUSTER, value=b"\x00" * bounded(command, "bytes"))
        plane.inject([discovery_pb2.DiscoveryResponse(version_info="big", type_url=CLUSTER, resources=[filler])],
                     answered=False)
    elif op == "too_many":
        # `count` empty CDS resources in one response.
        empty = any_pb2.Any(type_url=CLUSTER)
        plane.inject([discovery_pb2.DiscoveryResponse(
            version_info="many", type_url=CLUSTER, resources=[empty] * bounded(command, "count"))], answered=False)
    elif op == "flood":
        # `count` CDS updates back to back, each the same good cluster under a new version.
        good = packed(cluster(command["cluster"], service_name=command["eds"]))
        plane.inject([discovery_pb2.DiscoveryResponse(version_info=f"flood-{index}", type_url=CLUSTER,
                                                      resources=[good])
                      for index in range(1, bounded(command, "count") + 1)])
    else:
        raise ValueError(f"unknown op {op!r}")


def introspecting_authorizer(url, client, secret, required_scope):
    """An authorizer that asks the issuer's introspection endpoint (RFC 7662) about each token:
    active, and carrying `required_scope` when one is given."""
    credentials = base64.b64encode(f"{client}:{secret}".encode("utf-8")).decode("ascii")

    def authorize(token):
        request = urllib.request.Request(url, data=urllib.parse.urlencode({"token": token}).encode("ascii"),
                                         headers={"Authorization": f"Basic {credentials}",
                                                  "Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                answer = json.loads(response.read(1 << 16))
        except (OSError, ValueError) as error:
            return f"the issuer could not be asked: {type(error).__name__}"
        if not answer.get("active"):
            return "the token is not active"
        if required_scope and required_scope not in str(answer.get("scope", "")).split():
            return f"the token lacks scope {required_scope}"
        return None

    return authorize


def serve(arguments):
    """Runs the control plane on 127.0.0.1 and a small HTTP admin port beside it: POST /command
    (JSON, see apply_command), GET /requests (every request recorded), GET /sent (every response),
    GET /streams (ADS streams open and ended; ?until_open=N waits up to 20 s for N open)."""
    authorizer = None
    if arguments.introspection_url:
        authorizer = introspecting_authorizer(arguments.introspection_url, arguments.introspection_client,
                                              arguments.introspection_secret, arguments.required_scope)
    tls = None
    generated = None
    if arguments.tls_names:
        # A CA and a certificate of its own for these DNS names (a production name a test's
        # hosts file points at 127.0.0.1); the CA's path goes in control_plane.json.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Examples", "Sandbox"))
        import certs

        names = arguments.tls_names.split(",")
        directory = os.path.join(arguments.state_dir, "tls")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        generated = certs.generate(directory, server_name=names[0], aliases=names[1:])
        arguments.tls_cert, arguments.tls_key = generated["server_cert"], generated["server_key"]
    if arguments.tls_cert:
        with open(arguments.tls_cert, "rb") as chain, open(arguments.tls_key, "rb") as key:
            tls = (chain.read(), key.read())
    plane = ControlPlane(authorizer)
    port = plane.start(port=arguments.port, tls=tls)

    class Admin(http.server.BaseHTTPRequestHandler):
        def answer(self, status, value):
            body = json.dumps(value).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/requests":
                self.answer(200, [request_json(r) for r in plane.requests()])
            elif self.path == "/sent":
                self.answer(200, [list(entry) for entry in plane.sent()])
            elif self.path == "/authorizations":
                self.answer(200, [list(entry) for entry in plane.authorizations()])
            elif self.path == "/streams":
                self.answer(200, plane.streams())
            elif self.path.startswith("/streams?until_open="):
                try:
                    wanted = int(self.path.partition("=")[2])
                except ValueError:
                    self.answer(400, {"error": "until_open must be a number"})
                    return
                self.answer(200, plane.streams(until_open=wanted))
            else:
                self.answer(404, {"error": "no such path"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= 1 << 16:
                self.answer(400, {"error": "bad length"})
                return
            try:
                apply_command(plane, json.loads(self.rfile.read(length)))
            except (ValueError, KeyError, TypeError) as error:
                self.answer(400, {"error": str(error)})
                return
            self.answer(200, {"ok": True})

        def log_message(self, *_):
            pass

    admin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Admin)
    threading.Thread(target=admin.serve_forever, daemon=True).start()
    info = {"pid": os.getpid(), "port": port, "admin_port": admin.server_address[1]}
    if generated:
        info["ca_cert"] = generated["ca_cert"]
    path = os.path.join(arguments.state_dir, "control_plane.json")
    with open(path + ".partial", "w") as handle:
        json.dump(info, handle)
    os.replace(path + ".partial", path)
    print(f"XDS_CONTROL_PLANE READY {path}", flush=True)
    if arguments.exit_with_stdin:
        while os.read(sys.stdin.fileno(), 4096):
            pass
    else:
        threading.Event().wait()
    admin.shutdown()
    plane.stop()
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description="the test xDS control plane")
    parser.add_argument("--sample-responses", action="store_true",
                        help="print one encoded DiscoveryResponse per type as JSON {type_url: base64}")
    parser.add_argument("--state-dir", help="serve: where control_plane.json is written")
    parser.add_argument("--port", type=int, default=0, help="serve: the ADS port on 127.0.0.1 (0: any free)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="serve: exit when standard input ends")
    parser.add_argument("--tls-cert", help="serve: ADS over TLS with this certificate chain (PEM)")
    parser.add_argument("--tls-key", help="serve: the TLS private key (PEM)")
    parser.add_argument("--tls-names", help="serve: ADS over TLS with a CA and certificate made for these DNS names "
                                            "(comma-separated)")
    parser.add_argument("--introspection-url", help="serve: check each stream's bearer token here (RFC 7662)")
    parser.add_argument("--introspection-client", help="serve: the client that asks the introspection endpoint")
    parser.add_argument("--introspection-secret", help="serve: that client's secret")
    parser.add_argument("--required-scope", help="serve: a scope the token must carry")
    arguments = parser.parse_args(argv)
    if arguments.sample_responses:
        json.dump(sample_responses(), sys.stdout)
        return 0
    if arguments.state_dir:
        return serve(arguments)
    parser.error("nothing to do: --sample-responses or --state-dir")


if __name__ == "__main__":
    sys.exit(main())
