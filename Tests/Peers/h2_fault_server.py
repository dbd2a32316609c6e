#!/usr/bin/env python3
"""A scriptable raw HTTP/2 server, built on the Python `h2` library, for testing gRPC clients.

Every request names a *scenario* in its `:path` (`/fault.Fault/<Scenario>`); the server then writes
exactly the frames that scenario describes -- well-formed, malformed or hostile -- so a client's
handling of each case can be checked against real bytes on a real socket. It is a test peer, not a
gRPC implementation. Several listening ports give different connection-level behaviour
("personalities"). README.md in this directory lists the command line, the ports and the scenarios.

Design: one thread per accepted connection, each running its own small event loop (non-blocking
socket, a selector, a timer heap). The h2 connection object is only ever touched by that thread, so
no locking is needed there; delayed answers are timers on the loop, which keeps thousands of
concurrent streams on one connection from blocking each other. Outgoing DATA waits in per-stream
queues and leaves as the client's flow-control windows allow. The only shared state is the global
event log used by the `Events` scenario, which has its own lock.
"""

import argparse
import base64
import collections
import ctypes
import ctypes.util
import gzip
import heapq
import itertools
import json
import os
import selectors
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import traceback
import urllib.parse

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from hyperframe.frame import GoAwayFrame

SERVICE_PREFIX = "/fault.Fault/"

STREAM_WINDOW = 16 << 20  # SETTINGS_INITIAL_WINDOW_SIZE we advertise
CONNECTION_WINDOW = 64 << 20  # connection receive window, opened with a WINDOW_UPDATE at start
HIGH_WATER = 1 << 20  # stop turning queued DATA into frames while this much is unsent
WRITE_CHUNK = 256 << 10

PLAINTEXT_PERSONALITIES = ("h2c", "h2c_limited", "h2c_small_header_list", "h2c_goaway_after_first", "h2c_no_ping_ack",
                           "h2c_bad_initial_window")

# h2c_bad_initial_window: SETTINGS_INITIAL_WINDOW_SIZE one above the largest window HTTP/2 allows
# (2^31 - 1), a connection error (FLOW_CONTROL_ERROR) for the client (RFC 9113 section 6.5.2).
BAD_INITIAL_WINDOW = 1 << 31

SPECIAL_MESSAGE = "%09%0Atest with whitespace%0D%0Aand Unicode BMP %E2%98%BA and non-BMP %F0%9F%98%88%09%0A"
MALFORMED_MESSAGE = "bad %zz escape %E2%98 and 100%"

# ---- HostileText: peer text that a terminal would act on, everywhere a client may show it.
# A forged line, as if the client had printed it.
HOSTILE_FORGED_LINE = "auth_sample: error: FORGED LINE"
# What an HTTP/2 field value may carry besides visible ASCII (RFC 9110 section 5.5: space, tab and
# bytes >= 0x80; a client's HTTP/2 layer refuses other controls): as UTF-8, C1 controls (U+009B
# is CSI, U+0085 is NEL), bidi override and isolates, line and paragraph separators; and a tab.
HOSTILE_FIELD_TEXT = "c1\u009b31m\u0085 bidi\u202egnp.exe\u202c\u2066iso\u2069 sep\u2028\u2029 tab\tend"
# What a protobuf string or a percent-encoded grpc-message can carry besides: ESC sequences (CSI
# clear-screen and colour, OSC window title and hyperlink), BEL, backspaces, DEL, CR LF, NUL, and
# a forged line of its own.
HOSTILE_TEXT = ("esc\x1b[2J\x1b[31mred\x1b]0;title\x07 link\x1b]8;;http://evil.example/\x1b\\here\x1b]8;;\x1b\\"
                " bs\x08\x08 del\x7f " + HOSTILE_FIELD_TEXT + "\r\n" + HOSTILE_FORGED_LINE + "\n\x00" + HOSTILE_FORGED_LINE)
HOSTILE_LONG_VALUE_LENGTH = 5000
HOSTILE_REPEATED_TRAILERS = 100


def hostile_field(text):
    """`text` as a field value for `step` (which sends str values as Latin-1): its UTF-8 bytes."""
    return text.encode("utf-8").decode("latin-1")


def protobuf_string(field, text):
    """One length-delimited protobuf field holding `text` (UTF-8)."""
    data = text.encode("utf-8")
    length = bytearray()
    count = len(data)
    while True:
        byte, count = count & 0x7F, count >> 7
        length.append(byte | (0x80 if count else 0))
        if not count:
            return bytes([field << 3 | 2]) + bytes(length) + data


def raw_frame(kind, flags, stream_id, payload):
    """An HTTP/2 frame built by hand (RFC 9113 section 4.1), for what h2 would refuse to send."""
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream_id.to_bytes(4, "big") + payload


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def grpc_frame(message, flag=0):
    """The gRPC length-prefixed framing: 1 flag byte, 4-byte big-endian length, the message."""
    return bytes([flag]) + len(message).to_bytes(4, "big") + message


def b64(data, padded):
    text = base64.b64encode(data).decode("ascii")
    return text if padded else text.rstrip("=")


def rpc_status(code, message):
    """A serialized google.rpc.Status {code = 1 (varint), message = 2 (string)}, encoded by hand."""
    text = message.encode("utf-8")
    assert code < 0x80 and len(text) < 0x80, "single-byte varints only"
    return bytes([0x08, code, 0x12, len(text)]) + text


def text_of(raw):
    """A received header name or value as a JSON-friendly string (UTF-8, else Latin-1)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class EventLog:
    """Everything tagged streams did, on every port, kept by tag (the `x-fault-tag` header)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_tag = collections.defaultdict(list)

    def record(self, tag, event):
        if tag:
            with self._lock:
                self._by_tag[tag].append(event)

    def get(self, tag):
        with self._lock:
            return list(self._by_tag.get(tag, ()))


EVENTS = EventLog()


