#!/usr/bin/env python3
"""`make bench`: swift-authrpc against grpc-swift-2, gRPC C-core's own client and h2load, on a gRPC C++ and a grpc-swift-2 server.

Builds the Benchmarks package in release mode and the gRPC C++ bench server and client, starts
both servers (h2c and TLS on loopback), and measures:

  * every client (h2load, swift-authrpc with a static token and with an AuthSession, grpc-swift-2,
    gRPC C-core's C++ callback and completion-queue clients) for the same number of 100-byte calls
    at 1 and 100 in flight, against both servers, interleaved over several rounds (A B C D A B C D
    ...), medians reported; h2load's CPU is the difference of a long and a short run (its start-up
    is not per-call cost);
  * allocations per call (mallocs, frees, bytes) of each client over its timed calls only, with
    libMallocCounter.so preloaded, checked against allocation-budget.json;
  * memory per call in flight: 10,000 calls parked by the server, against 10,000 tasks waiting on
    a bare continuation in the same process shape;
  * 1,000,000 sequential calls on one channel, RSS, live heap and open descriptors every 10,000
    (swift-authrpc, and C-core's completion-queue client beside it);
  * 4 MiB requests and responses at 1 and 8 in flight, in GB/s;
  * swift-authrpc and C-core's client with round-robin over three C++ servers against pick-first
    to one, at 100 in flight (h2c): calls/s, CPU and mallocs per call;
  * swift-authrpc on an xds:/// channel (the tests' control plane naming the same three servers)
    against a plain round-robin channel to them, at 1 and 100 in flight (h2c): CPU and mallocs per
    call, checked against issue 26's +5 % and +1 malloc (benchkit/xds.py);
  * instructions per call (callgrind, 1 in flight, h2c and TLS) of swift-authrpc with a static token
    and with an AuthSession whose token is cached, checked against issue 23's 1.03×
    (benchkit/session.py);

and writes RESULTS.md, results.json and plots beside this file. It exits non-zero when a
figure exceeds the allocation budget (mallocs per call, memory per call in flight, the async frames
of a waiting call, read from BenchClient), when the xDS
row exceeds issue 26's allowance, when the AuthSession's instructions exceed 1.03× the static
token's, or when one of issue 23's target rows regresses against
target-baseline.json by more than the noise the run measured (benchkit/regression.py). `--quick`
measures only swift-authrpc's CPU and allocations per call (h2c and TLS, 1 and 100 in flight,
against the C++ server, h2load and C-core beside it), the xDS row, its memory per call in
flight and the AuthSession's instructions, checks the budget, the xDS row and the AuthSession's
limit, and writes nothing. `--callgrind` counts instructions
per call by layer (benchkit/callgrind.py). `--compare BEFORE` runs a saved build and this one in
the same interleaved rounds and says whether a change moved CPU per call beyond the rounds' noise
(benchkit/compare.py). See ../../shared/PERFORMANCE.md.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Examples", "Sandbox"))
sys.path.insert(0, HERE)
import certs  # noqa: E402

from benchkit import (async_frames, budget, callgrind, compare, plots, profile, regression, report, session,  # noqa: E402
                      wake, xds)
from benchkit.clients import CCORE_CLIENTS, Runner  # noqa: E402
from benchkit.processes import Server, build_cxx_client, build_cxx_server, build_swift  # noqa: E402

CLIENTS = ["h2load", "authrpc", "authrpc-io", "authrpc-session", "grpc-swift", "ccore-cq", "ccore-callback"]
SERVERS = ["grpc-c++", "grpc-swift-2"]
TRANSPORTS = ["h2c", "tls"]
BIG = 4 << 20  # bytes of payload in a big message
BIG_RUNS = ((1, 96), (8, 192))  # (in flight, calls) per 4 MiB run: 0.4 to 0.8 GiB each
# The swift-authrpc clients `--quick` measures: authrpc-retry is authrpc with a retry policy its calls
# never need, for what a policy costs a call that succeeds at once.
QUICK_CLIENTS = ("authrpc", "authrpc-io", "authrpc-retry")
# What a retry policy may cost a call that succeeds at once, against the same call without one.
RETRY_POLICY_ALLOWANCE = {"mallocs": 1, "cpu_percent": 3}
# C-core's calls per run at 100 in flight in `--quick` (it makes 7,000–15,000 calls a second here:
# 200,000 would double the quick run; per-call CPU needs no more than this).
QUICK_CCORE_CALLS = 40_000
QUICK_MEMORY_ROUNDS = 3
# `--quick`'s parts, in order; `--quick --only xds` measures the xDS row alone.
QUICK_PHASES = ("small", "xds", "memory", "session")
BUDGET_SERVER = "grpc-c++"  # the allocation budget is measured against this server
BALANCED = ("grpc-c++-2", "grpc-c++-3")  # the other two C++ servers round-robin spreads over
EXPIRY_STALE_WINDOWS_MS = (0, 2000)  # before (refresh once expired) and after (refresh ahead)
EXPIRY_TOKEN_DELAY_MS = 500  # how long the token endpoint takes in the expiry phase
EXPIRY_RATE = 500  # calls a second in the expiry phase


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="only swift-authrpc's CPU and allocations per call (C++ server; h2load and C-core beside it) "
                             "and its memory per call in flight, budgets checked, nothing written")
    parser.add_argument("--profile", action="store_true",
                        help="perf profile of swift-authrpc (--transport, --concurrency) against the C++ server; writes nothing")
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions per call by layer (valgrind --tool=callgrind, 1 in flight, --transport, "
                             "--callgrind-calls) of swift-authrpc against the C++ server; writes nothing")
    parser.add_argument("--callgrind-calls", type=int, default=300, help="timed calls under callgrind")
    parser.add_argument("--record", metavar="LABEL",
                        help="with --callgrind: keep the breakdown in CALLGRIND.md under LABEL (e.g. before, after)")
    parser.add_argument("--compare", metavar="BEFORE",
                        help="run a saved BenchClient build (BEFORE, e.g. a copy of .build/release/BenchClient made "
                             "before the change) and this build in the same interleaved rounds (9 by default) at "
                             "--concurrency in flight, h2c and TLS, and print each round's after/before ratios; "
                             "writes nothing")
    parser.add_argument("--transport", choices=TRANSPORTS, default="h2c", help="for --profile and --callgrind")
    parser.add_argument("--concurrency", type=int, default=100, help="for --profile and --compare")
    parser.add_argument("--client", choices=QUICK_CLIENTS + ("authrpc-session",) + CCORE_CLIENTS + ("h2load",),
                        default="authrpc",
                        help="for --profile (swift-authrpc's) and --callgrind (any, C-core's and h2load too)")
    parser.add_argument("--update-budget", action="store_true",
                        help="write allocation-budget.json (and, in a full run, target-baseline.json) from this run's "
                             "figures (plus a margin) instead of checking them")
    parser.add_argument("--rounds", type=int, help="interleaved rounds; medians are reported (3; 5 with --quick)")
    parser.add_argument("--calls", type=int,
                        help="calls per run at 100 in flight (20000; 200000 with --quick, whose retry-policy "
                             "figure a quarter-second run is too short to show within its 3 %% bound)")
    parser.add_argument("--calls-sequential", type=int, default=10000, help="calls per run at 1 in flight")
    parser.add_argument("--in-flight", type=int, default=10000, help="calls in flight for the memory figure")
    parser.add_argument("--million", type=int, default=1_000_000, help="sequential calls for the long run (0 skips it)")
    parser.add_argument("--big-rounds", type=int, default=3, help="interleaved rounds of the 4 MiB runs")
    parser.add_argument("--only", metavar="PHASES",
                        help="run only these phases (comma-separated: small, allocations, memory, big, million, balancing, "
                             "xds, expiry, session; with --quick: small, xds, memory, session); prints their figures "
                             "and writes nothing")
    parser.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"))
    parser.add_argument("--render", metavar="RESULTS_JSON",
                        help="only rewrite RESULTS.md and the plots from a results.json of an earlier run")
    arguments = parser.parse_args()
    if arguments.compare and (arguments.quick or arguments.profile or arguments.callgrind or arguments.only):
        parser.error("--compare runs on its own (not with --quick, --profile, --callgrind or --only)")
    if arguments.compare and not (os.path.isfile(arguments.compare) and os.access(arguments.compare, os.X_OK)):
        parser.error(f"--compare needs an executable BenchClient build made before the change, not {arguments.compare!r}")
    if arguments.profile and arguments.client == "h2load":
        parser.error("--profile profiles BenchClient and CxxClient; h2load is counted by --callgrind")
    if arguments.rounds is None:
        arguments.rounds = 9 if arguments.compare else 5 if arguments.quick else 3
    if arguments.calls is None:
        arguments.calls = 200_000 if arguments.quick else 100_000 if arguments.compare else 20_000
    if arguments.render:
        with open(arguments.render) as handle:
            results = json.load(handle)
        results["big_runs"] = [tuple(run) for run in results["big_runs"]]
        if isinstance(results["phases"], dict):  # results.json of the first version of this script
            results["phases"] = list(results["phases"].items())
        settings = argparse.Namespace(**{**results["settings"], "output": arguments.output})
        print(report.write(settings, results))
        plots.draw(os.path.dirname(arguments.output), results)
        return

    bin_dir = build_swift()
    cxx_server = build_cxx_server()
    cxx_client = None if arguments.profile or arguments.compare else build_cxx_client()
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="authrpc-bench-")
    servers = {}
    try:
        paths = certs.generate(work)
        runner = Runner(bin_dir, work, paths["ca_cert"], ccore_client=cxx_client)
        servers[BUDGET_SERVER] = Server(BUDGET_SERVER, [cxx_server, paths["server_cert"], paths["server_key"]])
        if arguments.profile:
            # Five times a timed run's calls, so start-up (dynamic linking) is a small share of the samples.
            profile.run(runner, servers[BUDGET_SERVER], arguments.transport, arguments.concurrency,
                        5 * (arguments.calls if arguments.concurrency > 1 else arguments.calls_sequential), arguments.client)
            over = []
        elif arguments.compare:
            compare.run(arguments, runner, servers[BUDGET_SERVER], QUICK_CLIENTS[:2], TRANSPORTS, work)
            over = []
        elif arguments.callgrind:
            callgrind.run(runner, servers[BUDGET_SERVER], arguments.transport, arguments.callgrind_calls, arguments.client,
                          arguments.record)
            over = []
        elif arguments.quick:
            phases = selected_phases(arguments, QUICK_PHASES)
            if "xds" in phases:
                start_balanced(servers, cxx_server, paths)
            over = quick(arguments, runner, servers, phases)
        else:
            servers["grpc-swift-2"] = Server("grpc-swift-2", [os.path.join(bin_dir, "BenchServer"),
                                                              paths["server_cert"], paths["server_key"]])
            if {"balancing", "xds"} & set(selected_phases(arguments, PHASES)):
                start_balanced(servers, cxx_server, paths)
            over = full(arguments, runner, servers, started)
    finally:
        for server in servers.values():
            server.close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"bench: {time.monotonic() - started:.0f} s after the build")
    if over:
        print("\nbench: FAILED: over the committed budget (Benchmarks/allocation-budget.json), over issue 26's "
              "allowance for a call on an xds:/// channel (benchkit/xds.py), or regressed against the committed "
              "target rows (Benchmarks/target-baseline.json):", file=sys.stderr)
        for line in over:
            print("  " + line, file=sys.stderr)
        print("Calls now cost more than the budget or the baseline allows. Find why (bench.py --profile or --callgrind, "
              "or the per-call figures above); if it is intended, say why in the commit and rewrite the budget and "
              "baseline with `Benchmarks/bench.py --update-budget`.", file=sys.stderr)
        sys.exit(1)


def selected_phases(arguments, phases):
    """The phases `--only` names (all of `phases` without it); an unknown name ends the run."""
    chosen = arguments.only.split(",") if arguments.only else list(phases)
    unknown = [name for name in chosen if name not in phases]
    if unknown:
        raise SystemExit(f"bench: unknown phase {', '.join(unknown)} (phases: {', '.join(phases)})")
    return chosen


def start_balanced(servers, cxx_server, paths):
    """The other C++ servers round-robin and the xDS cluster spread over."""
    for name in BALANCED:
        servers[name] = Server(name, [cxx_server, paths["server_cert"], paths["server_key"]])


def progress(label, result, *keys):
    figures = "  ".join(f"{key} {result[key]:.4g}" for key in keys if key in result)
    print(f"{label:58} {figures}", flush=True)


def quick(arguments, runner, servers, phases):
    """`phases` of QUICK_PHASES: CPU and allocations per call for swift-authrpc, its tasks on the
    default executor and on the channel's, with h2load's and C-core's CPU beside them (for the
    ratios), the allocation budget checked; the xDS row, checked; memory per call in flight, its
    budget checked; the AuthSession row in instructions, checked."""
    server = servers[BUDGET_SERVER]
    over = settle_frames(arguments, runner.client)
    if "small" in phases:
        over += quick_calls(arguments, runner, server)
    if "xds" in phases:
        over += print_xds_row(xds_row(arguments, runner, servers))
    if "memory" in phases:
        own = quick_memory(arguments, runner, server)
        if arguments.update_budget:
            budget.update_memory(own)
            return over
        memory_over, lines = budget.check_memory(own, server.name)
        print("  " + "\n  ".join(lines))
        over += memory_over
    if "session" in phases:
        over += print_session_row(session.measure(runner, server, TRANSPORTS))
    return over


def print_session_row(figures):
    """Prints the AuthSession's instructions against the static token's; returns what is over."""
    over, lines = session.check(figures)
    print("\nAuthSession (cached token) vs static token, instructions per call (callgrind, 1 in flight; issue 23):\n  "
          + "\n  ".join(lines))
    return over


def session_row(arguments, runner, servers):
    return session.measure(runner, servers[BUDGET_SERVER], TRANSPORTS)


def quick_calls(arguments, runner, server):
    """`--quick`'s CPU and allocations per call (see `quick`); returns what is over the budget."""
    runs, mallocs, rows, ccore_rows = {}, {}, [], []
    for transport in TRANSPORTS:
        for concurrency, calls in ((1, arguments.calls_sequential), (100, arguments.calls)):
            ccore_calls = min(calls, QUICK_CCORE_CALLS)
            for _ in range(arguments.rounds):
                for client in ("h2load",) + QUICK_CLIENTS + CCORE_CLIENTS:
                    n = ccore_calls if client in CCORE_CLIENTS else calls
                    runs.setdefault((client, transport, concurrency), []).append(
                        runner.load(client, server, transport, concurrency, n))

            def mid(client, key):
                return statistics.median(r[key] for r in runs[(client, transport, concurrency)])
            for client in QUICK_CLIENTS:
                counted = runner.load(client, server, transport, concurrency, calls, count_mallocs=True)
                mallocs[(client, transport, concurrency)] = counted["mallocs_per_call"]
                rows.append((client, transport, concurrency, mid(client, "cpu_us_per_call"), mid("h2load", "cpu_us_per_call"),
                             mid(client, "context_switches_per_call"), mid("h2load", "context_switches_per_call"), counted,
                             min((mid(c, "cpu_us_per_call"), c) for c in CCORE_CLIENTS)))
            for client in CCORE_CLIENTS + ("h2load",):
                counted = (runner.h2load_mallocs_per_call(server, transport, concurrency, calls) if client == "h2load" else
                           runner.load(client, server, transport, concurrency, ccore_calls, count_mallocs=True))
                ccore_rows.append((client, transport, concurrency, mid(client, "cpu_us_per_call"),
                                   mid(client, "context_switches_per_call"), mid(client, "p50_us"),
                                   mid(client, "calls_per_second"), counted))
    print(f"\nswift-authrpc against {server.name}, medians of {arguments.rounds} interleaved rounds "
          f"({arguments.calls_sequential} calls at 1 in flight, {arguments.calls} at 100; C-core {QUICK_CCORE_CALLS} at 100); "
          "switches = context switches; h2load's CPU without its start-up (long run − short run); "
          "C-core = the cheaper of its CQ and callback clients")
    print(f"{'client':13} {'transport':9} {'in flight':>9} {'CPU µs/call':>12} {'h2load µs':>10} {'ratio':>6} "
          f"{'C-core µs':>10} {'ratio':>6} {'switches':>9} {'h2load':>7} {'mallocs':>8} {'frees':>8} {'bytes':>8} {'budget':>7}")
    for client, transport, concurrency, mine, theirs, switches, their_switches, counted, (ccore, _) in rows:
        limit = budget.limit_for(client, transport, concurrency)
        print(f"{client:13} {transport:9} {concurrency:9} {mine:12.1f} {theirs:10.1f} {mine / theirs:5.2f}× "
              f"{ccore:10.1f} {mine / ccore:5.2f}× {switches:9.2f} "
              f"{their_switches:7.2f} {counted['mallocs_per_call']:8.2f} {counted['frees_per_call']:8.2f} "
              f"{counted['malloc_bytes_per_call']:8.0f} {'-' if limit is None else limit:>7}")
    print(f"\ngRPC C-core's own clients (C++ 1.51) and h2load, same server and rounds (h2load's mallocs: a "
          f"1,000-call run subtracted from a longer one)")
    print(f"{'client':15} {'transport':9} {'in flight':>9} {'CPU µs/call':>12} {'switches':>9} {'p50 µs':>8} "
          f"{'calls/s':>8} {'mallocs':>8} {'bytes':>8}")
    for client, transport, concurrency, cpu, switches, p50, rate, counted in ccore_rows:
        print(f"{client:15} {transport:9} {concurrency:9} {cpu:12.1f} {switches:9.2f} {p50:8.0f} {rate:8.0f} "
              f"{counted['mallocs_per_call']:8.2f} {counted['malloc_bytes_per_call']:8.0f}")
    print_retry_policy_cost(rows)
    print_wake_cost(rows, ccore_rows)
    return settle_budget(arguments, mallocs, server.name)


