"""The AuthRPCGenerator build plugin as a consumer uses it: Examples/GeneratedClient (its own
package, depending on this one by path) is built with `swift build`, run against the sandbox,
and built again with a broken config, a missing protoc, a missing import, paths protoc would
misread and a bad service config, whose errors must name the file and what to fix; and with
protos imported through "importPaths" and a service config, which must build.

    .venv/bin/python -m unittest discover -s Tests/BuildPlugin -p 'test_*.py'

The example is copied to .build/example-generated-client/package (its dependency path made
absolute), so its build stays out of the source tree and repeated runs are incremental.
"""

import os
import shutil
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "Examples", "GeneratedClient")
WORK = os.path.join(ROOT, ".build", "example-generated-client")
PACKAGE = os.path.join(WORK, "package")
SCRATCH = os.path.join(WORK, "build")
TARGET = os.path.join(PACKAGE, "Sources", "GeneratedClient")
CONFIG = os.path.join(TARGET, "authrpc-swift-config.json")
PROTO = os.path.join(TARGET, "sandbox", "test_service.proto")
IDENTITY = os.path.join(TARGET, "sandbox", "identity.proto")
BUILD_TIMEOUT = 1500

sys.path.insert(0, os.path.join(ROOT, "Examples", "Sandbox"))
from test_sandbox import SandboxProcess  # noqa: E402

TOKEN = "example-package-token-" + os.urandom(6).hex()
first_build = None


def swift_build():
    # Touching the manifest makes SwiftPM plan again, which is when build-tool plugins run:
    # without it an edited config or .proto with the same set of files reuses the cached plan.
    os.utime(os.path.join(PACKAGE, "Package.swift"))
    return subprocess.run(
        ["swift", "build", "--package-path", PACKAGE, "--scratch-path", SCRATCH],
        capture_output=True, text=True, timeout=BUILD_TIMEOUT)


def sync_copy():
    """Makes PACKAGE a copy of the example whose manifest depends on this checkout by absolute path.

    Only files whose content differs are written, and the copy's Package.resolved is kept, so a
    second run resolves nothing and rebuilds nothing that did not change."""
    wanted = {}
    for directory, subdirectories, files in os.walk(EXAMPLE):
        subdirectories[:] = [name for name in subdirectories if name not in (".build", ".swiftpm")]
        for name in files:
            if name == "Package.resolved":
                continue
            source = os.path.join(directory, name)
            with open(source, "rb") as handle:
                wanted[os.path.relpath(source, EXAMPLE)] = handle.read()
    manifest = wanted.get("Package.swift", b"")
    if b'path: "../.."' not in manifest:
        raise AssertionError('Examples/GeneratedClient/Package.swift no longer depends on swift-authrpc by path "../.."')
    wanted["Package.swift"] = manifest.replace(b'path: "../.."', b'path: "' + ROOT.encode() + b'"')

    for directory, subdirectories, files in os.walk(PACKAGE, topdown=False):
        for name in files:
            relative = os.path.relpath(os.path.join(directory, name), PACKAGE)
            if relative not in wanted and relative != "Package.resolved":
                os.remove(os.path.join(directory, name))
    for relative, content in wanted.items():
        target = os.path.join(PACKAGE, relative)
        try:
            with open(target, "rb") as handle:
                if handle.read() == content:
                    continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(content)


def setUpModule():
    global first_build
    sync_copy()
    first_build = swift_build()