class AttemptCounter:
    """How many attempts each tagged call has made (the `Retry` scenario), on every port."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_tag = collections.Counter()

    def next(self, tag):
        with self._lock:
            self._by_tag[tag] += 1
            return self._by_tag[tag]


ATTEMPTS = AttemptCounter()


class Stream:
    """One request as received: its header fields in order, its DATA payload, and what it asks for."""

    def __init__(self, stream_id, raw_headers):
        self.id = stream_id
        self.raw_headers = [(bytes(name), bytes(value)) for name, value in raw_headers]
        self.headers = [(text_of(name), text_of(value)) for name, value in self.raw_headers]
        self.first = {}
        for name, value in self.headers:
            self.first.setdefault(name, value)
        self.body = bytearray()
        self.ended = False
        self.reset = False
        path = self.first.get(":path", "")
        if self.first.get("x-fault-scenario"):
            # For clients whose method path is fixed (e.g. a CLI calling one real method).
            self.scenario = self.first["x-fault-scenario"]
        elif path.startswith(SERVICE_PREFIX):
            self.scenario = path[len(SERVICE_PREFIX):]
        else:
            # Any other path: its last segment, so `/pkg.Svc/EchoRequest` works too.
            self.scenario = path.rsplit("/", 1)[-1]
        # Events queries are not themselves recorded: a poll must not change what it reads.
        self.tag = None if self.scenario == "Events" else (self.first.get("x-fault-tag") or None)

    def number(self, name, default):
        try:
            return int(self.first.get(name, ""))
        except ValueError:
            return default

    @property
    def message(self):
        """The first request message (after its 5-byte prefix), as far as it arrived."""
        if len(self.body) < 5:
            return b""
        length = int.from_bytes(self.body[1:5], "big")
        return bytes(self.body[5:5 + length])


class PingFilter:
    """Removes PING frames (not PING ACKs) from a client's byte stream, reporting each one."""

    PREFACE_LENGTH = 24

    def __init__(self, report):
        self.report = report
        self.buffer = bytearray()
        self.preface_left = self.PREFACE_LENGTH

    def feed(self, data):
        self.buffer += data
        out = bytearray()
        if self.preface_left:
            taken = self.buffer[:self.preface_left]
            out += taken
            del self.buffer[:len(taken)]
            self.preface_left -= len(taken)
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[0:3], "big")
            if len(self.buffer) < 9 + length:
                break
            frame_type, flags = self.buffer[3], self.buffer[4]
            frame = self.buffer[:9 + length]
            del self.buffer[:9 + length]
            if frame_type == 0x6 and not flags & 0x1:
                self.report({"type": "ping", "acknowledged": False})
                continue
            out += frame
        return bytes(out)


