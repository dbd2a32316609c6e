#!/usr/bin/env python3
"""A loopback TCP proxy that cuts connections at random, for the chaos soak.

Every accepted connection is forwarded to --target-port and lives for a random time drawn from an
exponential distribution (mean --mean-lifetime-ms). When that time is up the proxy cuts it, half
of the time with a reset (SO_LINGER 0, so both sides see ECONNRESET) and half of the time with
an orderly close (FIN to both sides, with nothing more forwarded). A fraction of new connections
(--refuse-fraction) is closed at once without being forwarded. Data is forwarded in whatever
pieces it arrives, so HTTP/2 frames are cut in the middle as often as between frames.

Prints `CHAOS PROXY READY <port>`; on exit (SIGTERM/SIGINT, or EOF on stdin with
--exit-with-stdin) writes its counters as JSON to --stats-file.
"""

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import struct
import sys


class Proxy:
    def __init__(self, target_port, mean_lifetime, refuse_fraction, rng):
        self.target_port = target_port
        self.mean_lifetime = mean_lifetime
        self.refuse_fraction = refuse_fraction
        self.rng = rng
        self.stats = {"accepted": 0, "refused": 0, "reset": 0, "closed": 0, "ended_by_peer": 0, "upstream_failed": 0}

    async def handle(self, client_reader, client_writer):
        self.stats["accepted"] += 1
        if self.rng.random() < self.refuse_fraction:
            self.stats["refused"] += 1
            _cut(client_writer, reset=True)
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            self.stats["upstream_failed"] += 1
            _cut(client_writer, reset=True)
            return
        lifetime = self.rng.expovariate(1.0 / self.mean_lifetime)
        reset = self.rng.random() < 0.5
        pumps = [asyncio.ensure_future(_pump(client_reader, upstream_writer)),
                 asyncio.ensure_future(_pump(upstream_reader, client_writer))]
        done, _ = await asyncio.wait(pumps, timeout=lifetime, return_when=asyncio.FIRST_COMPLETED)
        for pump in pumps:
            pump.cancel()
        if done:
            self.stats["ended_by_peer"] += 1
            reset = False
        else:
            self.stats["reset" if reset else "closed"] += 1
        _cut(client_writer, reset)
        _cut(upstream_writer, reset)


async def _pump(reader, writer):
    while True:
        data = await reader.read(65536)
        if not data:
            return
        writer.write(data)
        await writer.drain()


def _cut(writer, reset):
    if reset:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        writer.transport.abort()
    else:
        writer.close()


async def serve(arguments):
    rng = random.Random(arguments.seed)
    proxy = Proxy(arguments.target_port, arguments.mean_lifetime_ms / 1000.0, arguments.refuse_fraction, rng)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", arguments.port)
    port = server.sockets[0].getsockname()[1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if arguments.exit_with_stdin:
        def on_stdin():
            if not os.read(sys.stdin.fileno(), 4096):
                loop.remove_reader(sys.stdin.fileno())
                stop.set()
        loop.add_reader(sys.stdin.fileno(), on_stdin)
    print(f"CHAOS PROXY READY {port}", flush=True)
    await stop.wait()
    server.close()
    if arguments.stats_file:
        with open(arguments.stats_file, "w", encoding="utf-8") as file:
            json.dump(proxy.stats, file)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="loopback port to listen on (0: any)")
    parser.add_argument("--target-port", type=int, required=True, help="loopback port to forward to")
    parser.add_argument("--mean-lifetime-ms", type=float, default=500.0, help="mean connection lifetime")
    parser.add_argument("--refuse-fraction", type=float, default=0.05, help="share of connections cut at once")
    parser.add_argument("--seed", type=int, default=1, help="random seed, so a run can be repeated")
    parser.add_argument("--stats-file", help="where the counters go on exit (JSON)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input reaches EOF")
    arguments = parser.parse_args(argv)
    if arguments.mean_lifetime_ms <= 0 or not 0 <= arguments.refuse_fraction < 1:
        parser.error("--mean-lifetime-ms must be positive and --refuse-fraction in [0, 1)")
    asyncio.run(serve(arguments))
    return 0


if __name__ == "__main__":
    sys.exit(main())
