"""The AuthRPCGenerator build plugin as a consumer uses it: Examples/GeneratedClient (its own
package, depending on this one by path) is built with `swift build`, run against the sandbox,
and built again with a broken config, a missing protoc and a missing import, whose errors must
name the file and what to fix.

    .venv/bin/python -m unittest discover -s Tests/BuildPlugin -p 'test_*.py'

The example is copied to .build/example-generated-client/package (its dependency path made
absolute), so its build stays out of the source tree and repeated runs are incremental.
"""

import os
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
        self.assertIn("struct Grpc_Testing_TestServiceClient: Sendable {", client)
        self.assertIn("/// Not generated: `StreamingOutputCall` (server streaming).", client)
        self.assertIn("    @available(*, deprecated)\n    nonisolated(nonsending) func whoAmI(", client)
        self.assertIn("struct Sandbox_Identity_WhoAmIRequest", self.generated("sandbox_identity.pb.swift"))
        self.assertIn("declares no services", self.generated("sandbox_identity.authrpc.swift"))

    def broken_build(self, path, edit):
        """Builds with `edit(text)` applied to the file at `path`; restores it afterwards."""
        with open(path) as handle:
            original = handle.read()
        try:
            with open(path, "w") as handle:
                handle.write(edit(original))
            result = swift_build()
        finally:
            with open(path, "w") as handle:
                handle.write(original)
        self.assertNotEqual(result.returncode, 0, "the broken build succeeded")
        return result.stdout + result.stderr

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


if __name__ == "__main__":
    unittest.main()