def print_wake_cost(rows, ccore_rows):
    """At 1 in flight: the context switches a call makes beyond C-core's CQ client and a call on
    Channel.executor, priced at this machine's cost of one thread wake, measured now."""
    figures = wake.measure(wake.build())
    print(f"\nthread wakes (WakeCost/wake_cost.c, {figures['handoffs']:.0f} handoffs between two threads now): one wake "
          f"costs {figures['cpu_us_per_handoff']:.2f} µs CPU, {figures['wall_us_per_handoff']:.2f} µs wall, "
          f"{figures['context_switches_per_handoff']:.2f} switches")
    references = {(client, transport): (cpu, switches)
                  for client, transport, concurrency, cpu, switches, *_ in ccore_rows if concurrency == 1}
    references.update({(client, transport): (cpu, switches)
                       for client, transport, concurrency, cpu, _, switches, *_ in rows if concurrency == 1})
    for transport in TRANSPORTS:
        if ("authrpc", transport) not in references:
            continue
        mine, switches = references[("authrpc", transport)]
        for name in ("ccore-cq", "authrpc-io"):
            if (name, transport) not in references:
                continue
            extra, priced, difference = wake.explained(mine, switches, *references[(name, transport)], figures)
            print(f"  {transport} 1 in flight: authrpc makes {extra:.2f} more switches per call than {name}: "
                  f"{priced:.1f} µs of the {difference:.1f} µs CPU between them")