class ExamplePackageTest(unittest.TestCase):
    def setUp(self):
        self.assertEqual(first_build.returncode, 0, f"the example package did not build:\n{first_build.stdout}\n{first_build.stderr}")

    def binary(self):
        path = subprocess.run(["swift", "build", "--package-path", PACKAGE, "--scratch-path", SCRATCH, "--show-bin-path"],
                              capture_output=True, text=True, check=True).stdout.strip()
        return os.path.join(path, "GeneratedClient")

    def generated(self, name):
        for directory, _, files in os.walk(os.path.join(SCRATCH, "plugins", "outputs")):
            if name in files:
                with open(os.path.join(directory, name)) as handle:
                    return handle.read()
        self.fail(f"the plugin generated no {name}")

    def test_the_example_calls_the_sandbox_over_tls_with_a_token(self):
        sandbox = SandboxProcess("--static-token", TOKEN)
        try:
            info = sandbox.wait_ready()
            run = lambda token: subprocess.run(  # noqa: E731
                [self.binary(), f"localhost:{info['grpc_tls_port']}", info["ca_cert"]],
                env={**os.environ, "AUTHRPC_TOKEN": token}, capture_output=True, text=True, timeout=60)
            good = run(TOKEN)
            self.assertEqual(good.returncode, 0, good.stderr)
            self.assertIn(f"Used scope: {info['scope']} on behalf of user {info['user']}", good.stdout)
            self.assertIn("Called /grpc.testing.TestService/UnaryCall (grpc-status 0)", good.stdout)
            wrong = run("not-" + TOKEN)
            self.assertEqual(wrong.returncode, 1)
            self.assertIn("call failed: UNAUTHENTICATED: invalid or expired access token", wrong.stderr)
            self.assertNotIn(TOKEN, wrong.stderr + wrong.stdout)
        finally:
            sandbox.close()

    def test_the_plugin_generates_messages_and_a_client_per_proto(self):
        client = self.generated("sandbox_test_service.authrpc.swift")
        self.assertIn("struct Grpc_Testing_TestServiceClient: Swift.Sendable {", client)
        self.assertIn("/// Not generated: `StreamingOutputCall` (server streaming).", client)
        self.assertIn("    @available(*, deprecated)\n    nonisolated(nonsending) func whoAmI(", client)
        self.assertIn("struct Sandbox_Identity_WhoAmIRequest", self.generated("sandbox_identity.pb.swift"))
        self.assertIn("declares no services", self.generated("sandbox_identity.authrpc.swift"))

    def broken_build(self, path, edit):
        """Builds with `edit(text)` applied to the file at `path`; restores it afterwards."""
        result = self.edited_build({path: edit})
        self.assertNotEqual(result.returncode, 0, "the broken build succeeded")
        return result.stdout + result.stderr

    def edited_build(self, edits, new_files=None):
        """Builds with each `edit(text)` applied to its file and `new_files` (path: text) written;
        restores everything afterwards. Returns the build's result."""
        originals = {}
        created = []
        try:
            for path, edit in edits.items():
                with open(path) as handle:
                    originals[path] = handle.read()
                with open(path, "w") as handle:
                    handle.write(edit(originals[path]))
            for path, text in (new_files or {}).items():
                os.makedirs(os.path.dirname(path), exist_ok=True)
                created.append(path)
                with open(path, "w") as handle:
                    handle.write(text)
            return swift_build()
        finally:
            for path, text in originals.items():
                with open(path, "w") as handle:
                    handle.write(text)
            for path in created:
                os.remove(path)
            shutil.rmtree(os.path.join(PACKAGE, "Vendor"), ignore_errors=True)
            shutil.rmtree(os.path.join(PACKAGE, "Vendor:split"), ignore_errors=True)

    def test_an_unknown_config_key_names_the_config_and_the_keys_there_are(self):
        output = self.broken_build(CONFIG, lambda text: text.replace('"visibility"', '"visiblity"'))
        self.assertIn(f'error: {CONFIG} has an unknown key "visiblity": use only "messages", "clients", "visibility", '
                      '"importPaths", "protocPath", "moduleMappings"', output)

    def test_a_missing_protoc_names_the_config_and_how_to_get_one(self):
        output = self.broken_build(CONFIG, lambda text: text.replace('"messages": true', '"protocPath": "/nonexistent/protoc", "messages": true'))
        self.assertIn(f'error: {CONFIG} names "protocPath": "/nonexistent/protoc", which is not an executable file: '
                      "point it at protoc (e.g. /usr/bin/protoc), or remove the key to use protoc on PATH", output)

    def test_an_import_not_found_names_the_line_and_the_config_key(self):
        output = self.broken_build(PROTO, lambda text: text.replace(
            'import "sandbox/identity.proto";', 'import "sandbox/identity.proto";\nimport "google/api/annotations.proto";'))
        self.assertIn(f'error: {PROTO}:9 imports "google/api/annotations.proto", which is in none of the import paths', output)
        self.assertIn(f'add the directory that contains google/api/annotations.proto to "importPaths" in {CONFIG}', output)


    def test_protos_reached_through_import_paths_are_generated_too(self):
        # A vendored proto (and the one it imports) outside the target, found through
        # "importPaths": their types must exist at compile time.
        shared = os.path.join(PACKAGE, "Vendor", "acme", "shared.proto")
        base = os.path.join(PACKAGE, "Vendor", "acme", "base.proto")
        result = self.edited_build(
            {CONFIG: lambda text: text.replace('"messages": true', '"importPaths": ["../../Vendor"], "messages": true'),
             IDENTITY: lambda text: text.replace('package sandbox.identity;', 'package sandbox.identity;\n\nimport "acme/shared.proto";')
             .replace("bool fill_scope = 5;", "bool fill_scope = 5;\n  acme.Shared shared = 6;")},
            {shared: 'syntax = "proto3";\npackage acme;\nimport "acme/base.proto";\n'
                     '// Uses /* inside a line comment, which once hid the import below from the plugin.\n'
                     'message Shared { acme.Base base = 1; }\n',
             base: 'syntax = "proto3";\npackage acme;\nmessage Base { string id = 1; }\n'})
        self.assertEqual(result.returncode, 0, f"{result.stdout}\n{result.stderr}")
        self.assertIn("struct Acme_Shared", self.generated("acme_shared.pb.swift"))
        self.assertIn("struct Acme_Base", self.generated("acme_base.pb.swift"))

    def test_a_service_config_is_embedded_in_the_client_and_checked(self):
        path = os.path.join(TARGET, "service_config.json")
        text = '{"methodConfig": [{"name": [{"service": "grpc.testing.TestService"}], "timeout": "5s"}]}\n'
        config = lambda text: text.replace('"messages": true', '"serviceConfigs": ["service_config.json"], "messages": true')  # noqa: E731
        result = self.edited_build({CONFIG: config}, {path: text})
        self.assertEqual(result.returncode, 0, f"{result.stdout}\n{result.stderr}")
        self.assertIn("static let serviceConfigJSON: Swift.String = \"\"\"\n    {\"methodConfig\"",
                      self.generated("sandbox_test_service.authrpc.swift"))
        broken = self.edited_build({CONFIG: config}, {path: text.replace('"5s"', '"5 seconds"')})
        self.assertNotEqual(broken.returncode, 0)
        self.assertIn(f'ServiceConfig={path} is not a valid service config: methodConfig[0].timeout: must be a '
                      'duration such as "1.5s" (seconds, up to nine fractional digits, then s), not "5 seconds"',
                      broken.stdout + broken.stderr)

    def test_a_proto_name_protoc_would_read_as_a_flag_is_refused(self):
        evil = os.path.join(TARGET, "-evil.proto")
        result = self.edited_build({}, {evil: 'syntax = "proto3";\npackage evil;\nmessage E {}\n'})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(f'error: {evil} would be passed to protoc as "-evil.proto", which protoc reads as a flag or a '
                      'file of arguments', result.stdout + result.stderr)

    def test_an_import_path_protoc_would_split_is_refused(self):
        os.makedirs(os.path.join(PACKAGE, "Vendor:split"), exist_ok=True)
        output = self.broken_build(CONFIG, lambda text: text.replace(
            '"messages": true', '"importPaths": ["../../Vendor:split"], "messages": true'))
        self.assertIn(f'error: {CONFIG} needs the import path {PACKAGE}/Vendor:split as an import path, and protoc '
                      'splits import paths at ":"', output)


if __name__ == "__main__":
    unittest.main()
