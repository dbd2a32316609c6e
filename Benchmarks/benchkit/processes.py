"""Building the bench binaries and running processes: clients measured by wait4(2), servers
that print their ports and live until their stdin closes."""

import os
import selectors
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
CXX_SERVER_SOURCE = os.path.join(HERE, "CxxServer", "bench_server.cc")
CXX_CLIENT_SOURCE = os.path.join(HERE, "CxxClient", "bench_client.cc")
COUNTER_INCLUDE = os.path.join(HERE, "Sources", "MallocCounter", "include")
PROTO = os.path.join(ROOT, "Protos", "grpc", "testing", "interop.proto")


def build_swift():
    """Builds the Benchmarks package in release mode (reusing Benchmarks/.build) and returns
    its binary directory."""
    command = ["swift", "build", "-c", "release", "--package-path", HERE]
    subprocess.run(command, check=True)
    return subprocess.run(command + ["--show-bin-path"], check=True, capture_output=True, text=True).stdout.strip()


def build_cxx_server():
    """Builds the gRPC C++ bench server into Benchmarks/.build/cxx-server (never committed),
    again only when its source or the proto changed. Returns the binary's path."""
    return build_cxx("cxx-server", CXX_SERVER_SOURCE, "bench_server", "server")


def build_cxx_client():
    """Builds gRPC C-core's own bench client (C++ callback and completion-queue APIs) into
    Benchmarks/.build/cxx-client (never committed), again only when its source, the malloc
    counter's header or the proto changed. Returns the binary's path."""
    return build_cxx("cxx-client", CXX_CLIENT_SOURCE, "bench_client", "client", include=COUNTER_INCLUDE,
                     extra_inputs=[os.path.join(COUNTER_INCLUDE, "MallocCounter.h")])


def build_cxx(folder, source, name, what, include=None, extra_inputs=()):
    """protoc + grpc_cpp_plugin + g++ + pkg-config (grpc++, protobuf) into Benchmarks/.build/FOLDER."""
    out = os.path.join(HERE, ".build", folder)
    binary = os.path.join(out, name)
    inputs = [source, PROTO, __file__, *extra_inputs]
    if os.path.exists(binary) and os.path.getmtime(binary) > max(os.path.getmtime(path) for path in inputs):
        return binary
    for tool in ("protoc", "grpc_cpp_plugin", "g++", "pkg-config"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} is missing: run `Scripts/install-deps.sh --bench` (Debian: libgrpc++-dev protobuf-compiler-grpc)")
    os.makedirs(out, exist_ok=True)
    print(f"building the gRPC C++ bench {what} (once; about a minute)", flush=True)
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "Protos"), f"--cpp_out={out}", f"--grpc_out={out}",
                    f"--plugin=protoc-gen-grpc={shutil.which('grpc_cpp_plugin')}", PROTO], check=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"],
                           check=True, capture_output=True, text=True).stdout.split()
    generated = os.path.join(out, "grpc", "testing")
    includes = ["-I", out] + (["-I", include] if include else [])
    subprocess.run(["g++", "-O2", "-std=c++17", *includes, source,
                    os.path.join(generated, "interop.pb.cc"), os.path.join(generated, "interop.grpc.pb.cc"),
                    *flags, "-o", binary + ".partial"], check=True)
    os.replace(binary + ".partial", binary)
    return binary


def run_checked(command, timeout, env=None):
    """Runs `command` to completion; returns (stdout, user+sys CPU seconds, peak RSS in KiB,
    context switches) of that process alone, from wait4(2). Raises with the tail of stderr when
    it fails."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True,
                                   env=None if env is None else {**os.environ, **env})
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                raise RuntimeError(f"{' '.join(command)} did not finish in {timeout} s")
            time.sleep(0.01)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{err.read()[-3000:]}")
        return out.read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss, usage.ru_nvcsw + usage.ru_nivcsw


class Server:
    """A bench server: prints `BENCH SERVER READY <h2c port> <tls port>`, stops when stdin closes."""

    def __init__(self, name, command):
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=60):
                self.close()
                raise RuntimeError(f"{name} did not start within 60 s")
        words = self.process.stdout.readline().split()
        if words[:3] != ["BENCH", "SERVER", "READY"]:
            self.close()
            raise RuntimeError(f"{name} did not start")
        self.ports = {"h2c": int(words[3]), "tls": int(words[4])}

    def close(self):
        stop_child(self.process)


def stop_child(process):
    """Ends a child that exits when its standard input closes: closes it, and kills the child if
    it is still there 10 s later."""
    if process.poll() is None:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