class Connection:
    """One accepted connection and its event loop."""

    def __init__(self, sock, personality):
        self.sock = sock
        self.personality = personality
        self.h2 = h2.connection.H2Connection(config=h2.config.H2Configuration(
            client_side=False,
            header_encoding=None,
            validate_inbound_headers=False,
            normalize_inbound_headers=False,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
        ))
        self.selector = selectors.DefaultSelector()
        self.outbuf = bytearray()
        self.inflight = b""  # the chunk a send is in the middle of (TLS retries need the same one)
        self.timers = []
        self.timer_seq = itertools.count()
        self.streams = {}
        self.queues = collections.OrderedDict()  # stream id -> deque of pending output items
        self.tags = []  # tags seen on this connection, for connection-level events
        self.goaway_last = None  # last_stream_id of a GOAWAY we sent; later streams are ignored
        self.first_stream = None  # h2c_goaway_after_first: the one stream that is answered
        self.closing = False  # no more frames; shut the write side once the buffer is out
        self.draining = False  # write side shut; reading and discarding until EOF
        self.finished = False
        # h2c_no_ping_ack: client PINGs are taken out of the byte stream before h2 (which would
        # acknowledge them) sees them, so keepalive timeouts can be tested.
        self.ping_filter = PingFilter(self.connection_event) if personality == "h2c_no_ping_ack" else None
        self.scenarios = {
            "EchoRequest": self.echo_request,
            "Echo": self.echo,
            "QuietSink": self.quiet_sink,
            "TrailersOnly": self.trailers_only_scenario,
            "HTTPStatus": self.http_status,
            "NonGRPCContentType": self.non_grpc_content_type,
            "BadGRPCStatus": self.bad_grpc_status,
            "SplitPrefix": self.split_prefix,
            "CompressedNoEncoding": self.compressed_no_encoding,
            "UnsupportedEncoding": self.unsupported_encoding,
            "GzipResponse": self.gzip_response,
            "TwoMessages": self.two_messages,
            "ZeroMessages": self.zero_messages,
            "Oversized": self.oversized,
            "RstStream": self.rst_stream,
            "GoawayNotProcessed": self.never_answered,  # acted on at HEADERS time
            "GoawayThenComplete": self.goaway_then_complete,
            "Informational": self.informational,
            "SpecialMessage": self.special_message,
            "MalformedMessage": self.malformed_message,
            "Metadata": self.metadata,
            "StatusDetails": self.status_details,
            "HostileText": self.hostile_text,
            "CloseMidStream": self.close_mid_stream,
            "Hang": self.never_answered,
            "Events": self.events,
            "Retry": self.retry,
        }
        self.scenarios.update(self.transport_scenarios())

    # ---------------------------------------------------------------- the loop

    def run(self):
        try:
            self.sock.setblocking(False)
            self.selector.register(self.sock, selectors.EVENT_READ)
            self.start_h2()
            self.service()
            while not self.finished:
                interest = selectors.EVENT_READ
                if self.outbuf or self.inflight:
                    interest |= selectors.EVENT_WRITE
                self.selector.modify(self.sock, interest)
                for _, mask in self.selector.select(self.next_timeout()):
                    if mask & selectors.EVENT_READ:
                        self.on_readable()
                    if mask & selectors.EVENT_WRITE and not self.finished:
                        self.write_some()
                if self.finished:
                    break
                self.run_timers()
                self.service()
        except Exception:  # a bug here must not take the whole server down
            log(f"[{self.personality}] connection failed:\n{traceback.format_exc()}")
        finally:
            self.finish()

    def start_h2(self):
        codes = h2.settings.SettingCodes
        settings = {
            codes.MAX_CONCURRENT_STREAMS: 2 if self.personality == "h2c_limited" else 1000,
            codes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
        }
        if self.personality == "h2c_small_header_list":
            settings[codes.MAX_HEADER_LIST_SIZE] = 1024  # advertised only, never enforced
        # What we accept: generous everywhere, so an over-limit request is seen, not refused.
        self.h2.decoder.max_header_list_size = 1 << 20
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values=settings)
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(CONNECTION_WINDOW - 65535)
        if self.personality == "h2c_bad_initial_window":
            # h2 would never send the bad value: its own first SETTINGS is replaced by a
            # hand-made one (h2 goes on expecting an acknowledgement that never matters).
            self.h2.data_to_send()
            self.outbuf += raw_frame(0x4, 0, 0, (0x3).to_bytes(2, "big") + (1000).to_bytes(4, "big")
                                     + (0x4).to_bytes(2, "big") + BAD_INITIAL_WINDOW.to_bytes(4, "big"))
            return
        self.take_output()

    def next_timeout(self):
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return 0  # TLS has decrypted bytes the selector cannot see
        if not self.timers:
            return None
        return max(0.0, self.timers[0][0] - time.monotonic())

    def call_later(self, delay, function, *args):
        heapq.heappush(self.timers, (time.monotonic() + delay, next(self.timer_seq), function, args))

    def run_timers(self):
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now and not self.finished:
            _, _, function, args = heapq.heappop(self.timers)
            self.guarded(function, *args)

    def guarded(self, function, *args):
        try:
            function(*args)
        except h2.exceptions.H2Error:
            pass  # e.g. answering a stream the client has reset meanwhile
        except Exception:
            log(f"[{self.personality}] {getattr(function, '__name__', function)} failed:\n{traceback.format_exc()}")

    def on_readable(self):
        while not self.finished:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except OSError:
                self.finish()
                return
            if not data:
                self.finish()
                return
            if self.draining:
                continue
            if self.ping_filter is not None:
                data = self.ping_filter.feed(data)
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                log(f"[{self.personality}] client broke the protocol: {error!r}")
                self.take_output()  # h2 has queued a GOAWAY
                self.begin_close()
                return
            for event in events:
                self.guarded(self.on_event, event)
            self.service()

    def write_some(self):
        while not self.finished:
            if not self.inflight:
                if not self.outbuf:
                    break
                self.inflight = bytes(self.outbuf[:WRITE_CHUNK])
                del self.outbuf[:WRITE_CHUNK]
            try:
                sent = self.sock.send(self.inflight)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except OSError:
                self.finish()
                return
            self.inflight = self.inflight[sent:]
        if self.closing and not self.draining and not self.finished and not self.outbuf and not self.inflight:
            self.shut_write()

    def service(self):
        """Turns queued stream output into frames and writes what the socket takes."""
        for _ in range(64):
            produced = self.pump()
            self.write_some()
            if not produced or self.outbuf or self.inflight or self.finished:
                break

    def take_output(self):
        data = self.h2.data_to_send()
        if data and not self.draining:
            self.outbuf += data

    def send_raw(self, frame):
        """A hand-built frame, after everything h2 has produced so far."""
        self.take_output()
        if not self.closing:
            self.outbuf += frame.serialize()

    # ---------------------------------------------------------------- closing

    def begin_close(self):
        """Close gracefully: flush what was produced, FIN, then drain the client's bytes a while."""
        if self.closing or self.finished:
            return
        self.pump()
        self.take_output()
        self.closing = True
        self.queues.clear()
        self.write_some()
        # Do not wait forever for a client that stopped reading.
        self.call_later(5.0, self.finish)

    def shut_write(self):
        self.draining = True
        try:
            # The plain TCP shutdown, also under TLS: an abrupt end, with no close_notify.
            socket.socket.shutdown(self.sock, socket.SHUT_WR)
        except OSError:
            self.finish()
            return
        self.call_later(1.0, self.finish)

    def finish(self):
        if self.finished:
            return
        self.finished = True
        self.queues.clear()
        self.timers.clear()
        for tag in self.tags:
            EVENTS.record(tag, {"type": "connection_closed"})
        try:
            self.selector.unregister(self.sock)
        except (KeyError, ValueError, OSError):
            pass
        self.selector.close()
        try:
            self.sock.close()
        except OSError:
            pass

    # ---------------------------------------------------------------- per-stream output queue

    def enqueue(self, stream, *item):
        self.queues.setdefault(stream.id, collections.deque()).append(list(item))
        self.pump()

    def headers(self, stream, fields, end=False):
        self.enqueue(stream, "headers", fields, end)

    def data(self, stream, payload, end=False, frame_size=None):
        self.enqueue(stream, "data", memoryview(bytes(payload)), end, frame_size)

    def zeros(self, stream, count, frame_size):
        self.enqueue(stream, "zeros", count, False, frame_size)

    def trailers(self, stream, fields):
        self.enqueue(stream, "headers", fields, True)

    def reset(self, stream, code):
        self.enqueue(stream, "rst", code)

    def then(self, stream, function):
        """Runs `function` once everything queued before it for this stream has been framed."""
        self.enqueue(stream, "call", function)

    def pump(self):
        """Frames queued items, stream by stream in turns, as flow control and the buffer allow.

        Returns whether anything was produced."""
        if self.closing or self.finished:
            return False
        produced = False
        progress = True
        while progress and self.queues:
            progress = False
            for stream_id in list(self.queues):
                queue = self.queues.get(stream_id)
                if not queue:
                    self.queues.pop(stream_id, None)
                    continue
                try:
                    moved = self.step(stream_id, queue)
                except (h2.exceptions.H2Error, KeyError):
                    queue.clear()  # stream gone (reset or closed): drop its output
                    moved = False
                if not queue:
                    self.queues.pop(stream_id, None)
                if moved:
                    progress = produced = True
                if self.closing or self.finished:
                    return produced
        self.take_output()
        return produced

    def step(self, stream_id, queue):
        """Frames the head item of one stream's queue (at most one DATA frame). Returns progress."""
        item = queue[0]
        kind = item[0]
        if kind == "headers":
            _, fields, end = item
            self.h2.send_headers(stream_id, [(n.encode("latin-1"), v.encode("latin-1")) for n, v in fields], end_stream=end)
            queue.popleft()
            return True
        if kind == "rst":
            self.h2.reset_stream(stream_id, error_code=item[1])
            queue.popleft()
            return True
        if kind == "call":
            queue.popleft()
            self.call_later(0, item[1])  # from the loop, not from inside this pump
            return True
        # DATA ("data": a buffer; "zeros": a count of zero bytes)
        _, payload, end, frame_size = item
        remaining = len(payload) if kind == "data" else payload
        if not remaining and not end:
            queue.popleft()  # nothing to say: no empty DATA frame
            return True
        if remaining and len(self.outbuf) >= HIGH_WATER:
            return False
        limit = min(self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size)
        if frame_size:
            limit = min(limit, frame_size)
        if remaining and limit <= 0:
            return False
        size = min(remaining, limit)
        last = size == remaining
        chunk = payload[:size].tobytes() if kind == "data" else bytes(size)
        self.h2.send_data(stream_id, chunk, end_stream=end and last)
        if last:
            queue.popleft()
        else:
            item[1] = payload[size:] if kind == "data" else payload - size
        return True

    # ---------------------------------------------------------------- incoming events

    def connection_event(self, event):
        for tag in self.tags:
            EVENTS.record(tag, event)

    def on_event(self, event):
        if isinstance(event, h2.events.RequestReceived):
            stream = Stream(event.stream_id, event.headers)
            self.streams[stream.id] = stream
            if stream.tag and stream.tag not in self.tags:
                self.tags.append(stream.tag)
            EVENTS.record(stream.tag, {"type": "headers", "stream_id": stream.id})
            self.on_headers(stream)
        elif isinstance(event, h2.events.DataReceived):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.body += event.data
            # Give the window straight back so the client never stalls on us (QuietSink keeps
            # it: the stream window it announced covers the body, and no frame wakes the client).
            quiet = stream is not None and stream.scenario == "QuietSink"
            if event.flow_controlled_length and not quiet:
                try:
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                except h2.exceptions.StreamClosedError:
                    pass
        elif isinstance(event, h2.events.StreamEnded):
            stream = self.streams.get(event.stream_id)
            if stream is not None and not stream.ended:
                stream.ended = True
                EVENTS.record(stream.tag, {"type": "end_stream", "stream_id": stream.id})
                self.on_request(stream)
        elif isinstance(event, h2.events.StreamReset):
            self.queues.pop(event.stream_id, None)
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.reset = True
                if not event.remote_reset:
                    return
                EVENTS.record(stream.tag, {"type": "rst_stream", "stream_id": stream.id, "error_code": int(event.error_code)})
        elif isinstance(event, h2.events.PingReceived):
            self.connection_event({"type": "ping"})
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.connection_event({"type": "goaway", "error_code": int(event.error_code),
                                   "last_stream_id": event.last_stream_id})
            if self.personality == "h2c_bad_initial_window":
                # Keep the connection open, as the server that found this did: a client that
                # goes on waiting for SETTINGS waits until its deadline.
                return
            # h2 will not send anything after the client's GOAWAY: finish writing, then close.
            self.begin_close()

    def on_headers(self, stream):
        """What happens as soon as a request's HEADERS arrive, before its body."""
        if self.personality == "h2c_goaway_after_first":
            if self.first_stream is None:
                self.first_stream = stream.id
            elif self.goaway_last is None:
                self.goaway(self.first_stream)
                self.call_later(0.2, self.begin_close)
        elif stream.scenario == "GoawayNotProcessed" and self.goaway_last is None:
            self.goaway(max(0, stream.id - 2))
            self.call_later(0.1, self.begin_close)

    def on_request(self, stream):
        """The whole request is in: answer it (after x-fault-delay-ms, if given)."""
        if self.goaway_last is not None and stream.id > self.goaway_last:
            return  # the GOAWAY said this stream was not processed
        if self.personality == "h2c_goaway_after_first":
            handler = self.echo_request
        else:
            handler = self.scenarios.get(stream.scenario, self.unknown)
        delay = stream.number("x-fault-delay-ms", 0)
        if delay > 0:
            self.call_later(delay / 1000.0, self.answer, handler, stream)
        else:
            self.answer(handler, stream)

    def answer(self, handler, stream):
        if stream.reset or self.closing or self.finished:
            return
        self.guarded(handler, stream)

    def goaway(self, last_stream_id, error_code=0):
        # Built by hand: h2 sends nothing more once it has sent its own GOAWAY, and these
        # scenarios go on answering streams at or below last_stream_id afterwards.
        self.goaway_last = last_stream_id
        self.send_raw(GoAwayFrame(stream_id=0, last_stream_id=last_stream_id, error_code=error_code))

    # ---------------------------------------------------------------- response building blocks

    def normal_headers(self, stream, extra=()):
        self.headers(stream, [(":status", "200"), ("content-type", "application/grpc"), *extra])

    def message_and_ok(self, stream, message, extra_trailers=()):
        self.data(stream, grpc_frame(message))
        self.trailers(stream, [("grpc-status", "0"), *extra_trailers])

    def trailers_only(self, stream, code, message, extra=()):
        self.headers(stream, [(":status", "200"), ("content-type", "application/grpc"),
                              ("grpc-status", str(code)), ("grpc-message", message), *extra], end=True)

    # ---------------------------------------------------------------- scenarios

    def echo_request(self, stream):
        document = {
            "headers": [[name, value] for name, value in stream.headers],
            "headers_hex": [[name.hex(), value.hex()] for name, value in stream.raw_headers],
            "body_hex": bytes(stream.body).hex(),
            "stream_id": stream.id,
        }
        self.normal_headers(stream)
        self.message_and_ok(stream, json.dumps(document).encode("utf-8"))

    def echo(self, stream):
        self.normal_headers(stream)
        self.message_and_ok(stream, stream.message)

    def quiet_sink(self, stream):
        """Takes the whole body without sending a frame until it ends (no WINDOW_UPDATE: the
        announced stream window must cover it), then answers with the body's length in ASCII."""
        self.normal_headers(stream)
        self.message_and_ok(stream, str(len(stream.body)).encode("ascii"))

    def trailers_only_scenario(self, stream):
        self.trailers_only(stream, 16, "token%20expired", [("www-authenticate", 'Bearer error="invalid_token"')])

    def http_status(self, stream):
        self.headers(stream, [(":status", str(stream.number("x-fault-code", 500))), ("content-type", "text/plain")])
        self.data(stream, b"fault body", end=True)

    def non_grpc_content_type(self, stream):
        self.headers(stream, [(":status", "200"), ("content-type", "text/html")])
        self.data(stream, b"<html>nope</html>", end=True)

    def bad_grpc_status(self, stream):
        self.normal_headers(stream)
        self.data(stream, grpc_frame(b"x"))
        self.trailers(stream, [("grpc-status", "abc")])

    def split_prefix(self, stream):
        framed = grpc_frame(bytes(i % 256 for i in range(300)))
        self.normal_headers(stream)
        for index in range(5):  # the prefix, one byte per DATA frame
            self.data(stream, framed[index:index + 1])
        for start in range(5, len(framed), 7):  # the message, 7 bytes per DATA frame
            self.data(stream, framed[start:start + 7])
        self.trailers(stream, [("grpc-status", "0")])

    def compressed_no_encoding(self, stream):
        self.normal_headers(stream)
        self.data(stream, grpc_frame(b"abc", flag=1))
        self.trailers(stream, [("grpc-status", "0")])

    def unsupported_encoding(self, stream):
        self.normal_headers(stream, [("grpc-encoding", "snappy")])
        self.data(stream, grpc_frame(b"abc", flag=1))
        self.trailers(stream, [("grpc-status", "0")])

    def gzip_response(self, stream):
        self.normal_headers(stream, [("grpc-encoding", "gzip")])
        self.data(stream, grpc_frame(gzip.compress(stream.message), flag=1))
        self.trailers(stream, [("grpc-status", "0")])

    def two_messages(self, stream):
        self.normal_headers(stream)
        self.data(stream, grpc_frame(b"a") + grpc_frame(b"b"))
        self.trailers(stream, [("grpc-status", "0")])

    def zero_messages(self, stream):
        self.normal_headers(stream)
        self.trailers(stream, [("grpc-status", "0")])

    def oversized(self, stream):
        size = min(max(stream.number("x-fault-size", 8 << 20), 0), 0xFFFFFFFF)
        self.normal_headers(stream)
        self.data(stream, b"\x00" + size.to_bytes(4, "big"))
        self.zeros(stream, size, 16 << 10)  # stops at once if the client resets the stream
        self.trailers(stream, [("grpc-status", "0")])

    def rst_stream(self, stream):
        if stream.first.get("x-fault-after-headers") == "1":
            self.normal_headers(stream)
        self.reset(stream, stream.number("x-fault-code", 2))

    def never_answered(self, stream):
        pass

    def goaway_then_complete(self, stream):
        self.goaway(stream.id)
        self.normal_headers(stream)
        self.message_and_ok(stream, b"done")
        self.then(stream, lambda: self.call_later(0.1, self.begin_close))

    def informational(self, stream):
        self.headers(stream, [(":status", "100")])
        self.echo_request(stream)

    def special_message(self, stream):
        self.trailers_only(stream, 2, SPECIAL_MESSAGE)

    def malformed_message(self, stream):
        self.trailers_only(stream, 2, MALFORMED_MESSAGE)

    def metadata(self, stream):
        self.normal_headers(stream, [
            ("x-dup", "one"),
            ("x-dup", "two"),
            ("x-bin-bin", b64(b"\x00\x01\x02", padded=False)),
            ("x-bin-padded-bin", b64(b"\xff\xfe", padded=True)),
            ("x-multi-bin", b64(b"\x00\x01", padded=False) + "," + b64(b"\x02\x03", padded=True)),
        ])
        self.message_and_ok(stream, b"m", [
            ("x-trailer", "t1"),
            ("x-trailer", "t2"),
            ("grpc-status-details-bin", b64(rpc_status(3, "details"), padded=False)),
        ])

    def status_details(self, stream):
        self.trailers_only(stream, 3, "bad arg",
                           [("grpc-status-details-bin", b64(rpc_status(3, "bad arg"), padded=True))])

    def hostile_text(self, stream):
        """HostileText: terminal-hostile text in metadata, the message, the status (with x-fault-code)
        or GOAWAY debug data (with x-fault-goaway)."""
        if stream.first.get("x-fault-goaway") == "1":
            # Not processed (last_stream_id below this stream), so a client may retry it elsewhere.
            self.goaway_last = max(0, stream.id - 2)
            self.send_raw(GoAwayFrame(stream_id=0, last_stream_id=self.goaway_last, error_code=0xB,
                                      additional_data=HOSTILE_TEXT.encode("utf-8")))
            self.call_later(0.1, self.begin_close)
            return
        metadata = [
            ("x-hostile", hostile_field(HOSTILE_FIELD_TEXT)),
            ("x-hostile-long", "L" * HOSTILE_LONG_VALUE_LENGTH + hostile_field("\u202e")),
        ]
        code = stream.number("x-fault-code", 0)
        if code:
            self.trailers_only(stream, code, urllib.parse.quote(HOSTILE_TEXT, safe=""), [
                ("www-authenticate", hostile_field(f'Bearer realm="{HOSTILE_FIELD_TEXT}", error="invalid_token"')),
                *metadata,
            ])
            return
        self.normal_headers(stream, metadata)
        # grpc.testing.SimpleResponse {username = 2, oauth_scope = 3}
        self.message_and_ok(stream, protobuf_string(2, HOSTILE_TEXT) + protobuf_string(3, HOSTILE_TEXT), [
            *metadata,
            *[("x-hostile-repeated", str(index)) for index in range(HOSTILE_REPEATED_TRAILERS)],
        ])

    def close_mid_stream(self, stream):
        self.normal_headers(stream)
        self.data(stream, b"\x00\x00\x00")
        self.then(stream, self.begin_close)

    def events(self, stream):
        tag = stream.first.get("x-fault-query-tag") or stream.first.get("x-fault-tag")
        self.normal_headers(stream)
        self.message_and_ok(stream, json.dumps({"events": EVENTS.get(tag)}).encode("utf-8"))

    def retry(self, stream):
        """Retry: fails the first x-fault-failures attempts (default 2) of the call tagged
        x-fault-tag with status x-fault-code (default 14, UNAVAILABLE), as Trailers-Only, or after
        response headers with x-fault-headers-first: 1; with x-fault-pushback, each failure carries
        that grpc-retry-pushback-ms. Then answers OK with {"attempt": n}. Every attempt records an
        `attempt` event with its grpc-previous-rpc-attempts, grpc-timeout, arrival time and body."""
        attempt = ATTEMPTS.next(stream.tag)
        EVENTS.record(stream.tag, {
            "type": "attempt",
            "attempt": attempt,
            "previous_rpc_attempts": stream.first.get("grpc-previous-rpc-attempts"),
            "grpc_timeout": stream.first.get("grpc-timeout"),
            "monotonic": time.monotonic(),
            "body_hex": bytes(stream.body).hex(),
        })
        if attempt > stream.number("x-fault-failures", 2):
            self.normal_headers(stream)
            self.message_and_ok(stream, json.dumps({"attempt": attempt}).encode("utf-8"))
            return
        code = stream.number("x-fault-code", 14)
        message = f"attempt {attempt} failed"
        extra = []
        if "x-fault-pushback" in stream.first:
            extra.append(("grpc-retry-pushback-ms", stream.first["x-fault-pushback"]))
        if stream.first.get("x-fault-headers-first") == "1":
            self.normal_headers(stream)
            self.trailers(stream, [("grpc-status", str(code)), ("grpc-message", message), *extra])
        else:
            self.trailers_only(stream, code, message, extra)

    def unknown(self, stream):
        self.trailers_only(stream, 12, f"unknown fault scenario {stream.scenario}")

    # ---------------------------------------------------------------- connection-ending scenarios

    def transport_scenarios(self):
        """Scenarios that end the whole connection in each way a server can, once the request is in."""
        return {
            "CloseAfterRequest": self.close_after_request,
            "ResetAfterRequest": self.reset_after_request,
            "GoawayThenClose": self.goaway_then_close,
            "ConnectionError": self.connection_error,
            "HeaderFlood": self.header_flood,
            "InformationalFlood": self.informational_flood,
            "ClientSettings": self.client_settings,
            "PingFlood": self.ping_flood,
            "SettingsFlood": self.settings_flood,
            "ContinuationFlood": self.continuation_flood,
            "StreamWindowUpdateZero": self.stream_window_update_zero,
            "DataBeforeHeaders": self.data_before_headers,
            "ContentLengthMismatch": self.content_length_mismatch,
            "ContentLengthOverrun": self.content_length_overrun,
            "PaddedEcho": self.padded_echo,
            "EchoEndingInData": self.echo_ending_in_data,
            "DeclareAndStall": self.declare_and_stall,
        }

    def close_after_request(self, stream):
        self.begin_close()  # FIN; nothing is ever sent for the stream

    def reset_after_request(self, stream):
        # SO_LINGER with a zero timeout: close() sends a TCP RST instead of a FIN.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.finish()

    def goaway_then_close(self, stream):
        # This stream is covered by last_stream_id (so it may have been processed), but it is
        # never answered: the connection closes about 100 ms later.
        self.goaway(stream.id)
        self.call_later(0.1, self.begin_close)

    def connection_error(self, stream):
        # WINDOW_UPDATE with a zero increment on stream 0: a connection error (PROTOCOL_ERROR)
        # for the client (RFC 9113 section 6.9).
        self.take_output()
        self.outbuf += (4).to_bytes(3, "big") + bytes([0x8, 0]) + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
        self.write_some()

    def stream_window_update_zero(self, stream):
        # WINDOW_UPDATE with a zero increment on the request's own stream (RFC 9113 section 6.9:
        # a PROTOCOL_ERROR; nghttp2 ends the whole connection for it).
        self.take_output()
        self.outbuf += raw_frame(0x8, 0, stream.id, (0).to_bytes(4, "big"))
        self.write_some()

    def data_before_headers(self, stream):
        # A DATA frame (a whole gRPC message, END_STREAM) where the response HEADERS should be.
        self.take_output()
        self.outbuf += raw_frame(0x0, 0x1, stream.id, grpc_frame(b"early"))
        self.write_some()

    def content_length_mismatch(self, stream):
        # content-length 4, then 10 bytes of body and nothing more (the stream stays open here):
        # the client's HTTP/2 layer resets the stream itself (PROTOCOL_ERROR), and that reset is
        # recorded; the server never resets it.
        self.headers(stream, [(":status", "200"), ("content-type", "application/grpc"), ("content-length", "4")])
        self.data(stream, grpc_frame(b"short"))

    def content_length_overrun(self, stream):
        # content-length 100000, then, by hand, one DATA frame of 256 KiB holding one message that
        # fills it: its header and first 32 KiB at once, the rest 0.2 s later, then a
        # `frame_written` event. A client that reads the rest straight into the response body
        # finds its HTTP/2 layer refusing it (past the content-length): it resets the stream
        # itself (PROTOCOL_ERROR), and the connection goes on. Nothing else may be sent on the
        # connection until the event (it would land inside the frame).
        self.headers(stream, [(":status", "200"), ("content-type", "application/grpc"), ("content-length", "100000")])
        frame = raw_frame(0x0, 0, stream.id, grpc_frame(bytes(index % 251 for index in range((256 << 10) - 5))))
        split = 9 + (32 << 10)

        def write(part):
            self.take_output()
            self.outbuf += part
            self.write_some()

        def rest():
            write(frame[split:])
            EVENTS.record(stream.tag, {"type": "frame_written", "stream_id": stream.id})

        def first():
            write(frame[:split])
            self.call_later(0.2, rest)

        self.then(stream, first)

    def echo_ending_in_data(self, stream):
        # Normal headers; frame(the request's message) with END_STREAM on its last DATA frame,
        # and no trailers (not gRPC: the HTTP/2 exchange ends with the body).
        self.normal_headers(stream)
        self.data(stream, grpc_frame(stream.message), end=True)

    def declare_and_stall(self, stream):
        # Normal headers; one DATA frame holding a message prefix that declares x-fault-size
        # bytes (default 4 MiB less the prefix) and the first 1 KiB of them; then nothing, until
        # the client gives up. A client that sizes bodies by their prefix must bound what such
        # promises make it reserve.
        declared = min(max(stream.number("x-fault-size", (4 << 20) - 5), 1024), (1 << 32) - 1)
        self.normal_headers(stream)
        self.data(stream, bytes([0]) + declared.to_bytes(4, "big") + bytes(index % 253 for index in range(1024)))

    def padded_echo(self, stream):
        # Normal headers; frame(the request's message) in DATA frames as large as the client
        # allows, each padded with 255 bytes; OK trailers.
        self.normal_headers(stream)

        def send():
            body = grpc_frame(stream.message)
            size = self.h2.max_outbound_frame_size - 256  # the pad length byte and the padding
            for start in range(0, len(body), size):
                self.h2.send_data(stream.id, body[start:start + size], pad_length=255)
            self.h2.send_headers(stream.id, [(b"grpc-status", b"0")], end_stream=True)
            self.take_output()
            self.write_some()

        self.then(stream, send)

    # ---------------------------------------------------------------- header-list scenarios

    def header_flood(self, stream):
        """x-fault-count fields `x-flood: <x-fault-size bytes>` in one header block. A value that
        fits the client's HPACK table (4096 bytes with name and 32) is indexed once and then
        referenced, one byte per field: a small block on the wire that decodes to count x size.
        With x-fault-hang: 1, nothing follows a flooded headers or 1xx block."""
        count = min(max(stream.number("x-fault-count", 50000), 0), 1000000)
        size = min(max(stream.number("x-fault-size", 4000), 0), 1 << 20)
        flood = [("x-flood", "v" * size)] * count
        where = stream.first.get("x-fault-where", "headers")
        hang = stream.first.get("x-fault-hang") == "1"
        if where == "trailers":
            self.normal_headers(stream)
            self.message_and_ok(stream, b"m", flood)
        elif where == "informational":
            self.headers(stream, [(":status", "103"), *flood])
            if not hang:
                self.echo(stream)
        else:
            self.normal_headers(stream, flood)
            if not hang:
                self.message_and_ok(stream, b"m")

    def informational_flood(self, stream):
        """x-fault-count informational (103) header blocks, then the Echo answer."""
        for _ in range(min(max(stream.number("x-fault-count", 1000), 0), 100000)):
            self.headers(stream, [(":status", "103")])
        self.echo(stream)

    # ---------------------------------------------------------------- control-frame floods

    def ping_flood(self, stream):
        """x-fault-count PING frames (default 5000) in one write, then nothing for the stream."""
        count = min(max(stream.number("x-fault-count", 5000), 0), 1000000)
        self.take_output()
        self.outbuf += ((8).to_bytes(3, "big") + bytes([0x6, 0]) + (0).to_bytes(4, "big") + b"floodpng") * count
        self.write_some()

    def settings_flood(self, stream):
        """One SETTINGS frame with x-fault-count entries (default 1000, each re-announcing
        INITIAL_WINDOW_SIZE), then nothing for the stream."""
        count = min(max(stream.number("x-fault-count", 1000), 0), 100000)
        entry = (0x4).to_bytes(2, "big") + STREAM_WINDOW.to_bytes(4, "big")
        self.take_output()
        self.outbuf += (6 * count).to_bytes(3, "big") + bytes([0x4, 0]) + (0).to_bytes(4, "big") + entry * count
        self.write_some()

    def continuation_flood(self, stream):
        """A HEADERS frame (`:status 200`, END_STREAM, no END_HEADERS) followed by x-fault-count
        CONTINUATION frames (default 100), each carrying `x-c: v`, the last with END_HEADERS.
        Written by hand, outside h2 (which knows nothing of this response)."""
        count = min(max(stream.number("x-fault-count", 100), 1), 100000)
        def frame(kind, flags, payload):
            return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.id.to_bytes(4, "big") + payload
        field = b"\x00\x03x-c\x01v"  # literal without indexing, new name: leaves HPACK state alone
        self.take_output()
        self.outbuf += frame(0x1, 0x1, b"\x88")  # :status 200 (static index 8)
        for index in range(count):
            self.outbuf += frame(0x9, 0x4 if index == count - 1 else 0, field)
        self.write_some()

    def client_settings(self, stream):
        """Normal headers; frame(JSON of the SETTINGS the client sent, by name); OK trailers."""
        settings = {code.name.lower(): self.h2.remote_settings[code]
                    for code in h2.settings.SettingCodes if code in self.h2.remote_settings}
        self.normal_headers(stream)
        self.message_and_ok(stream, json.dumps(settings).encode("utf-8"))


