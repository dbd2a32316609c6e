"""The test xDS control plane (xds_control_plane.py) proven with grpcio as the reference client.

grpcio's C-core is a complete proxyless xDS client (gRFC A27/A28): every scenario our own client
will run against this control plane runs here first with grpcio, so a scenario that fails proves
something about the control plane, never about us. Backends are grpcio servers of
grpc.testing.TestService on 127.0.0.2 and up, each answering with its name.

The bootstrap goes in GRPC_XDS_BOOTSTRAP_CONFIG before the first xds:/// channel: grpcio keeps one
xDS client per process, so each scenario uses names of its own.
"""

import collections
import json
import os
import socket
import sys
import tempfile
import threading
import unittest
from concurrent import futures

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Examples", "Sandbox"))
import backend_server  # noqa: E402
import test_service  # noqa: E402
import xds_control_plane as xcp  # noqa: E402

CALL_TIMEOUT = 20


class Backend:
    def __init__(self, pb, pbg, host, name, directory, port=0):
        self.name = name
        self.host = host
        self.recorder = backend_server.Recorder(os.path.join(directory, f"{name}.ids"))
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=[("grpc.so_reuseport", 0)])
        pbg.add_TestServiceServicer_to_server(backend_server.make_servicer(pb, pbg, name, self.recorder), self.server)
        self.port = self.server.add_insecure_port(f"{host}:{port}")
        assert self.port, f"cannot listen on {host}"
        self.server.start()

    def endpoint(self, health="HEALTHY"):
        return (self.host, self.port, health)

    def stop(self):
        self.server.stop(grace=None).wait()
        self.recorder.close()


class XdsControlPlaneWithGrpcioTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="xds-cp-")
        cls.pb, cls.pbg = test_service.load_protos(os.path.join(cls.directory, "protos"))
        cls.control_plane = xcp.ControlPlane()
        port = cls.control_plane.start()
        bootstrap = {
            "xds_servers": [{"server_uri": f"127.0.0.1:{port}", "channel_creds": [{"type": "insecure"}],
                             "server_features": ["xds_v3"]}],
            "node": {"id": "grpcio-reference", "locality": {"zone": "test-a"}},
        }
        os.environ["GRPC_XDS_BOOTSTRAP_CONFIG"] = json.dumps(bootstrap)
        cls.backends = [Backend(cls.pb, cls.pbg, f"127.0.0.{2 + i}", f"backend-{i}", cls.directory) for i in range(4)]

    @classmethod
    def tearDownClass(cls):
        for backend in cls.backends:
            backend.stop()
        cls.control_plane.stop()

    def serve(self, service, routes, clusters):
        """LDS `service` -> RDS `service`-routes -> the clusters {name: endpoints localities}."""
        cp = self.control_plane
        for name, localities in clusters.items():
            cp.set(xcp.ENDPOINTS, xcp.endpoints(name, localities))
            cp.set(xcp.CLUSTER, xcp.cluster(name))
        cp.set(xcp.ROUTE_CONFIGURATION, xcp.route_configuration(f"{service}-routes", [service], routes))
        cp.set(xcp.LISTENER, xcp.listener(service, f"{service}-routes"))

    def call(self, stub, metadata=(), timeout=CALL_TIMEOUT):
        return stub.UnaryCall(self.pb.SimpleRequest(), metadata=metadata, timeout=timeout,
                              wait_for_ready=True).username

    def counts(self, stub, calls, metadata=()):
        return collections.Counter(self.call(stub, metadata) for _ in range(calls))

    def channel(self, service):
        channel = grpc.insecure_channel(f"xds:///{service}")
        self.addCleanup(channel.close)
        return self.pbg.TestServiceStub(channel)

    def test_basic_routing_spreads_calls_round_robin_over_a_locality(self):
        b0, b1 = self.backends[0], self.backends[1]
        self.serve("basic", [xcp.route(cluster="basic-c")],
                   {"basic-c": [(0, 1, "a", [b0.endpoint(), b1.endpoint()])]})
        stub = self.channel("basic")
        self.call(stub)  # the config is in place and both subchannels are being connected
        counts = self.counts(stub, 200)
        self.assertEqual(set(counts), {b0.name, b1.name})
        self.assertLessEqual(abs(counts[b0.name] - counts[b1.name]), 20, counts)
        # The client ACKed each type with the version it was sent.
        for type_url in xcp.TYPE_URLS:
            self.assertIsNotNone(self.control_plane.wait_for_request(
                lambda r, t=type_url: r.type_url == t and r.version_info and r.response_nonce
                and not r.HasField("error_detail")), type_url)

    def test_weighted_clusters_split_within_five_percent_over_2000_calls(self):
        b0, b1 = self.backends[0], self.backends[1]
        self.serve("weighted", [xcp.route(weighted=[("weighted-a", 75), ("weighted-b", 25)])],
                   {"weighted-a": [(0, 1, "a", [b0.endpoint()])], "weighted-b": [(0, 1, "a", [b1.endpoint()])]})
        stub = self.channel("weighted")
        self.call(stub)
        counts = self.counts(stub, 2000)
        self.assertAlmostEqual(counts[b0.name] / 2000, 0.75, delta=0.05, msg=counts)
        self.assertAlmostEqual(counts[b1.name] / 2000, 0.25, delta=0.05, msg=counts)

    def test_header_based_routing(self):
        b0, b1 = self.backends[0], self.backends[1]
        self.serve("headers", [xcp.route(cluster="headers-canary", headers=[xcp.exact_header("x-track", "canary")]),
                               xcp.route(cluster="headers-stable")],
                   {"headers-canary": [(0, 1, "a", [b1.endpoint()])], "headers-stable": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("headers")
        self.assertEqual(self.counts(stub, 20), {b0.name: 20})
        self.assertEqual(self.counts(stub, 20, metadata=[("x-track", "canary")]), {b1.name: 20})
        self.assertEqual(self.counts(stub, 20, metadata=[("x-track", "Canary")]), {b0.name: 20})

    def test_endpoints_added_and_removed_reach_the_client_and_no_call_fails(self):
        b0, b1 = self.backends[0], self.backends[1]
        self.serve("pushed", [xcp.route(cluster="pushed-c")], {"pushed-c": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("pushed")
        self.assertEqual(self.counts(stub, 10), {b0.name: 10})
        self.control_plane.set(xcp.ENDPOINTS, xcp.endpoints("pushed-c", [(0, 1, "a", [b0.endpoint(), b1.endpoint()])]))
        self.assertTrue(self.eventually(stub, b1.name, settled={b0.name, b1.name}))
        self.control_plane.set(xcp.ENDPOINTS, xcp.endpoints("pushed-c", [(0, 1, "a", [b1.endpoint()])]))
        # Every call above succeeded (a failure raises); after the removal only b1 serves.
        self.assertTrue(self.eventually(stub, b1.name, settled={b1.name}, streak=20))

    def test_max_stream_duration_caps_the_deadline(self):
        b0 = self.backends[0]
        # Capped only for calls marked x-capped: the first call, which waits for the config and
        # a connection, is not. 2 s, not 1: grpcio 1.85 fails every call at once (DEADLINE_EXCEEDED
        # in under a millisecond) when a route allows exactly 1 s; 2 and 3 s behave.
        capped = [xcp.exact_header("x-capped", "yes")]
        self.serve("capped", [xcp.route(cluster="capped-c", headers=capped, max_stream_duration=2),
                              xcp.route(cluster="capped-c")],
                   {"capped-c": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("capped")
        self.assertEqual(self.call(stub), b0.name)
        self.assertEqual(self.call(stub, metadata=[("x-capped", "yes")]), b0.name)
        with self.assertRaises(grpc.RpcError) as raised:
            self.call(stub, metadata=[("x-capped", "yes"), (backend_server.DELAY_KEY, "5000")])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)

    def test_priority_failover_and_back(self):
        b0, b1 = self.backends[2], self.backends[3]
        self.serve("failover", [xcp.route(cluster="failover-c")],
                   {"failover-c": [(0, 1, "a", [b0.endpoint()]), (1, 1, "b", [b1.endpoint()])]})
        stub = self.channel("failover")
        self.assertEqual(self.counts(stub, 10), {b0.name: 10})
        # Priority 0's only endpoint turns unhealthy: calls go to priority 1.
        self.control_plane.set(xcp.ENDPOINTS, xcp.endpoints(
            "failover-c", [(0, 1, "a", [b0.endpoint("UNHEALTHY")]), (1, 1, "b", [b1.endpoint()])]))
        self.assertTrue(self.eventually(stub, b1.name))
        # ... and back when it is healthy again.
        self.control_plane.set(xcp.ENDPOINTS, xcp.endpoints(
            "failover-c", [(0, 1, "a", [b0.endpoint()]), (1, 1, "b", [b1.endpoint()])]))
        self.assertTrue(self.eventually(stub, b0.name))

    def test_locality_weights_split_three_to_one_within_five_percent(self):
        b0, b1 = self.backends[0], self.backends[1]
        self.serve("localities", [xcp.route(cluster="localities-c")],
                   {"localities-c": [(0, 3, "heavy", [b0.endpoint()]), (0, 1, "light", [b1.endpoint()])]})
        stub = self.channel("localities")
        self.call(stub)
        counts = self.counts(stub, 2000)
        self.assertLessEqual(abs(counts[b0.name] / 2000 - 0.75), 0.05, counts)
        self.assertLessEqual(abs(counts[b1.name] / 2000 - 0.25), 0.05, counts)

    def test_failover_by_connectivity_and_back(self):
        # Priority 0's endpoint is HEALTHY, but nothing listens there yet.
        with socket.socket() as probe:
            probe.bind(("127.0.0.5", 0))
            port = probe.getsockname()[1]
        standby = self.backends[2]
        self.serve("connectivity", [xcp.route(cluster="connectivity-c")],
                   {"connectivity-c": [(0, 1, "a", [("127.0.0.5", port, "HEALTHY")]), (1, 1, "b", [standby.endpoint()])]})
        stub = self.channel("connectivity")
        self.assertEqual(self.counts(stub, 20), {standby.name: 20})
        primary = Backend(self.pb, self.pbg, "127.0.0.5", "primary", self.directory, port=port)
        self.addCleanup(primary.stop)
        # Reconnected after its backoff: a few seconds of calls at most.
        self.assertTrue(self.eventually(stub, primary.name, calls=20000))

    def eventually(self, stub, name, calls=500, settled=None, streak=10):
        """Whether calls reach `name` within `calls` calls (bounded, no clock), then `streak` calls
        in a row reach exactly the backends named `settled` (`name` alone by default), in as many
        tries."""
        settled = settled or {name}
        for _ in range(calls):
            if self.call(stub) == name:
                for _ in range(calls):
                    if set(self.counts(stub, streak)) == settled:
                        return True
                return False
        return False

    def test_an_invalid_update_is_nacked_and_the_old_config_kept(self):
        b0 = self.backends[0]
        self.serve("nack", [xcp.route(cluster="nack-c")], {"nack-c": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("nack")
        self.assertEqual(self.counts(stub, 5), {b0.name: 5})
        # Weighted clusters whose weights sum to zero: every xDS client must refuse the routes.
        bad = xcp.route_configuration("nack-routes", ["nack"], [xcp.route(weighted=[("nack-c", 0)])])
        self.control_plane.set(xcp.ROUTE_CONFIGURATION, bad)
        nack = self.control_plane.wait_for_request(
            lambda r: r.type_url == xcp.ROUTE_CONFIGURATION and r.HasField("error_detail")
            and "nack-routes" in r.error_detail.message)
        self.assertIsNotNone(nack)
        self.assertEqual(self.counts(stub, 5), {b0.name: 5})

    def test_the_control_plane_killed_and_restarted_calls_keep_flowing(self):
        b0 = self.backends[1]
        self.serve("restart", [xcp.route(cluster="restart-c")], {"restart-c": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("restart")
        self.assertEqual(self.counts(stub, 5), {b0.name: 5})
        cp = self.control_plane
        port = cp.port
        before = len(cp.requests())
        cp.stop()
        self.assertEqual(self.counts(stub, 20), {b0.name: 20})
        cp.start(port=port)
        # The client comes back and subscribes again.
        self.assertIsNotNone(cp.wait_for_request(lambda r: r.type_url == xcp.LISTENER and "restart" in r.resource_names
                                                 and len(cp.requests()) > before))
        self.assertEqual(self.counts(stub, 5), {b0.name: 5})

    def test_a_hostile_control_plane_a_flood_then_garbage_calls_keep_flowing(self):
        # What XDSHostileControlPlaneTests does to our client, done to grpcio's.
        b0 = self.backends[2]
        self.serve("hostile", [xcp.route(cluster="hostile-c")], {"hostile-c": [(0, 1, "a", [b0.endpoint()])]})
        stub = self.channel("hostile")
        self.assertEqual(self.counts(stub, 5), {b0.name: 5})
        cp = self.control_plane
        good = xcp.packed(xcp.cluster("hostile-c"))
        cp.inject([xcp.discovery_pb2.DiscoveryResponse(version_info=f"flood-{index}", type_url=xcp.CLUSTER,
                                                       resources=[good]) for index in range(1, 501)])
        self.assertIsNotNone(cp.wait_for_request(
            lambda r: r.type_url == xcp.CLUSTER and r.version_info == "flood-500" and not r.HasField("error_detail")))
        self.assertEqual(self.counts(stub, 10), {b0.name: 10})
        # grpcio logs a message it cannot decode and ignores it, on the same stream (ours ends the
        # stream and starts another); either way the calls go on with the config in hand. The
        # flood comes first because grpcio's stream takes no update after such a message (a
        # later change was not ACKed in 5 s); ours takes them on its next stream.
        cp.inject([b"\xff" * 64])
        self.assertEqual(self.counts(stub, 10), {b0.name: 10})

    def test_a_listener_that_never_comes_fails_unavailable_naming_it(self):
        stub = self.channel("never-served")
        with self.assertRaises(grpc.RpcError) as raised:
            stub.UnaryCall(self.pb.SimpleRequest(), timeout=40)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("never-served", raised.exception.details())


class StreamCountTest(unittest.TestCase):
    """`streams()`: what the Swift suite reads to see its client's ADS stream end."""

    def test_a_stream_is_counted_open_until_the_client_cancels_it(self):
        plane = xcp.ControlPlane()
        port = plane.start()
        self.addCleanup(plane.stop)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.addCleanup(channel.close)
        ads = channel.stream_stream(f"/{xcp.ADS_SERVICE}/StreamAggregatedResources",
                                    request_serializer=xcp.discovery_pb2.DiscoveryRequest.SerializeToString,
                                    response_deserializer=xcp.discovery_pb2.DiscoveryResponse.FromString)
        self.assertEqual(plane.streams(), {"open": 0, "ended": 0})
        done = threading.Event()
        self.addCleanup(done.set)

        def requests():
            yield xcp.discovery_pb2.DiscoveryRequest(type_url=xcp.LISTENER, resource_names=["counted"])
            done.wait(CALL_TIMEOUT)  # no half-close: the stream stays up until cancelled

        call = ads(requests(), timeout=CALL_TIMEOUT)
        plane.set(xcp.LISTENER, xcp.listener("counted", "counted-routes"))
        next(call)  # the handler runs: the stream is open
        self.assertEqual(plane.streams(until_open=1), {"open": 1, "ended": 0})
        call.cancel()
        self.assertEqual(plane.streams(until_open=0), {"open": 0, "ended": 1})


if __name__ == "__main__":
    unittest.main()
