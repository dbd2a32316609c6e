#!/usr/bin/env python3
"""A scriptable hostile OAuth peer: an HTTP/1.1 server that answers exactly what a test scripted.

The sandbox's Authlib issuer is a correct authorization server, so it cannot send what a hostile
or broken one would: an `expires_in` of NaN, a `token_type` of "mac", a 1.2 MB access token, a
redirect of the token request elsewhere, an endless body, an answer that trickles in. This server
can. A test registers a *script* (one HTTP answer, byte for byte) and points a token, device or
discovery endpoint at the URL it gets back; the server plays the script for every request to that
URL and counts what it saw and what it managed to send. See README.md beside this file.

Only loopback addresses are accepted; it is a test peer, never a service.
"""

import argparse
import ipaddress
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.parse

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024
READY_FILE = "hostile.json"
REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 303: "See Other", 307: "Temporary Redirect",
           308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           500: "Internal Server Error", 503: "Service Unavailable"}


class ScriptError(Exception):
    """A script that cannot be played; the message says which field is wrong."""


def validate_script(script):
    """Checks a script's fields and returns it; raises ScriptError naming the first bad one."""
    if not isinstance(script, dict):
        raise ScriptError("a script is a JSON object")
    known = {"status", "reason", "headers", "body", "repeat", "content_length", "delay_ms", "drip_ms", "chunk_bytes",
             "head_drip_ms", "filler_headers", "raw"}
    unknown = set(script) - known
    if unknown:
        raise ScriptError(f"unknown script fields: {sorted(unknown)}")
    status = script.get("status", 200)
    if not isinstance(status, int) or not 100 <= status <= 599:
        raise ScriptError("status must be an integer between 100 and 599")
    headers = script.get("headers", [])
    if not isinstance(headers, list) or not all(isinstance(h, list) and len(h) == 2 and all(isinstance(p, str) for p in h) for h in headers):
        raise ScriptError("headers must be a list of [name, value] string pairs")
    if "body" in script and "repeat" in script:
        raise ScriptError("body and repeat exclude each other")
    if "body" in script and not isinstance(script["body"], str):
        raise ScriptError("body must be a string")
    if "repeat" in script:
        repeat = script["repeat"]
        if not isinstance(repeat, dict) or not isinstance(repeat.get("fill"), str) or not repeat["fill"] \
                or not isinstance(repeat.get("count"), int) or not 0 <= repeat["count"] <= 1 << 30:
            raise ScriptError("repeat is {prefix, fill (non-empty), count (0...2^30), suffix}")
    length = script.get("content_length", "exact")
    if length not in ("exact", "omit", "chunked") and not (isinstance(length, int) and length >= 0):
        raise ScriptError('content_length is "exact", "omit", "chunked" or a non-negative integer')
    if "raw" in script and not isinstance(script["raw"], str):
        raise ScriptError("raw must be a string")
    filler = script.get("filler_headers", {"count": 0, "bytes": 0})
    if not isinstance(filler, dict) or not all(isinstance(filler.get(k), int) for k in ("count", "bytes")) \
            or not 0 <= filler["count"] <= 100_000 or not 0 <= filler["bytes"] <= 1 << 20:
        raise ScriptError("filler_headers is {count (0...100000), bytes (0...2^20)}")
    for name, limit in (("delay_ms", 60_000), ("drip_ms", 10_000), ("head_drip_ms", 10_000)):
        value = script.get(name, 0)
        if not isinstance(value, (int, float)) or not 0 <= value <= limit:
            raise ScriptError(f"{name} must be between 0 and {limit}")
    chunk = script.get("chunk_bytes", 65536)
    if not isinstance(chunk, int) or not 1 <= chunk <= 1 << 20:
        raise ScriptError("chunk_bytes must be between 1 and 2^20")
    return script