def quick_memory(arguments, runner, server):
    """The library's own RSS per call in flight (the memory phase, fewer rounds): `in_flight`
    calls parked by the server against as many bare continuations, interleaved."""
    records = []
    for _ in range(QUICK_MEMORY_ROUNDS):
        for impl in ("baseline", "authrpc"):
            records.append(runner.bench_client("inflight", impl, server, "h2c", count_mallocs=True,
                                               calls=arguments.in_flight))
    figures = report.inflight_figures({"inflight": records}, ("baseline", "authrpc"))
    print(f"\nmemory per call in flight ({arguments.in_flight:,} parked, h2c, medians of {QUICK_MEMORY_ROUNDS} rounds): "
          f"authrpc {figures['authrpc_rss']:.0f} B, bare continuation {figures['baseline_rss']:.0f} B, "
          f"library's own {figures['own_rss']:.0f} B (heap {figures['own_heap']:.0f} B)")
    print("\n".join("  " + line for line in report.held_blocks_table(records) if line))
    return figures["own_rss"]


def print_retry_policy_cost(rows):
    """authrpc-retry against authrpc, run by run: what a retry policy costs a call that needs no retry."""
    by_key = {(client, transport, concurrency): (cpu, counted)
              for client, transport, concurrency, cpu, _, _, _, counted, _ in rows}
    print(f"\nretry policy, calls that succeed at once (authrpc-retry vs authrpc; allowed: "
          f"+{RETRY_POLICY_ALLOWANCE['mallocs']} malloc, +{RETRY_POLICY_ALLOWANCE['cpu_percent']} % CPU)")
    for (client, transport, concurrency), (cpu, counted) in sorted(by_key.items()):
        if client != "authrpc-retry" or ("authrpc", transport, concurrency) not in by_key:
            continue
        plain_cpu, plain = by_key[("authrpc", transport, concurrency)]
        extra_mallocs = counted["mallocs_per_call"] - plain["mallocs_per_call"]
        extra_cpu = (cpu / plain_cpu - 1) * 100
        print(f"  {transport:4} {concurrency:3} in flight: {extra_mallocs:+.2f} mallocs/call, {extra_cpu:+.1f} % CPU/call")