# -------------------------------------------------------------------- tls12_renegotiate

class LibSSL:
    """The few libssl calls Python's ssl module does not offer: a TLS 1.2 server that starts a
    renegotiation (HelloRequest) when told to. Loaded with ctypes from the system's libssl."""

    WANT_READ, WANT_WRITE, ZERO_RETURN = 2, 3, 6
    ALPN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ctypes.c_ubyte), ctypes.POINTER(ctypes.c_ubyte),
                                     ctypes.c_uint, ctypes.c_void_p)

    def __init__(self, cert, key):
        lib = ctypes.CDLL(ctypes.util.find_library("ssl") or "libssl.so.3")
        signatures = {
            "TLS_server_method": ([], ctypes.c_void_p),
            "SSL_CTX_new": ([ctypes.c_void_p], ctypes.c_void_p),
            "SSL_CTX_use_certificate_chain_file": ([ctypes.c_void_p, ctypes.c_char_p], ctypes.c_int),
            "SSL_CTX_use_PrivateKey_file": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int], ctypes.c_int),
            "SSL_CTX_ctrl": ([ctypes.c_void_p, ctypes.c_int, ctypes.c_long, ctypes.c_void_p], ctypes.c_long),
            "SSL_CTX_set_alpn_select_cb": ([ctypes.c_void_p, self.ALPN_CALLBACK, ctypes.c_void_p], None),
            "SSL_new": ([ctypes.c_void_p], ctypes.c_void_p),
            "SSL_set_fd": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_int),
            "SSL_accept": ([ctypes.c_void_p], ctypes.c_int),
            "SSL_read": ([ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int], ctypes.c_int),
            "SSL_write": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int], ctypes.c_int),
            "SSL_get_error": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_int),
            "SSL_renegotiate": ([ctypes.c_void_p], ctypes.c_int),
            "SSL_do_handshake": ([ctypes.c_void_p], ctypes.c_int),
            "SSL_free": ([ctypes.c_void_p], None),
        }
        for name, (arguments, result) in signatures.items():
            function = getattr(lib, name)
            function.argtypes = arguments
            function.restype = result
        self.lib = lib
        self.ctx = lib.SSL_CTX_new(lib.TLS_server_method())
        if (not self.ctx or lib.SSL_CTX_use_certificate_chain_file(self.ctx, cert.encode()) != 1
                or lib.SSL_CTX_use_PrivateKey_file(self.ctx, key.encode(), 1) != 1):
            raise RuntimeError("libssl could not load the certificate and key")
        lib.SSL_CTX_ctrl(self.ctx, 124, 0x0303, None)  # SSL_CTX_set_max_proto_version(TLS 1.2)
        self.alpn = self.ALPN_CALLBACK(self.select_h2)  # kept referenced: libssl calls it later
        lib.SSL_CTX_set_alpn_select_cb(self.ctx, self.alpn, None)

    @staticmethod
    def select_h2(ssl_pointer, out, out_length, offered, offered_length, argument):
        """ALPN: pick h2 if the client offers it (pointing into the client's list, as libssl allows)."""
        wire = ctypes.string_at(offered, offered_length)
        index = 0
        while index < len(wire):
            length = wire[index]
            if wire[index + 1:index + 1 + length] == b"h2":
                out[0] = ctypes.cast(offered, ctypes.c_void_p).value + index + 1
                out_length[0] = 2
                return 0  # SSL_TLSEXT_ERR_OK
            index += 1 + length
        return 3  # SSL_TLSEXT_ERR_NOACK


