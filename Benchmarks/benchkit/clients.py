"""Runs one client for one measurement: BenchClient (swift-authrpc, AuthSession, grpc-swift-2,
the harness alone), gRPC C-core's own client (CxxClient, `ccore-*`) or h2load, against one
server, and returns its figures as a dict."""

import json
import os
import re

from . import frames
from .processes import run_checked

TOKEN = "bench-token-0123456789abcdef0123456789abcdef"
PATH = "/grpc.testing.TestService/UnaryCall"
# gRPC C-core's own client (CxxClient/bench_client.cc): its callback API and its completion-queue
# API (one queue polled by the calling thread). Same command line and JSON as BenchClient's `load`.
CCORE_CLIENTS = ("ccore-cq", "ccore-callback")
# h2load cannot read its CPU around its calls: a short run of this many calls measures its
# start-up (process, TLS context, connection), which the long run's figure subtracts.
H2LOAD_SHORT_CALLS = 1000


def h2load_per_call(short, long, short_calls, long_calls):
    """Per-call figure of a process that counts only as a whole: the difference of a long and a
    short run over the difference of their calls, which cancels start-up and exit."""
    if long_calls <= short_calls:
        raise ValueError("the long run must make more calls than the short one")
    return (long - short) / (long_calls - short_calls)


def h2load_summary(stdout, calls, response_bytes, where):
    """(seconds, response data bytes) from h2load's summary, once every call is known to have
    succeeded. h2load counts any 2xx as a success and never reads grpc-status, so its responses
    are also checked by their data bytes; it exits 0 whatever its requests' fate."""
    finished = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", stdout)
    succeeded = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", stdout)
    data = re.search(r"traffic: .*\((\d+)\) data", stdout)
    if not (finished and succeeded and data):
        raise RuntimeError(f"cannot read h2load's output:\n{stdout}")
    expected = calls * frames.min_response_frame_size(response_bytes)
    if int(succeeded.group(1)) != calls or int(data.group(1)) < expected:
        raise RuntimeError(f"h2load against {where}: {succeeded.group(1)} of {calls} succeeded, "
                           f"{data.group(1)} of at least {expected} response data bytes")
    return float(finished.group(1)) / (1000 if finished.group(2) == "ms" else 1), int(data.group(1))