def settle_frames(arguments, binary):
    """The async frames a waiting call keeps (read from BenchClient's binary, exact) against
    their budget; `--update-budget` writes them."""
    measured = budget.call_frames(async_frames.async_function_pointers(binary))
    if arguments.update_budget:
        budget.update_frames(measured)
        return []
    over, lines = budget.check_frames(measured)
    print("\nasync frames of a waiting call (bytes each keeps while the call waits):\n  " + "\n  ".join(lines))
    return over


def settle_budget(arguments, mallocs, server_name):
    if arguments.update_budget:
        budget.update(mallocs, server_name)
        print(f"bench: wrote {budget.PATH}")
        return []
    over, lines = budget.check(mallocs, server_name)
    if lines:
        print("\nallocation budget:\n  " + "\n  ".join(lines))
    return over


def in_flight_runs(arguments):
    """(calls in flight, calls) of the small-call runs."""
    return ((1, arguments.calls_sequential), (100, arguments.calls), (1000, arguments.calls))


def small_calls(arguments, runner, servers):
    """Every client against both servers at 1, 100 and 1,000 in flight, interleaved rounds."""
    load = []
    for server_name in SERVERS:
        for transport in TRANSPORTS:
            for concurrency, calls in in_flight_runs(arguments):
                for round_number in range(arguments.rounds):
                    for client in CLIENTS:
                        result = runner.load(client, servers[server_name], transport, concurrency, calls)
                        load.append(result)
                        progress(f"round {round_number + 1} {server_name:12} {transport} c={concurrency:<3} {client}", result,
                                 "calls_per_second", "p50_us", "cpu_us_per_call")
    return load