class RenegotiatingFront:
    """tls12_renegotiate: a TLS 1.2 front for the h2c port. It relays bytes both ways (whole frames
    towards the client) until the client's first HEADERS frame has been relayed; then it sends an
    HTTP/2 PING (which the client must acknowledge, i.e. write) followed by a TLS HelloRequest (a
    renegotiation, which HTTP/2 forbids), and from then on relays nothing more: it reads and drops
    what the client sends until the client closes, keeping the h2c connection (and its streams)
    open meanwhile."""

    PING = (8).to_bytes(3, "big") + bytes([0x6, 0]) + (0).to_bytes(4, "big") + b"renegot!"

    libssl = None  # a LibSSL, set in main() when TLS material is given
    upstream_port = None

    def __init__(self, sock):
        self.sock = sock
        self.lib = self.libssl.lib
        self.ssl = None
        self.upstream = None
        self.preface_left = 24
        self.frames = bytearray()  # client bytes after the preface, up to a whole frame
        self.downstream = bytearray()  # server bytes not yet making up a whole frame
        self.renegotiated = False

    def run(self):
        try:
            self.sock.setblocking(False)
            self.ssl = self.lib.SSL_new(self.libssl.ctx)
            self.lib.SSL_set_fd(self.ssl, self.sock.fileno())
            if not self.tls_call(self.lib.SSL_accept, time.monotonic() + 10):
                return
            self.upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
            self.upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.relay()
        except Exception:
            log(f"[tls12_renegotiate] {traceback.format_exc()}")
        finally:
            for closable in (self.upstream, self.sock):
                try:
                    if closable is not None:
                        closable.close()
                except OSError:
                    pass
            if self.ssl:
                self.lib.SSL_free(self.ssl)

    def tls_call(self, function, deadline, *arguments):
        """Runs a libssl call on the non-blocking socket until it completes: its result, or None."""
        while True:
            result = function(self.ssl, *arguments)
            if result > 0:
                return result
            error = self.lib.SSL_get_error(self.ssl, result)
            if error == LibSSL.WANT_READ:
                ready = select_ready([self.sock], [], deadline)
            elif error == LibSSL.WANT_WRITE:
                ready = select_ready([], [self.sock], deadline)
            else:
                return None
            if not ready:
                return None

    def relay(self):
        buffer = ctypes.create_string_buffer(65536)
        while True:
            readable = select_ready([self.sock, self.upstream], [], None)
            if self.upstream in readable:
                data = self.upstream.recv(65536)
                if not data:
                    return
                if not self.renegotiated and not self.send_to_client(self.whole_frames(data)):
                    return
            if self.sock in readable:
                if self.renegotiated:
                    # The renegotiation is never completed: the client's handshake records are dropped.
                    try:
                        if not self.sock.recv(65536):
                            return
                    except BlockingIOError:
                        pass
                    continue
                while True:
                    count = self.lib.SSL_read(self.ssl, buffer, len(buffer))
                    if count <= 0:
                        if self.lib.SSL_get_error(self.ssl, count) in (LibSSL.WANT_READ, LibSSL.WANT_WRITE):
                            break
                        return
                    data = buffer.raw[:count]
                    self.upstream.sendall(data)
                    if self.saw_headers(data):
                        self.renegotiated = True
                        if not self.send_to_client(self.PING):
                            return
                        self.lib.SSL_renegotiate(self.ssl)
                        self.lib.SSL_do_handshake(self.ssl)  # writes the HelloRequest, then wants the ClientHello
                        break

    def send_to_client(self, data):
        for start in range(0, len(data), 16384):
            chunk = bytes(data[start:start + 16384])
            if not self.tls_call(self.lib.SSL_write, time.monotonic() + 10, chunk, len(chunk)):
                return False
        return True

    def whole_frames(self, data):
        """The complete frames among the server's bytes so far, so the PING lands between frames."""
        self.downstream += data
        end = 0
        while len(self.downstream) - end >= 9:
            length = int.from_bytes(self.downstream[end:end + 3], "big")
            if len(self.downstream) - end < 9 + length:
                break
            end += 9 + length
        frames = bytes(self.downstream[:end])
        del self.downstream[:end]
        return frames

    def saw_headers(self, data):
        """Whether the client's bytes so far hold a complete HEADERS frame."""
        if self.preface_left:
            skipped = min(self.preface_left, len(data))
            self.preface_left -= skipped
            data = data[skipped:]
        self.frames += data
        while len(self.frames) >= 9:
            length = int.from_bytes(self.frames[0:3], "big")
            if len(self.frames) < 9 + length:
                return False
            kind = self.frames[3]
            del self.frames[:9 + length]
            if kind == 0x1:
                return True
        return False


