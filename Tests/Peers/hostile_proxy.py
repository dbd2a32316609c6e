#!/usr/bin/env python3
"""An HTTP CONNECT proxy gone wrong, for testing clients' proxy handling (Python standard library).

The CONNECT target's host names what the proxy does, so a test picks a behaviour by the target it
dials. README.md in this directory lists the scenarios. It never connects anywhere but this
machine's loopback: a target it does not know is answered 502.
"""

import argparse
import http
import json
import os
import select
import signal
import socket
import sys
import threading
import time
import urllib.parse

MAX_HEAD = 64 << 10
RELAY_SUFFIX = ".relay.test"
# Bounds on how long a hostile answer goes on, so a client that never gives up cannot keep a
# thread here forever.
ENDLESS_SECONDS = 30
TRICKLE_SECONDS = 120
SILENT_SECONDS = 120
# Bytes relayed from each client kept for /search (the rest is relayed, not kept).
KEPT_RELAYED_BYTES = 4 << 20


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


class Record:
    """What the proxy saw: each request's head, and for relayed tunnels the client's bytes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []

    def add(self, entry):
        with self.lock:
            self.requests.append(entry)

    def snapshot(self):
        with self.lock:
            return [{key: value for key, value in entry.items() if key != "relayed"} for entry in self.requests]

    def search(self, needle):
        with self.lock:
            return any(needle in entry.get("relayed", b"") for entry in self.requests)


RECORD = Record()


def read_head(sock):
    """The request head (up to the empty line) and what came after it; None if it never ended."""
    data = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            return None, b""
        try:
            chunk = sock.recv(4096)
        except OSError:
            return None, b""
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def status_answer(code, extra=b""):
    reason = http.HTTPStatus(code).phrase.encode()
    body = b"refused by the hostile proxy\n"
    authenticate = b'Proxy-Authenticate: Basic realm="hostile"\r\n' if code == 407 else b""
    return (b"HTTP/1.1 %d %s\r\n" % (code, reason) + authenticate + extra
            + b"Content-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


def send_for(sock, seconds, pieces, pause):
    """Sends each of `pieces` (an iterator) with `pause` between, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    sock.settimeout(5)
    for piece in pieces:
        if time.monotonic() > deadline:
            return
        try:
            sock.sendall(piece)
        except OSError:
            return
        if pause:
            time.sleep(pause)


def relay(client, upstream, entry, eager, leftover):
    """Copies bytes both ways until either side closes. With `eager`, the upstream's first bytes go
    out in the same write as the 200 answer."""
    answer = b"HTTP/1.1 200 Connection established\r\nVia: hostile-proxy\r\n\r\n"
    if eager:
        upstream.settimeout(5)
        try:
            first = upstream.recv(65536)
        except OSError:
            first = b""
        client.sendall(answer + first)
    else:
        client.sendall(answer)
    if leftover:
        upstream.sendall(leftover)
    kept = bytearray(leftover)
    sockets = [client, upstream]
    for sock in sockets:
        sock.setblocking(True)
        sock.settimeout(None)
    while True:
        readable, _, _ = select.select(sockets, [], [], 60)
        if not readable:
            break
        for sock in readable:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                return
            other = upstream if sock is client else client
            if sock is client and len(kept) < KEPT_RELAYED_BYTES:
                kept += data[:KEPT_RELAYED_BYTES - len(kept)]
                with RECORD.lock:
                    entry["relayed"] = bytes(kept)
            try:
                other.sendall(data)
            except OSError:
                return


def handle(client):
    try:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head, rest = read_head(client)
        if head is None:
            return
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        method, target = (parts + ["", ""])[:2]
        headers = [[name.strip(), value.strip()] for name, _, value in (line.partition(":") for line in lines[1:])]
        if method == "GET":
            query = urllib.parse.urlsplit(target)
            if query.path == "/requests":
                body = json.dumps({"requests": RECORD.snapshot()}).encode()
            elif query.path == "/search":
                needle = urllib.parse.parse_qs(query.query).get("needle", [""])[0].encode()
                body = json.dumps({"found": bool(needle) and RECORD.search(needle)}).encode()
            else:
                client.sendall(status_answer(404))
                return
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                           b"Connection: close\r\n\r\n" % len(body) + body)
            return
        entry = {"method": method, "target": target, "version": (parts + ["", "", ""])[2], "headers": headers,
                 "extra_bytes": len(rest)}
        RECORD.add(entry)
        if method != "CONNECT":
            client.sendall(status_answer(405))
            return
        host, _, port = target.rpartition(":")
        host = host.strip("[]").lower()
        scenario = host.split(".", 1)[0]
        if scenario.startswith("status-"):
            client.sendall(status_answer(int(scenario[len("status-"):])))
        elif scenario == "garbage":
            # Not HTTP, with an escape sequence a terminal would act on and no line end for a while.
            client.sendall(b"SSH-2.0-OpenSSH_9.2 \x1b[2J\x1b]0;owned\x07" + bytes(range(128, 256)) * 8 + b"\r\n")
        elif scenario == "endless-header":
            # One header field that never ends: no line end, ever.
            send_for(client, ENDLESS_SECONDS,
                     iter([b"HTTP/1.1 200 Connection established\r\nX-Endless: "] + [b"a" * 1000] * 100000), 0)
        elif scenario == "many-fields":
            client.sendall(b"HTTP/1.1 200 Connection established\r\n"
                           + b"".join(b"X-Field-%d: v\r\n" % i for i in range(500)) + b"\r\n")
        elif scenario == "trickle":
            answer = b"HTTP/1.1 200 Connection established\r\nX-Slow: " + b"s" * 1000
            send_for(client, TRICKLE_SECONDS, (answer[i:i + 1] for i in range(len(answer))), 1.0)
        elif scenario == "close-mid-answer":
            client.sendall(b"HTTP/1.1 200 Conn")
        elif scenario == "silent":
            client.settimeout(SILENT_SECONDS)
            try:
                while client.recv(4096):
                    pass
            except OSError:
                pass
        elif host.endswith(RELAY_SUFFIX) and port.isdigit():
            try:
                upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
            except OSError as error:
                client.sendall(status_answer(502, b"X-Error: %s\r\n" % str(error).encode()))
                return
            with upstream:
                upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                relay(client, upstream, entry, scenario == "eager", rest)
        else:
            client.sendall(status_answer(502))
    except Exception as error:  # a bug here must not take the proxy down
        log(f"connection failed: {error!r}")
    finally:
        try:
            client.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description="A hostile HTTP CONNECT proxy for client tests.")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--exit-with-stdin", action="store_true")
    arguments = parser.parse_args()

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
        threading.Thread(target=watch_stdin, daemon=True).start()

    listener = socket.socket(socket.AF_INET6 if ":" in arguments.host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((arguments.host, 0))
    listener.listen(256)
    port = listener.getsockname()[1]

    def accept():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    state_dir = os.path.abspath(arguments.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, "hostile_proxy.json")
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w") as handle_file:
        json.dump({"pid": os.getpid(), "host": arguments.host, "port": port}, handle_file)
    os.replace(temporary, path)
    print(f"PROXY READY {path}", flush=True)
    while not stop.wait(1.0):
        pass
    listener.close()


if __name__ == "__main__":
    main()