class Scripts:
    """Registered scripts and what happened to each, behind one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.scripts = {}
        self.stats = {}

    def add(self, script):
        identifier = "s-" + secrets.token_hex(6)
        with self.lock:
            self.scripts[identifier] = script
            self.stats[identifier] = {"hits": 0, "bytes_sent": 0, "aborted": 0, "completed": 0, "requests": []}
        return identifier

    def get(self, identifier):
        with self.lock:
            return self.scripts.get(identifier)

    def record_hit(self, identifier, method, path, body, header_names):
        form_keys = []
        if body:
            try:
                form_keys = [key for key, _ in urllib.parse.parse_qsl(body.decode("ascii"), keep_blank_values=True)]
            except (UnicodeDecodeError, ValueError):
                form_keys = []
        with self.lock:
            stats = self.stats[identifier]
            stats["hits"] += 1
            # Names only: the values may be tokens or secrets.
            stats["requests"].append({"method": method, "path": path, "body_bytes": len(body), "form_keys": form_keys,
                                      "header_names": header_names})

    def add_sent(self, identifier, count):
        with self.lock:
            self.stats[identifier]["bytes_sent"] += count

    def finish(self, identifier, aborted):
        with self.lock:
            self.stats[identifier]["aborted" if aborted else "completed"] += 1

    def snapshot(self, identifier):
        with self.lock:
            stats = self.stats.get(identifier)
            return json.loads(json.dumps(stats)) if stats is not None else None


def body_parts(script):
    """The body as a sequence of byte strings (a repeated fill is never built in one piece)."""
    if "repeat" in script:
        repeat = script["repeat"]
        yield repeat.get("prefix", "").encode()
        fill = repeat["fill"].encode()
        remaining = repeat["count"]
        block = max(1, 65536 // len(fill))
        while remaining > 0:
            count = min(block, remaining)
            yield fill * count
            remaining -= count
        yield repeat.get("suffix", "").encode()
    else:
        yield script.get("body", "").encode()


def body_length(script):
    if "repeat" in script:
        repeat = script["repeat"]
        return len(repeat.get("prefix", "").encode()) + len(repeat["fill"].encode()) * repeat["count"] + len(repeat.get("suffix", "").encode())
    return len(script.get("body", "").encode())


class Server:
    def __init__(self, host):
        self.host = host
        self.scripts = Scripts()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(256)
        self.port = self.listener.getsockname()[1]
        bracketed = f"[{host}]" if ":" in host else host
        self.url = f"http://{bracketed}:{self.port}"

    def serve_forever(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(connection,), name="hostile-connection", daemon=True).start()

    # -- one connection, one request ---------------------------------------------------------

    def handle(self, connection):
        with connection:
            connection.settimeout(30)
            try:
                request = read_request(connection)
            except (OSError, ValueError) as error:
                print(f"hostile: unreadable request: {error}", file=sys.stderr)
                return
            if request is None:
                return
            method, target, body, header_names = request
            path = urllib.parse.urlsplit(target).path
            try:
                if path == "/scripts" and method == "POST":
                    self.register(connection, body)
                elif path.startswith("/scripts/") and method == "GET":
                    self.report(connection, path[len("/scripts/"):])
                elif path.startswith("/s/"):
                    identifier = path[len("/s/"):].split("/", 1)[0]
                    script = self.scripts.get(identifier)
                    if script is None:
                        send_json(connection, 404, {"error": "no such script"})
                    else:
                        self.scripts.record_hit(identifier, method, path, body, header_names)
                        self.play(connection, identifier, script)
                else:
                    send_json(connection, 404, {"error": "not found"})
            except OSError:
                pass

    def register(self, connection, body):
        try:
            script = validate_script(json.loads(body.decode("utf-8")))
        except (ValueError, UnicodeDecodeError, ScriptError) as error:
            send_json(connection, 400, {"error": str(error)})
            return
        identifier = self.scripts.add(script)
        send_json(connection, 200, {"id": identifier, "path": f"/s/{identifier}", "url": f"{self.url}/s/{identifier}"})

    def report(self, connection, identifier):
        stats = self.scripts.snapshot(identifier)
        if stats is None:
            send_json(connection, 404, {"error": "no such script"})
        else:
            send_json(connection, 200, stats)

    def play(self, connection, identifier, script):
        if script.get("delay_ms"):
            time.sleep(script["delay_ms"] / 1000)
        if "raw" in script:
            # Bytes as given (Latin-1), with no framing of ours: for answers no formatter would write.
            aborted = False
            try:
                self.drip(connection, identifier, script["raw"].encode("latin-1"), script.get("head_drip_ms", 0))
                connection.shutdown(socket.SHUT_WR)
            except OSError:
                aborted = True
            self.scripts.finish(identifier, aborted)
            return
        status = script.get("status", 200)
        reason = script.get("reason", REASONS.get(status, "Status"))
        headers = list(script.get("headers", []))
        if not any(name.lower() == "content-type" for name, _ in headers):
            headers.append(["Content-Type", "application/json"])
        length = script.get("content_length", "exact")
        chunked = length == "chunked"
        if length == "exact":
            headers.append(["Content-Length", str(body_length(script))])
        elif chunked:
            headers.append(["Transfer-Encoding", "chunked"])
        elif length != "omit":
            headers.append(["Content-Length", str(length)])
        headers.append(["Connection", "close"])
        filler = script.get("filler_headers", {"count": 0, "bytes": 0})
        head = (f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)).encode("latin-1")
        aborted = False
        try:
            self.drip(connection, identifier, head, script.get("head_drip_ms", 0))
            line = b"X-Filler: " + b"f" * filler["bytes"] + b"\r\n"
            for _ in range(filler["count"]):
                self.send(connection, identifier, line)
            self.send(connection, identifier, b"\r\n")
            chunk_bytes = script.get("chunk_bytes", 65536)
            drip = script.get("drip_ms", 0) / 1000
            for part in body_parts(script):
                for start in range(0, len(part), chunk_bytes):
                    piece = part[start:start + chunk_bytes]
                    # Chunked: each piece is one chunk (hex size, CR LF, data, CR LF).
                    self.send(connection, identifier, b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                    if drip:
                        time.sleep(drip)
            if chunked:
                self.send(connection, identifier, b"0\r\nX-Trailer: t\r\n\r\n")
            connection.shutdown(socket.SHUT_WR)
        except OSError:
            aborted = True
        self.scripts.finish(identifier, aborted)

    def drip(self, connection, identifier, data, pause_ms):
        """Sends `data` whole, or a byte at a time `pause_ms` apart."""
        if not pause_ms:
            self.send(connection, identifier, data)
            return
        for index in range(len(data)):
            self.send(connection, identifier, data[index:index + 1])
            time.sleep(pause_ms / 1000)

    def send(self, connection, identifier, data):
        view = memoryview(data)
        while view:
            sent = connection.send(view)
            self.scripts.add_sent(identifier, sent)
            view = view[sent:]


def read_request(connection):
    """(method, target, body, header names) of one HTTP/1.1 request, or None when the client left first."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        buffer += chunk
        if len(buffer) > MAX_HEAD_BYTES:
            raise ValueError("request head over 64 KiB")
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise ValueError("malformed request line")
    length = 0
    names = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        names.append(name.strip())
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if not 0 <= length <= MAX_BODY_BYTES:
        raise ValueError("request body too large")
    body = rest
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return parts[0], parts[1], body[:length], names


def send_json(connection, status, document):
    body = json.dumps(document).encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    connection.sendall(head + body)


def is_loopback(host):
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description="Scriptable hostile OAuth peer (HTTP/1.1) for swift-authrpc's tests.")
    parser.add_argument("--state-dir", required=True, help="where hostile.json is written")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input reaches EOF")
    arguments = parser.parse_args(argv)
    if not is_loopback(arguments.host):
        parser.error(f"--host {arguments.host!r} is not a loopback address")

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if arguments.exit_with_stdin:
        def watch_stdin():
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            stop.set()
        threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()

    server = Server(arguments.host)
    threading.Thread(target=server.serve_forever, name="hostile-accept", daemon=True).start()
    state_dir = os.path.abspath(arguments.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, READY_FILE)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w") as handle:
        json.dump({"pid": os.getpid(), "host": arguments.host, "port": server.port, "url": server.url}, handle)
    os.replace(temporary, path)
    print(f"HOSTILE READY {path}", flush=True)
    while not stop.wait(0.5):
        pass
    server.listener.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
