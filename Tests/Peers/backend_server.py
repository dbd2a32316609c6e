#!/usr/bin/env python3
"""One backend of a service for the channel tests: grpc.testing.TestService on grpcio, listening on
the one address the test names (`127.0.0.2:PORT`, `unix:/path`, `unix-abstract:name`), recording
every call it runs.

Each UnaryCall carrying `x-call-id` metadata appends that id, one per line, to --ids-file as soon
as the handler starts (before any `x-delay-ms` wait), so a test can prove which backend ran which
call and that no call ran twice, even on a backend killed while calls were in flight. The answer's
`username` is the backend's --name. The file is opened in append mode: a backend restarted on
the same address may be given the same file or a new one.

It also serves `authrpc.testing.Stream/Echo`, a bidirectional stream of raw bytes for the
transport's streaming tests (see `make_stream_handler`).

Plaintext HTTP/2 only. Writes `<state-dir>/backend.json` ({"pid", "name", "listen", "port",
"ids_file"}), prints `BACKEND READY <path>` once listening, and exits on SIGTERM/SIGINT, or with
--exit-with-stdin when standard input reaches EOF.
"""

import argparse
import json
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Examples", "Sandbox"))
import test_service  # noqa: E402  (the sandbox's proto loader)

ID_KEY = "x-call-id"
DELAY_KEY = "x-delay-ms"
MAX_DELAY_MS = 60_000


class Recorder:
    """Appends ids to the ids file; one lock, so lines from the server's threads never interleave."""

    def __init__(self, path):
        self._lock = threading.Lock()
        self._file = open(path, "a", buffering=1, encoding="ascii")

    def record(self, call_id):
        with self._lock:
            self._file.write(call_id + "\n")

    def close(self):
        with self._lock:
            self._file.close()


def printable_id(value):
    """Ids are the tests' own (letters, digits, '-', '_'); anything else is not recorded verbatim."""
    if 0 < len(value) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_") for c in value):
        return value
    return "invalid"


def make_servicer(pb, pbg, name, recorder):
    class Servicer(pbg.TestServiceServicer):
        def UnaryCall(self, request, context):
            delay_ms = 0
            for key, value in context.invocation_metadata() or ():
                if key == ID_KEY:
                    recorder.record(printable_id(value))
                elif key == DELAY_KEY and value.isdigit():
                    delay_ms = min(int(value), MAX_DELAY_MS)
            if delay_ms:
                time.sleep(delay_ms / 1000)
            return pb.SimpleResponse(username=name,
                                     payload=pb.Payload(body=b"\0" * min(max(request.response_size, 0), 1024)))

        def EmptyCall(self, request, context):
            return pb.Empty()

    return Servicer()


STREAM_MAX_REPLY = 64 << 20
STREAM_MAX_FLOOD = 100_000


def make_stream_handler(recorder):
    """`authrpc.testing.Stream/Echo`: bidirectional, raw bytes (no protobuf) each way.

    Every request message is echoed back as it came, except these commands (ASCII):
    `big:N` answers one message of N bytes of `a`; `flood:COUNT:SIZE` answers COUNT messages of
    SIZE bytes, the i-th filled with byte i % 256; `fail:CODE:TEXT` ends the call with that status.
    When the client half-closes, a last message `end:<messages received>` and status OK. With
    `x-call-id` metadata, `<id>:open`, `<id>:flooded:<count>` after each flood message written,
    `<id>:halfclosed` once the answer to a half-close was written, and `<id>:cancelled` go to the
    ids file, so a test sees the server's side.
    """
    def echo(request_iterator, context):
        call_id = None
        for key, value in context.invocation_metadata() or ():
            if key == ID_KEY:
                call_id = printable_id(value)
        ended = threading.Event()  # set once the handler ends the call itself
        if call_id:
            recorder.record(call_id + ":open")
            context.add_callback(lambda: ended.is_set() or recorder.record(call_id + ":cancelled"))
        received = 0
        for message in request_iterator:
            received += 1
            if message.startswith(b"big:"):
                yield b"a" * min(int(message[4:]), STREAM_MAX_REPLY)
            elif message.startswith(b"flood:"):
                count, size = (int(part) for part in message[6:].split(b":"))
                for index in range(min(count, STREAM_MAX_FLOOD)):
                    yield bytes([index % 256]) * min(size, STREAM_MAX_REPLY)
                    if call_id:
                        recorder.record(f"{call_id}:flooded:{index + 1}")
            elif message.startswith(b"fail:"):
                code, text = message[5:].split(b":", 1)
                status = next(s for s in grpc.StatusCode if s.value[0] == int(code))
                ended.set()
                context.abort(status, text.decode("ascii", "replace"))
            else:
                yield message
        # The request iterator also ends when the client resets the stream (grpcio may see the
        # reset as the end of the requests before it marks the call cancelled): only a written
        # answer proves a half-close. A cancelled call never resumes here, and its callback records
        # the cancel.
        yield f"end:{received}".encode("ascii")
        ended.set()
        if call_id:
            recorder.record(call_id + ":halfclosed")

    return grpc.method_handlers_generic_handler(
        "authrpc.testing.Stream", {"Echo": grpc.stream_stream_rpc_method_handler(echo)})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", required=True, help="where backend.json is written")
    parser.add_argument("--listen", required=True,
                        help="the address, as grpcio takes it: 127.0.0.2:PORT (0: any free port), unix:/path, unix-abstract:name")
    parser.add_argument("--name", required=True, help="what the backend answers in SimpleResponse.username")
    parser.add_argument("--ids-file", help="where every x-call-id that ran is appended (default <state-dir>/ids)")
    parser.add_argument("--workers", type=int, default=128, help="grpcio handler threads (calls held at once)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input reaches EOF")
    arguments = parser.parse_args(argv)
    host = arguments.listen.rsplit(":", 1)[0]
    if not (arguments.listen.startswith(("unix:", "unix-abstract:")) or host.startswith("127.") or host == "[::1]"):
        parser.error("--listen must be a loopback address or a unix socket")
    if not 1 <= arguments.workers <= 1000:
        parser.error("--workers must be from 1 to 1000")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    os.makedirs(arguments.state_dir, exist_ok=True)
    ids_file = arguments.ids_file or os.path.join(arguments.state_dir, "ids")
    pb, pbg = test_service.load_protos(tempfile.mkdtemp(prefix="backend-protos-"))
    recorder = Recorder(ids_file)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=arguments.workers),
                         maximum_concurrent_rpcs=None,
                         options=[("grpc.so_reuseport", 0), ("grpc.max_concurrent_streams", 1000)])
    pbg.add_TestServiceServicer_to_server(make_servicer(pb, pbg, arguments.name, recorder), server)
    server.add_generic_rpc_handlers((make_stream_handler(recorder),))
    port = server.add_insecure_port(arguments.listen)
    if port == 0:
        print(f"cannot listen on {arguments.listen}", file=sys.stderr)
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

    info = {"pid": os.getpid(), "name": arguments.name, "listen": arguments.listen, "port": port,
            "ids_file": ids_file}
    path = os.path.join(arguments.state_dir, "backend.json")
    with open(path + ".partial", "w") as handle:
        json.dump(info, handle)
    os.replace(path + ".partial", path)
    print(f"BACKEND READY {path}", flush=True)
    stopped.wait()
    server.stop(grace=None).wait()
    recorder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