def allocations(arguments, runner, servers):
    """Allocations per call over the timed calls only (counter preloaded), against both servers."""
    records = []
    for server_name in SERVERS:
        for transport in TRANSPORTS:
            for concurrency, calls in in_flight_runs(arguments):
                for client in ("authrpc", "authrpc-io", "authrpc-session", "grpc-swift", "noop") + CCORE_CLIENTS:
                    result = runner.load(client, servers[server_name], transport, concurrency, calls, count_mallocs=True)
                    records.append(result)
                    progress(f"mallocs {server_name:12} {transport} c={concurrency:<3} {client}", result,
                             "mallocs_per_call", "frees_per_call", "malloc_bytes_per_call")
                result = runner.h2load_mallocs_per_call(servers[server_name], transport, concurrency, calls)
                records.append(result)
                progress(f"mallocs {server_name:12} {transport} c={concurrency:<3} h2load", result, "mallocs_per_call")
    return records


def memory_in_flight(arguments, runner, servers):
    """10,000 calls parked by the C++ server against 10,000 tasks on a bare continuation, and
    C-core's client (completion queue) holding as many."""
    records = []
    for round_number in range(arguments.rounds):
        for impl in ("baseline", "authrpc", "grpc-swift", "ccore-cq"):
            result = runner.bench_client("inflight", impl, servers["grpc-c++"], "h2c", count_mallocs=True,
                                         calls=arguments.in_flight)
            records.append(result)
            progress(f"round {round_number + 1} in flight {arguments.in_flight} {impl}", result,
                     "rss_growth_per_call_bytes", "heap_growth_per_call_bytes")
    return records