def select_ready(readers, writers, deadline):
    """The sockets ready to read or write, waiting until `deadline` (None: no limit)."""
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    with selectors.DefaultSelector() as selector:
        for sock in readers:
            selector.register(sock, selectors.EVENT_READ)
        for sock in writers:
            selector.register(sock, selectors.EVENT_WRITE)
        return [key.fileobj for key, _ in selector.select(timeout)]


# -------------------------------------------------------------------- listening

def handle_connection(sock, personality, tls_context):
    try:
        if sock.family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if personality == "tls12_renegotiate":
            RenegotiatingFront(sock).run()
            return
        if tls_context is not None:
            sock.settimeout(10)
            try:
                sock = tls_context.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError) as error:
                log(f"[{personality}] TLS handshake failed: {error!r}")
                sock.close()
                return
            if personality == "tls_no_alpn":
                # No h2 here: a client that requires it gives up; wait for it to go, then close.
                try:
                    sock.settimeout(2)
                    sock.recv(1)
                except (OSError, ssl.SSLError):
                    pass
                sock.close()
                return
        Connection(sock, personality).run()
    except Exception:
        log(f"[{personality}] {traceback.format_exc()}")
        try:
            sock.close()
        except OSError:
            pass


def serve(listener, personality, tls_context):
    while True:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle_connection, args=(sock, personality, tls_context),
                         name=f"{personality}-connection", daemon=True).start()