class Runner:
    def __init__(self, bin_dir, work, ca_cert, ccore_client=None):
        self.client = os.path.join(bin_dir, "BenchClient")
        self.ccore_client = ccore_client
        self.counter = os.path.join(bin_dir, "libMallocCounter.so")
        if not os.path.exists(self.counter):
            raise SystemExit(f"bench: {self.counter} was not built")
        self.work = work
        self.ca_cert = ca_cert
        self.bodies = {}

    def command(self, mode, impl, server, transport, **options):
        """The BenchClient (or, for `ccore-*`, CxxClient) command line for one run."""
        binary = self.client
        if impl in CCORE_CLIENTS:
            if self.ccore_client is None:
                raise RuntimeError("the C-core client was not built")
            binary = self.ccore_client
        command = [binary, mode, "--impl", impl, "--transport", transport,
                   "--port", str(server.ports[transport]), "--ca", self.ca_cert]
        for name, value in options.items():
            command += ["--" + name.replace("_", "-"), str(value)]
        return command

    def bench_client(self, mode, impl, server, transport, count_mallocs=False, timeout=900, env=None, **options):
        """BenchClient MODE: its JSON line, plus the process's own CPU and peak RSS. `env`: more
        environment for the client (the xDS bootstrap)."""
        command = self.command(mode, impl, server, transport, **options)
        env = {**(env or {}), **({"LD_PRELOAD": self.counter} if count_mallocs else {})} or None
        stdout, cpu, rss, _ = run_checked(command, timeout=timeout, env=env)
        result = json.loads(stdout.strip().splitlines()[-1])
        if count_mallocs and not result.get("malloc_counter"):
            raise RuntimeError(f"{impl} did not see the preloaded malloc counter")
        result.update(server=server.name, process_cpu_seconds=cpu, max_rss_kib=rss)
        return result

    def load(self, impl, server, transport, concurrency, calls, request_bytes=100, response_bytes=100,
             warmup=200, count_mallocs=False, env=None, **extra):
        """One load run; `extra` are further BenchClient options (`ports`, `lb` for swift-authrpc's
        load balancing, `target` for an xds:/// channel, whose bootstrap comes in `env`)."""
        if impl == "h2load":
            return self.h2load(server, transport, concurrency, calls, request_bytes, response_bytes)
        result = self.bench_client("load", impl, server, transport, count_mallocs=count_mallocs, env=env, calls=calls,
                                   concurrency=concurrency, warmup=warmup, request_bytes=request_bytes,
                                   response_bytes=response_bytes, **extra)
        result.update(request_bytes=request_bytes, response_bytes=response_bytes)
        return result

    def body(self, request_bytes, response_bytes):
        key = (request_bytes, response_bytes)
        if key not in self.bodies:
            path = os.path.join(self.work, f"request-{request_bytes}-{response_bytes}.bin")
            with open(path, "wb") as handle:
                handle.write(frames.request_frame(request_bytes, response_bytes))
            self.bodies[key] = path
        return self.bodies[key]

    def h2load(self, server, transport, concurrency, calls, request_bytes=100, response_bytes=100, count_mallocs=False):
        """h2load's figures for `calls` calls. Its CPU and context switches per call are the
        difference between this run and a short one (`H2LOAD_SHORT_CALLS`, just before it), so
        its start-up (7–10 ms: dynamic linking, TLS context, connection) is not counted as
        per-call cost; `startup_cpu_ms` is that start-up, `whole_process_cpu_us_per_call` the
        undifferenced figure."""
        short_calls = min(H2LOAD_SHORT_CALLS, calls // 4)
        if count_mallocs or short_calls < 1:
            return self.h2load_run(server, transport, concurrency, calls, request_bytes, response_bytes, count_mallocs)
        short = self.h2load_run(server, transport, concurrency, short_calls, request_bytes, response_bytes)
        result = self.h2load_run(server, transport, concurrency, calls, request_bytes, response_bytes)
        cpu = h2load_per_call(short["process_cpu_seconds"], result["process_cpu_seconds"], short_calls, calls)
        result.update(cpu_us_per_call=cpu * 1e6,
                      context_switches_per_call=h2load_per_call(short["process_context_switches"],
                                                                result["process_context_switches"], short_calls, calls),
                      whole_process_cpu_us_per_call=result["cpu_us_per_call"],
                      startup_cpu_ms=(short["process_cpu_seconds"] - cpu * short_calls) * 1e3,
                      short_calls=short_calls)
        return result

    def h2load_command(self, server, transport, concurrency, calls, request_bytes=100, response_bytes=100):
        """h2load's command line for `calls` calls on one connection: the framed request, and the
        headers a gRPC call sends (content-type, te, the bearer token)."""
        port = server.ports[transport]
        url = (f"https://localhost:{port}" if transport == "tls" else f"http://127.0.0.1:{port}") + PATH
        return ["h2load", "-n", str(calls), "-c", "1", "-m", str(concurrency),
                "-H", "content-type: application/grpc", "-H", "te: trailers",
                "-H", f"authorization: Bearer {TOKEN}", "-d", self.body(request_bytes, response_bytes), url]

    def h2load_run(self, server, transport, concurrency, calls, request_bytes=100, response_bytes=100, count_mallocs=False):
        """One h2load process with the same framed request and bearer header, its summary
        checked by `h2load_summary`. CPU here is the whole process's (wait4)."""
        log = os.path.join(self.work, "h2load.log")
        if os.path.exists(log):
            os.remove(log)  # h2load appends to an existing log
        report = os.path.join(self.work, "h2load-mallocs.json")
        command = self.h2load_command(server, transport, concurrency, calls, request_bytes, response_bytes) + [
            "--log-file", log]
        env = {"LD_PRELOAD": self.counter, "MALLOC_COUNTER_REPORT": report} if count_mallocs else None
        stdout, cpu, rss, switches = run_checked(command, timeout=900, env=env)
        seconds, data_bytes = h2load_summary(stdout, calls, response_bytes, f"{server.name} {transport}")
        with open(log) as handle:
            latencies = sorted(int(line.split()[2]) for line in handle if line.strip())
        result = {"impl": "h2load", "server": server.name, "transport": transport, "concurrency": concurrency,
                  "calls": calls, "seconds": seconds, "calls_per_second": calls / seconds,
                  "p50_us": latencies[len(latencies) // 2],
                  "p99_us": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
                  "cpu_us_per_call": cpu * 1e6 / calls, "context_switches_per_call": switches / calls, "max_rss_kib": rss,
                  "request_bytes": request_bytes, "response_bytes": response_bytes,
                  "response_data_bytes": data_bytes, "process_cpu_seconds": cpu,
                  "process_context_switches": switches}
        if count_mallocs:
            with open(report) as handle:
                result["whole_process_mallocs"] = json.load(handle)
        return result

    def h2load_mallocs_per_call(self, server, transport, concurrency, calls):
        """h2load cannot read the counter around its calls, so its figure is the difference of
        two whole runs (1,000 calls and 1,000 + `calls`), which cancels the setup."""
        small = self.h2load_run(server, transport, concurrency, 1000, count_mallocs=True)["whole_process_mallocs"]
        large = self.h2load_run(server, transport, concurrency, 1000 + calls, count_mallocs=True)["whole_process_mallocs"]
        return {"impl": "h2load", "server": server.name, "transport": transport, "concurrency": concurrency,
                "calls": calls,
                "mallocs_per_call": (large["allocations"] - small["allocations"]) / calls,
                "reallocs_per_call": (large["reallocations"] - small["reallocations"]) / calls,
                "frees_per_call": (large["frees"] - small["frees"]) / calls,
                "malloc_bytes_per_call": (large["bytes"] - small["bytes"]) / calls}
