#!/usr/bin/env python3
"""`make bench`: swift-authrpc against grpc-swift-2 and h2load, on one grpc-swift-2 server.

Builds the Benchmarks package in release mode, starts BenchServer (h2c and TLS on loopback),
then runs every client for the same number of calls at 1 and 100 in flight, interleaved over
several rounds (A B C A B C ...), and writes the medians and the ratios to RESULTS.md (and a
latency plot, results.png, when matplotlib is available). Client CPU is the client process's
own rusage; h2load's responses are checked by their byte total, since it never reads
grpc-status. See ../../shared/PERFORMANCE.md.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Examples", "Sandbox"))
import certs  # noqa: E402

TOKEN = "bench-token-0123456789abcdef0123456789abcdef"
PATH = "/grpc.testing.TestService/UnaryCall"
CLIENTS = ["h2load", "authrpc", "authrpc-session", "grpc-swift"]


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def request_frame(payload):
    """A gRPC-framed SimpleRequest{response_size: payload, payload: {body: payload zero bytes}}."""
    body = b"\x12" + varint(payload) + bytes(payload)          # Payload.body = 2
    message = b"\x10" + varint(payload) + b"\x1a" + varint(len(body)) + body   # response_size = 2, payload = 3
    return b"\x00" + len(message).to_bytes(4, "big") + message


def response_frame_size(payload):
    body = b"\x12" + varint(payload) + bytes(payload)
    message = b"\x0a" + varint(len(body)) + body                # SimpleResponse.payload = 1
    return 5 + len(message)


def run_checked(command, timeout):
    """Runs `command` to completion; returns (stdout, user+sys CPU seconds, peak RSS in KiB) of
    that process alone, from wait4(2)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                raise RuntimeError(f"{command[0]} did not finish in {timeout} s")
            time.sleep(0.02)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{err.read()[-2000:]}")
        return out.read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss


class Bench:
    def __init__(self, arguments):
        self.arguments = arguments
        self.work = tempfile.mkdtemp(prefix="authrpc-bench-")
        self.paths = certs.generate(self.work)
        self.body = os.path.join(self.work, "request.bin")
        with open(self.body, "wb") as handle:
            handle.write(request_frame(arguments.payload))
        self.bin = subprocess.run(
            ["swift", "build", "-c", "release", "--package-path", HERE, "--show-bin-path"],
            check=True, capture_output=True, text=True).stdout.strip()
        self.server = subprocess.Popen(
            [os.path.join(self.bin, "BenchServer"), self.paths["server_cert"], self.paths["server_key"]],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.server.stdout.readline().split()
        if line[:3] != ["BENCH", "SERVER", "READY"]:
            raise RuntimeError("BenchServer did not start")
        self.ports = {"h2c": int(line[3]), "tls": int(line[4])}

    def close(self):
        self.server.stdin.close()
        self.server.wait(10)
        shutil.rmtree(self.work, ignore_errors=True)

    def run(self, client, transport, concurrency, calls):
        port = self.ports[transport]
        if client == "h2load":
            result, cpu, rss = self.run_h2load(transport, port, concurrency, calls)
            result["cpu_us_per_call"] = cpu * 1e6 / calls
        else:
            command = [os.path.join(self.bin, "BenchClient"), client, transport, str(port), self.paths["ca_cert"],
                       str(calls), str(concurrency), str(self.arguments.payload)]
            stdout, cpu, rss = run_checked(command, timeout=600)
            result = json.loads(stdout.strip().splitlines()[-1])
        result["process_cpu_us_per_call"] = cpu * 1e6 / calls
        result["max_rss_kib"] = rss
        return result

    def run_h2load(self, transport, port, concurrency, calls):
        log = os.path.join(self.work, "h2load.log")
        if os.path.exists(log):
            os.remove(log)  # h2load appends to an existing log
        scheme_host = f"https://localhost:{port}" if transport == "tls" else f"http://127.0.0.1:{port}"
        command = ["h2load", "-n", str(calls), "-c", "1", "-m", str(concurrency),
                   "-H", "content-type: application/grpc", "-H", "te: trailers",
                   "-H", f"authorization: Bearer {TOKEN}", "-d", self.body, "--log-file", log, scheme_host + PATH]
        stdout, cpu, rss = run_checked(command, timeout=600)
        finished = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", stdout)
        succeeded = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", stdout)
        data = re.search(r"traffic: .*\((\d+)\) data", stdout)
        if not (finished and succeeded and data):
            raise RuntimeError(f"cannot read h2load's output:\n{stdout}")
        # h2load counts any 2xx as success and never reads grpc-status: check the bytes instead.
        expected = calls * response_frame_size(self.arguments.payload)
        if int(succeeded.group(1)) != calls or int(data.group(1)) < expected:
            raise RuntimeError(f"h2load: {succeeded.group(1)} of {calls} succeeded, {data.group(1)} of {expected} data bytes")
        seconds = float(finished.group(1)) / (1000 if finished.group(2) == "ms" else 1)
        with open(log) as handle:
            latencies = sorted(int(line.split()[2]) for line in handle if line.strip())
        return {"impl": "h2load", "transport": transport, "concurrency": concurrency, "calls": calls, "seconds": seconds,
                "calls_per_second": calls / seconds, "p50_us": latencies[len(latencies) // 2],
                "p99_us": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]}, cpu, rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    parser.add_argument("--calls", type=int, default=20000, help="calls per run at 100 in flight")
    parser.add_argument("--calls-sequential", type=int, default=3000, help="calls per run at 1 in flight")
    parser.add_argument("--payload", type=int, default=100, help="request and response payload bytes")
    parser.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"))
    arguments = parser.parse_args()

    bench = Bench(arguments)
    runs = {}
    try:
        for transport in ("h2c", "tls"):
            for concurrency, calls in ((1, arguments.calls_sequential), (100, arguments.calls)):
                for round_number in range(arguments.rounds):
                    for client in CLIENTS:
                        result = bench.run(client, transport, concurrency, calls)
                        runs.setdefault((client, transport, concurrency), []).append(result)
                        print(f"round {round_number + 1} {transport:3} c={concurrency:<3} {client:15} "
                              f"{result['calls_per_second']:9.0f} calls/s  p50 {result['p50_us']:7.0f} us  "
                              f"cpu {result['cpu_us_per_call']:6.1f} us/call", flush=True)
        # Memory per in-flight call: peak RSS with 10,000 calls in flight against 1 in flight.
        for concurrency in (1, 10000):
            runs[("authrpc", "h2c-memory", concurrency)] = [bench.run("authrpc", "h2c", concurrency, 10000)]
    finally:
        bench.close()
    write_results(arguments, runs)


def median(values):
    return statistics.median(values) if values else float("nan")


def write_results(arguments, runs):
    def figure(client, transport, concurrency, key):
        return median([run[key] for run in runs.get((client, transport, concurrency), [])])

    lines = [
        "# Benchmark results",
        "",
        f"`make bench` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} cores, server BenchServer (grpc-swift-2) on loopback, "
        f"{arguments.payload}-byte request and response payloads, medians of {arguments.rounds} interleaved rounds. "
        "CPU is the client's own user+sys time per call (for the Swift clients, measured over the timed calls only).",
        "",
        "| transport | in flight | client | calls/s | p50 µs | p99 µs | CPU µs/call |",
        "|---|---|---|---|---|---|---|",
    ]
    for (client, transport, concurrency) in sorted((k for k in runs if k[1] != "h2c-memory"), key=lambda k: (k[1], k[2], CLIENTS.index(k[0]))):
        lines.append(f"| {transport} | {concurrency} | {client} | {figure(client, transport, concurrency, 'calls_per_second'):.0f} | "
                     f"{figure(client, transport, concurrency, 'p50_us'):.0f} | {figure(client, transport, concurrency, 'p99_us'):.0f} | "
                     f"{figure(client, transport, concurrency, 'cpu_us_per_call'):.1f} |")
    lines += ["", "## Against the targets (PERFORMANCE.md)", "",
              "| transport | figure | authrpc | vs h2load | vs grpc-swift-2 | target |", "|---|---|---|---|---|---|"]
    for transport in ("h2c", "tls"):
        def ratio(key, concurrency, other):
            mine, theirs = figure("authrpc", transport, concurrency, key), figure(other, transport, concurrency, key)
            return mine / theirs if theirs else float("nan")
        lines.append(f"| {transport} | CPU per call, 100 in flight | {figure('authrpc', transport, 100, 'cpu_us_per_call'):.1f} µs | "
                     f"{ratio('cpu_us_per_call', 100, 'h2load'):.2f}× | {ratio('cpu_us_per_call', 100, 'grpc-swift'):.2f}× | ≤ 1.25× h2load, ≤ 0.5× grpc-swift-2 |")
        lines.append(f"| {transport} | p50 latency, 1 in flight | {figure('authrpc', transport, 1, 'p50_us'):.0f} µs | "
                     f"{ratio('p50_us', 1, 'h2load'):.2f}× | {ratio('p50_us', 1, 'grpc-swift'):.2f}× | ≤ 1.15× h2load, ≤ 0.6× grpc-swift-2 |")
        lines.append(f"| {transport} | calls/s, 100 in flight | {figure('authrpc', transport, 100, 'calls_per_second'):.0f} | "
                     f"{ratio('calls_per_second', 100, 'h2load'):.2f}× | {ratio('calls_per_second', 100, 'grpc-swift'):.2f}× | ≥ 0.9× h2load |")
        session = figure("authrpc-session", transport, 100, "cpu_us_per_call") / figure("authrpc", transport, 100, "cpu_us_per_call")
        lines.append(f"| {transport} | AuthSession (cached) vs static token, CPU, 100 in flight | {session:.2f}× | | | ≤ 1.05× |")
    one, many = runs[("authrpc", "h2c-memory", 1)][0], runs[("authrpc", "h2c-memory", 10000)][0]
    per_call = (many["max_rss_kib"] - one["max_rss_kib"]) * 1024 / 9999
    lines.append(f"| h2c | RSS per in-flight call (peak RSS {many['max_rss_kib'] / 1024:.1f} MiB at 10,000 in flight, "
                 f"{one['max_rss_kib'] / 1024:.1f} MiB at 1) | {per_call:.0f} B | | | < 2 KiB |")
    with open(arguments.output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(arguments, runs)


def plot(arguments, runs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    figure, axes = pyplot.subplots(1, 2, figsize=(11, 4))
    for axis, concurrency in zip(axes, (1, 100)):
        labels, p50, p99 = [], [], []
        for transport in ("h2c", "tls"):
            for client in CLIENTS:
                results = runs.get((client, transport, concurrency), [])
                if results:
                    labels.append(f"{client}\n{transport}")
                    p50.append(median([r["p50_us"] for r in results]))
                    p99.append(median([r["p99_us"] for r in results]))
        positions = range(len(labels))
        axis.bar([p - 0.2 for p in positions], p50, width=0.4, label="p50")
        axis.bar([p + 0.2 for p in positions], p99, width=0.4, label="p99")
        axis.set_xticks(list(positions), labels, fontsize=7)
        axis.set_ylabel("latency (µs)")
        axis.set_title(f"{concurrency} in flight")
        axis.legend()
    figure.tight_layout()
    path = os.path.join(os.path.dirname(arguments.output), "results.png")
    figure.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