def big_messages(arguments, runner, servers):
    """4 MiB requests and responses at 1 and 8 in flight, interleaved rounds."""
    records = []
    for server_name in SERVERS:
        for transport in TRANSPORTS:
            for direction in ("response", "request"):
                request_bytes, response_bytes = (BIG, 0) if direction == "request" else (0, BIG)
                for concurrency, calls in BIG_RUNS:
                    for round_number in range(arguments.big_rounds):
                        for client in ("h2load", "authrpc", "authrpc-io", "grpc-swift") + CCORE_CLIENTS:
                            result = runner.load(client, servers[server_name], transport, concurrency, calls,
                                                 request_bytes=request_bytes, response_bytes=response_bytes, warmup=4)
                            result.update(direction=direction, gb_per_second=calls * BIG / result["seconds"] / 1e9)
                            records.append(result)
                            progress(f"round {round_number + 1} 4 MiB {direction}s {server_name:12} {transport} c={concurrency} {client}",
                                     result, "gb_per_second", "cpu_us_per_call")
    return records


def balancing(arguments, runner, servers):
    """Round-robin over three C++ servers (one connection each) against pick-first to one, at 100
    in flight over h2c, interleaved rounds, swift-authrpc and C-core's completion-queue client
    (its `round_robin` policy over the same `ipv4:` target); then each one's allocations."""
    first = servers[BUDGET_SERVER]
    ports = ",".join(str(servers[name].ports["h2c"]) for name in (BUDGET_SERVER,) + BALANCED)
    runs = {label: (client, extra) for client in ("authrpc", "ccore-cq")
            for label, extra in ((client, {}), (f"{client}-rr", {"ports": ports, "lb": "round_robin"}))}
    records = []
    for round_number in range(arguments.rounds):
        for label, (client, extra) in runs.items():
            result = runner.load(client, first, "h2c", 100, arguments.calls, **extra)
            result.update(impl=label, server="grpc-c++", phase="balancing")
            records.append(result)
            progress(f"round {round_number + 1} balancing h2c c=100 {label}", result,
                     "calls_per_second", "p50_us", "cpu_us_per_call")
    for label, (client, extra) in runs.items():
        result = runner.load(client, first, "h2c", 100, arguments.calls, count_mallocs=True, **extra)
        result.update(impl=label, server="grpc-c++", phase="balancing", counted=True)
        records.append(result)
        progress(f"mallocs balancing h2c c=100 {label}", result, "mallocs_per_call")
    return records