def tls_context_for(cert, key, protocols):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(protocols)
    return context


def main():
    parser = argparse.ArgumentParser(description="Scriptable raw HTTP/2 fault server for gRPC client tests.")
    parser.add_argument("--state-dir", required=True, help="where faults.json is written")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input reaches EOF")
    parser.add_argument("--tls-cert", help="PEM certificate chain for the TLS ports")
    parser.add_argument("--tls-key", help="PEM private key for the TLS ports")
    parser.add_argument("--unix", help="also serve the h2c personality on a unix-domain socket at this path")
    parser.add_argument("--unix-abstract", help="also serve the h2c personality on this abstract unix socket name (Linux)")
    arguments = parser.parse_args()
    if bool(arguments.tls_cert) != bool(arguments.tls_key):
        parser.error("--tls-cert and --tls-key go together")

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

    personalities = {name: None for name in PLAINTEXT_PERSONALITIES}
    if arguments.tls_cert:
        personalities["tls"] = tls_context_for(arguments.tls_cert, arguments.tls_key, ["h2"])
        personalities["tls_no_alpn"] = tls_context_for(arguments.tls_cert, arguments.tls_key, ["http/1.1"])
        RenegotiatingFront.libssl = LibSSL(arguments.tls_cert, arguments.tls_key)
        personalities["tls12_renegotiate"] = None  # its own TLS (libssl through ctypes)

    family = socket.AF_INET6 if ":" in arguments.host else socket.AF_INET
    listeners = []
    ports = {}
    for name, context in personalities.items():
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((arguments.host, 0))
        listener.listen(1024)
        listeners.append(listener)
        ports[name] = listener.getsockname()[1]
    RenegotiatingFront.upstream_port = ports["h2c"]
    for listener, (name, context) in zip(listeners, personalities.items()):
        threading.Thread(target=serve, args=(listener, name, context), name=f"{name}-accept", daemon=True).start()
    unix = {}
    for key, address in (("unix", arguments.unix), ("unix_abstract", arguments.unix_abstract)):
        if address is None:
            continue
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # An abstract name starts with a NUL byte; a path is a file, replaced if a stale one is there.
        if key == "unix_abstract":
            listener.bind("\0" + address)
        else:
            if os.path.exists(address):
                os.unlink(address)
            listener.bind(address)
        listener.listen(1024)
        listeners.append(listener)
        unix[key] = address
        threading.Thread(target=serve, args=(listener, "h2c", None), name=f"{key}-accept", daemon=True).start()

    state_dir = os.path.abspath(arguments.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, "faults.json")
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w") as handle:
        json.dump({"pid": os.getpid(), "host": arguments.host, "ports": ports, **unix}, handle)
    os.replace(temporary, path)
    print(f"FAULTS READY {path}", flush=True)

    while not stop.wait(1.0):
        pass
    for listener in listeners:
        listener.close()


if __name__ == "__main__":
    main()
