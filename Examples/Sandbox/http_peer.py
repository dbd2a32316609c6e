"""A small threaded HTTP/1.1 server for the sandbox's federation peers (the OIDC provider, the
Security Token Service emulator, the AWS emulator): routes by method and path, bounded request
bodies, JSON and text answers, and a thread per connection. Listens on loopback only.
"""

import json
import logging
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 256 * 1024


class Request:
    """What a route gets: the method, the path and query, the headers, the body."""

    def __init__(self, handler, method, body):
        self.handler = handler
        self.method = method
        url = urllib.parse.urlsplit(handler.path)
        self.path = url.path
        self.raw_query = url.query
        self.query = {key: values[-1] for key, values in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        self.headers = handler.headers
        self.body = body
        self.peer = handler.client_address[0]

    def header(self, name):
        return self.headers.get(name)

    def form(self):
        """The body as an application/x-www-form-urlencoded form: name -> list of values."""
        return urllib.parse.parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)

    def json(self):
        try:
            document = json.loads(self.body or b"{}")
        except ValueError:
            return None
        return document


class Answer:
    """An HTTP answer. `trickle` sends the body a byte at a time, `delay` seconds apart."""

    def __init__(self, status, body=b"", content_type="application/json", headers=None, trickle=None):
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.content_type = content_type
        self.headers = headers or {}
        self.trickle = trickle

    @staticmethod
    def json(status, document, headers=None):
        return Answer(status, json.dumps(document), "application/json", headers)

    @staticmethod
    def text(status, text, content_type="text/plain"):
        return Answer(status, text, content_type)


class HTTPPeer:
    """Routes `(METHOD, path)` or `(METHOD, callable(path) -> bool)` to functions of a Request."""

    def __init__(self, name, host, port):
        self.name = name
        self.log = logging.getLogger(f"sandbox.{name}")
        self._routes = []
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self.host = host
        self.port = self._server.server_address[1]
        bracketed = f"[{host}]" if ":" in host else host
        #: `http://HOST:PORT`
        self.url = f"http://{bracketed}:{self.port}"
        self.authority = f"{bracketed}:{self.port}"
        self._thread = None

    def route(self, method, path, function):
        self._routes.append((method, path, function))

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.name, daemon=True)
        self._thread.start()
        return self.port

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def _dispatch(self, request):
        for method, path, function in self._routes:
            if method != request.method:
                continue
            if (callable(path) and path(request.path)) or path == request.path:
                return function(request)
        return Answer.json(404, {"error": "not_found", "error_description": f"no {request.method} {request.path}"})

    def _handler_class(self):
        peer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = f"sandbox-{peer.name}"
            sys_version = ""

            def log_message(self, format, *arguments):  # request lines never carry tokens here
                peer.log.info("%s %s", self.address_string(), format % arguments)

            def _handle(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 <= length <= MAX_BODY_BYTES:
                    return self._send(Answer.json(413, {"error": "invalid_request", "error_description": "body too large"}))
                body = self.rfile.read(length) if length else b""
                try:
                    answer = peer._dispatch(Request(self, method, body))
                except Exception as error:  # a bug in a route: say so, do not hang the client
                    peer.log.exception("route failed")
                    answer = Answer.json(500, {"error": "server_error", "error_description": type(error).__name__})
                self._send(answer)

            def _send(self, answer):
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    if answer.trickle is None:
                        self.wfile.write(answer.body)
                    else:
                        stop = threading.Event()
                        for index in range(len(answer.body)):
                            self.wfile.write(answer.body[index:index + 1])
                            self.wfile.flush()
                            if stop.wait(answer.trickle):
                                break
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def do_PUT(self):
                self._handle("PUT")

        return Handler