def xds_row(arguments, runner, servers):
    """Issue 26's row: swift-authrpc on an `xds:///` channel, whose control plane (the tests',
    Tests/Peers/xds_control_plane.py) names the three C++ servers as one round-robin cluster,
    against a plain round-robin channel (`ipv4:` target) to the same servers; h2c, 1 and 100 in
    flight, interleaved rounds (order swapped every other round), then one counted run of each for
    the mallocs. Returns the records (benchkit/xds.py reads them)."""
    first = servers[BUDGET_SERVER]
    ports = [servers[name].ports["h2c"] for name in (BUDGET_SERVER,) + BALANCED]
    plane = xds.ControlPlane(os.path.join(runner.work, "xds-control-plane"))
    try:
        plane.command(xds.cluster_command(ports))
        runs = {xds.ROUND_ROBIN: {"ports": ",".join(map(str, ports)), "lb": "round_robin"},
                xds.XDS: {"target": xds.TARGET, "env": {"GRPC_XDS_BOOTSTRAP_CONFIG": xds.bootstrap(plane.port)}}}
        records = []
        for concurrency, calls in ((1, arguments.calls_sequential), (100, arguments.calls)):
            for round_number in range(arguments.rounds):
                for label in xds.round_order(round_number):
                    result = runner.load("authrpc", first, "h2c", concurrency, calls, **runs[label])
                    result.update(impl=label, phase="xds")
                    records.append(result)
                    progress(f"round {round_number + 1} xds row h2c c={concurrency:<3} {label}", result,
                             "calls_per_second", "cpu_us_per_call")
            for label, extra in runs.items():
                result = runner.load("authrpc", first, "h2c", concurrency, calls, count_mallocs=True, **extra)
                result.update(impl=label, phase="xds", counted=True)
                records.append(result)
                progress(f"mallocs xds row h2c c={concurrency:<3} {label}", result, "mallocs_per_call")
    finally:
        plane.close()
    return records


def print_xds_row(records):
    """Prints the xDS row and its check; returns the lines over issue 26's standard."""
    found = xds.rows(records)
    print(f"\nxDS row (issue 26): {xds.XDS} (xds:/// channel, one ROUND_ROBIN EDS cluster) vs {xds.ROUND_ROBIN} "
          f"(ipv4: target, round robin) over the same {1 + len(BALANCED)} C++ servers, h2c; CPU: medians of the "
          "interleaved rounds, ratio = median of the per-round ratios; mallocs: one counted run each")
    print("\n".join(xds.table(found)))
    over, lines = xds.check(found)
    print("  " + "\n  ".join(lines))
    return over


