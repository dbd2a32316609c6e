"""The xDS proto subset (Protos/xds_subset) against Envoy's real messages.

swift-authrpc decodes only the fields of the xDS v3 messages a proxyless client needs, from .proto
files of its own. This test compiles them with grpcio-tools' protoc and checks every message, field
and enum value they declare against the descriptors the PyPI package xds-protos ships (generated
from envoyproxy/data-plane-api): full names, field numbers, types, repeatedness, oneofs. A subset
that drifted from the real wire format would decode the wrong bytes; this makes it fail here. It
also checks that every type URL the Swift sources name is one of a real message.
"""

import importlib
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

import grpc_tools
from google.protobuf import descriptor_pb2, descriptor_pool

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUBSET = ROOT / "Protos" / "xds_subset"
SWIFT_SOURCES = ROOT / "Sources" / "AuthRPCXDS"

# The xds-protos modules that define the real messages (importing them fills the default pool).
UPSTREAM_MODULES = [
    "envoy.config.listener.v3.listener_pb2",
    "envoy.config.route.v3.route_pb2",
    "envoy.config.cluster.v3.cluster_pb2",
    "envoy.config.endpoint.v3.endpoint_pb2",
    "envoy.extensions.filters.network.http_connection_manager.v3.http_connection_manager_pb2",
    "envoy.extensions.filters.http.router.v3.router_pb2",
    "envoy.service.discovery.v3.ads_pb2",
    "envoy.service.discovery.v3.discovery_pb2",
]


def compile_subset():
    """The subset's FileDescriptorSet, as protoc reads the .proto files."""
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(ROOT / "Protos")) for p in SUBSET.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as directory:
        out = pathlib.Path(directory) / "subset.pb"
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'Protos'}", f"-I{include}",
             f"--descriptor_set_out={out}", *files],
            check=True,
        )
        descriptor_set = descriptor_pb2.FileDescriptorSet()
        descriptor_set.ParseFromString(out.read_bytes())
    return descriptor_set, files


def walk(package, messages, enums, prefix=""):
    """(full name, DescriptorProto) and (full name, EnumDescriptorProto) of every nested type."""
    for message in messages:
        name = f"{prefix or package}.{message.name}"
        yield "message", name, message
        yield from walk(package, message.nested_type, message.enum_type, name)
    for enum in enums:
        yield "enum", f"{prefix or package}.{enum.name}", enum


def mismatches(descriptor_set, pool):
    """Every way the subset differs from the real messages, in words, and the number of fields
    and enum values compared."""
    found, compared = [], 0
    for file in descriptor_set.file:
        if not file.name.startswith("xds_subset/"):
            continue
        for kind, full_name, subset in walk(file.package, file.message_type, file.enum_type):
            if kind == "enum":
                real = pool.FindEnumTypeByName(full_name)
                for value in subset.value:
                    compared += 1
                    upstream = real.values_by_name.get(value.name)
                    if upstream is None or upstream.number != value.number:
                        found.append(f"{full_name}.{value.name} = {value.number}: upstream has "
                                     f"{upstream.number if upstream else 'no such value'}")
                continue
            real = pool.FindMessageTypeByName(full_name)
            for field in subset.field:
                compared += 1
                where = f"{full_name}.{field.name}"
                upstream = real.fields_by_name.get(field.name)
                if upstream is None:
                    found.append(f"{where}: upstream has no such field")
                    continue
                repeated = field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
                upstream_type = upstream.message_type or upstream.enum_type
                subset_oneof = subset.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else None
                upstream_oneof = upstream.containing_oneof.name if upstream.containing_oneof else None
                for what, ours, theirs in [
                    ("number", field.number, upstream.number),
                    ("type", field.type, upstream.type),
                    ("repeated", repeated, upstream.is_repeated),
                    ("type name", field.type_name.lstrip(".") or None,
                     upstream_type.full_name if upstream_type else None),
                    ("oneof", subset_oneof, upstream_oneof),
                ]:
                    if ours != theirs:
                        found.append(f"{where}: {what} is {ours!r}, upstream {theirs!r}")
    return found, compared


class XdsProtoSubsetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for module in UPSTREAM_MODULES:
            importlib.import_module(module)
        cls.pool = descriptor_pool.Default()
        cls.descriptor_set, cls.files = compile_subset()

    def test_every_subset_file_is_compiled(self):
        names = {file.name for file in self.descriptor_set.file}
        self.assertEqual(len(self.files), 9)
        for file in self.files:
            self.assertIn(file, names)

    def test_every_field_and_enum_value_matches_the_real_messages(self):
        found, compared = mismatches(self.descriptor_set, self.pool)
        self.assertEqual(found, [])
        self.assertGreater(compared, 110)

    def test_a_drifted_subset_is_caught(self):
        # A copy of the subset with one wrong number, one wrong type, one field that is not
        # upstream's and one wrong enum value: each is reported.
        drifted = descriptor_pb2.FileDescriptorSet()
        drifted.CopyFrom(self.descriptor_set)
        for file in drifted.file:
            for message in file.message_type:
                if message.name == "RouteAction":
                    field = next(f for f in message.field if f.name == "max_stream_duration")
                    field.number = 35
                if message.name == "LocalityLbEndpoints":
                    field = next(f for f in message.field if f.name == "priority")
                    field.type = descriptor_pb2.FieldDescriptorProto.TYPE_INT32
                if message.name == "Listener":
                    message.field.add(name="made_up", number=99, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
            for enum in file.enum_type:
                if enum.name == "HealthStatus":
                    enum.value[1].number = 7
        found, _ = mismatches(drifted, self.pool)
        self.assertEqual(len(found), 4, found)
        self.assertTrue(any("RouteAction.max_stream_duration: number is 35, upstream 36" in f for f in found))
        self.assertTrue(any("LocalityLbEndpoints.priority: type" in f for f in found))
        self.assertTrue(any("Listener.made_up: upstream has no such field" in f for f in found))
        self.assertTrue(any("HealthStatus.HEALTHY = 7" in f for f in found))

    def test_the_type_urls_the_swift_sources_name_are_real_messages(self):
        urls = set()
        for path in SWIFT_SOURCES.rglob("*.swift"):
            if "/Generated/" in str(path):
                continue
            urls.update(re.findall(r'"type\.googleapis\.com/([A-Za-z0-9_.]+)"', path.read_text()))
        for name in sorted(urls):
            with self.subTest(type_url=name):
                self.pool.FindMessageTypeByName(name)
        self.assertTrue({"envoy.config.listener.v3.Listener", "envoy.config.route.v3.RouteConfiguration",
                         "envoy.config.cluster.v3.Cluster", "envoy.config.endpoint.v3.ClusterLoadAssignment"} <= urls)


if __name__ == "__main__":
    unittest.main()
