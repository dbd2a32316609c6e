#!/usr/bin/env python3
"""The chaos soak's server: grpc.testing.TestService/UnaryCall on grpcio, recording every call it runs.

Each UnaryCall carrying `x-soak-id` metadata appends that id, one per line, to --ids-file before
it answers, so the soak can prove that no request ran twice on the server (a client must never
replay a request the server may have processed). The file is opened in append mode, so a
restarted server (same --port, same file) adds to what the previous one recorded.

Plaintext HTTP/2 only, bound to loopback. Prints `SOAK SERVER READY <port>` once listening, and
exits on SIGTERM/SIGINT, or with --exit-with-stdin when standard input reaches EOF.
"""

import argparse
import logging
import os
import signal
import sys
import tempfile
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Examples", "Sandbox"))
import test_service  # noqa: E402  (the sandbox's proto loader, so both compile interop.proto the same way)

ID_KEY = "x-soak-id"


class Recorder:
    """Appends ids to the ids file; one lock, so lines from the server's threads never interleave."""

    def __init__(self, path):
        self._lock = threading.Lock()
        self._file = open(path, "a", buffering=1, encoding="ascii")

    def record(self, soak_id):
        with self._lock:
            self._file.write(soak_id + "\n")

    def close(self):
        with self._lock:
            self._file.close()


def make_servicer(pb, pbg, recorder):
    class Servicer(pbg.TestServiceServicer):
        def UnaryCall(self, request, context):
            for key, value in context.invocation_metadata() or ():
                if key == ID_KEY:
                    # Ids are the client's decimal counters: anything else is not recorded verbatim.
                    recorder.record(value if value.isdigit() and len(value) <= 20 else "invalid")
                    break
            return pb.SimpleResponse(payload=pb.Payload(body=b"\0" * min(request.response_size, 1024)))

        def EmptyCall(self, request, context):
            return pb.Empty()

    return Servicer()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="loopback port (fixed, so a restart binds it again)")
    parser.add_argument("--ids-file", required=True, help="where every x-soak-id that ran is appended")
    parser.add_argument("--workers", type=int, default=16, help="grpcio handler threads")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input reaches EOF")
    arguments = parser.parse_args(argv)
    if not 1 <= arguments.port <= 65535:
        parser.error("--port must be between 1 and 65535")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    pb, pbg = test_service.load_protos(tempfile.mkdtemp(prefix="soak-protos-"))
    recorder = Recorder(arguments.ids_file)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=arguments.workers),
                         options=[("grpc.so_reuseport", 0), ("grpc.max_concurrent_streams", 1000)])
    pbg.add_TestServiceServicer_to_server(make_servicer(pb, pbg, recorder), server)
    if server.add_insecure_port(f"127.0.0.1:{arguments.port}") == 0:
        print(f"cannot listen on 127.0.0.1:{arguments.port}", file=sys.stderr)
        return 1
    server.start()

    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    if arguments.exit_with_stdin:
        def watch_stdin():
            while os.read(sys.stdin.fileno(), 4096):
                pass
            stopped.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    print(f"SOAK SERVER READY {arguments.port}", flush=True)
    stopped.wait()
    server.stop(grace=None).wait()
    recorder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