def sequential_calls(arguments, runner, servers):
    """A million calls one after another on one channel, sampled every 10,000: swift-authrpc's
    run, with C-core's completion-queue client's beside it (`ccore`)."""
    runs = {}
    for client in ("authrpc", "ccore-cq"):
        print(f"{arguments.million} sequential calls ({client}, grpc-c++, h2c) ...", flush=True)
        runs[client] = runner.bench_client("sequential", client, servers["grpc-c++"], "h2c", count_mallocs=True,
                                           timeout=3600, calls=arguments.million, sample_every=10000)
    return {**runs["authrpc"], "ccore": runs["ccore-cq"]}


def token_expiry(arguments, runner, servers):
    """Calls at a steady rate across a token expiry while the token endpoint takes 500 ms: stale
    window 0 (refresh only once the token expires: the old behaviour) against a stale window
    (refresh ahead), interleaved rounds."""
    records = []
    for round_number in range(arguments.rounds):
        for stale_window_ms in EXPIRY_STALE_WINDOWS_MS:
            result = runner.bench_client("expiry", "authrpc-expiring", servers["grpc-c++"], "h2c", calls=0, warmup=50,
                                         stale_window_ms=stale_window_ms, token_delay_ms=EXPIRY_TOKEN_DELAY_MS,
                                         usable_for_ms=2500, rate=EXPIRY_RATE, seconds=4)
            result.update(stale_window_ms=stale_window_ms)
            records.append(result)
            progress(f"round {round_number + 1} expiry stale window {stale_window_ms} ms", result,
                     "p50_us", "p99_us", "max_us", "calls_over_100ms")
    return records


# name: (results key, what the phase measures)
PHASES = {
    "small": ("load", small_calls),
    "allocations": ("allocations", allocations),
    "memory": ("inflight", memory_in_flight),
    "big": ("big", big_messages),
    "million": ("million", sequential_calls),
    "balancing": ("balancing", balancing),
    "xds": ("xds", xds_row),
    "expiry": ("expiry", token_expiry),
    "session": ("session", session_row),
}


def full(arguments, runner, servers, started):
    phases = selected_phases(arguments, PHASES)
    if not arguments.million and "million" in phases:
        phases.remove("million")
    results = {"settings": vars(arguments).copy(), "phases": [], "big_runs": BIG_RUNS,
               "commit": report.current_commit(), "date": time.strftime("%Y-%m-%d")}
    for name in phases:
        phase_started = time.monotonic()
        key, measure = PHASES[name]
        results[key] = measure(arguments, runner, servers)
        results["phases"].append([name, time.monotonic() - phase_started])
    results["flow_control"] = report.flow_control({name: servers[name] for name in SERVERS if name in servers})
    results["duration_seconds"] = time.monotonic() - started

    over = settle_frames(arguments, runner.client)
    if "allocations" in results:
        mallocs = {(r["impl"], r["transport"], r["concurrency"]): r["mallocs_per_call"] for r in results["allocations"]
                   if r["server"] == BUDGET_SERVER and r["impl"] in ("authrpc", "authrpc-session")}
        over += settle_budget(arguments, mallocs, BUDGET_SERVER)
    if "inflight" in results:
        own = report.inflight_figures(results)["own_rss"]
        if arguments.update_budget:
            budget.update_memory(own)
        else:
            memory_over, lines = budget.check_memory(own, BUDGET_SERVER)
            print("\nmemory budget:\n  " + "\n  ".join(lines))
            over += memory_over
    if "xds" in results:
        xds_over, lines = xds.check(xds.rows(results["xds"]))
        print("\nxDS row (issue 26):\n  " + "\n  ".join(lines))
        over += xds_over
    if "session" in results:
        over += print_session_row(results["session"])
    if not arguments.only:
        # Only a whole run measures every row in the same conditions as the baseline's run.
        regressions, lines = regression.check(results, ROOT, update=arguments.update_budget)
        results["regression"] = lines
        if lines:
            print("\ntarget rows against target-baseline.json (allowed: this run's and the baseline's "
                  "round-to-round spreads added, at least their typical relative spread):\n  " + "\n  ".join(lines))
        over += regressions
    if arguments.only:
        # A partial run prints its sections and leaves the committed results alone.
        print(report.render(arguments, results))
        return over
    with open(os.path.join(os.path.dirname(arguments.output), "results.json"), "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(report.write(arguments, results))
    plots.draw(os.path.dirname(arguments.output), results)
    return over


if __name__ == "__main__":
    main()
