"""RESULTS.md: every figure of one `make bench` run side by side, the ratios against h2load,
gRPC C-core's own client and grpc-swift-2, and the targets of shared/PERFORMANCE.md."""

import glob
import os
import re
import statistics
import subprocess
import time

from . import budget, session, xds
from .processes import ROOT

CLIENT_NAMES = {"h2load": "h2load", "authrpc": "authrpc", "authrpc-io": "authrpc on Channel.executor",
                "authrpc-retry": "authrpc with a retry policy", "authrpc-session": "authrpc-session",
                "grpc-swift": "grpc-swift-2", "noop": "harness alone",
                "ccore-cq": "C-core CQ (C++ 1.51)", "ccore-callback": "C-core callback (C++ 1.51)"}
CCORE = ("ccore-cq", "ccore-callback")
KIB, MIB = 1024, 1024 * 1024


def median(records, key, **match):
    values = [r[key] for r in records if all(r.get(k) == v for k, v in match.items()) and key in r]
    return statistics.median(values) if values else float("nan")


def ratio(mine, theirs):
    return mine / theirs if theirs and theirs == theirs else float("nan")


def verdict(ok):
    return "met" if ok else "**not met**"


def write(arguments, results):
    """Writes RESULTS.md; returns its text. The sections a run writes replace their former text;
    every other `## ` section of the file (the analyses written by hand: profiles, before/after
    tables of a change) is kept, in its order, after them."""
    text = render(arguments, results)
    if os.path.exists(arguments.output):
        with open(arguments.output) as handle:
            kept = hand_written_sections(handle.read(), text)
        if kept:
            print("RESULTS.md keeps its sections written by hand: " + "; ".join(title for title, _ in kept))
            # One blank line between sections, however many the file had: a run rewrites the
            # file, and a second run must not add to the first one's blank lines.
            text += "\n" + "\n".join(body.rstrip("\n") + "\n" for _, body in kept)
    with open(arguments.output, "w") as handle:
        handle.write(text)
    return text


def sections(text):
    """`text` cut at its `## ` headings: [(heading, the section's text)]; what precedes the first
    heading is left out (the report's title and introduction, which a run always writes)."""
    found, lines = [], text.splitlines(keepends=True)
    for line in lines:
        if line.startswith("## "):
            found.append([line[3:].strip(), line])
        elif found:
            found[-1][1] += line
    return [(title, body) for title, body in found]


def hand_written_sections(previous, generated):
    """The sections of `previous` whose heading `generated` does not have."""
    written = {title for title, _ in sections(generated)}
    return [(title, body if body.endswith("\n") else body + "\n")
            for title, body in sections(previous) if title not in written]


def render(arguments, results):
    """The report of the phases `results` holds."""
    lines = header(arguments, results) + summary(results)
    if "load" in results:
        lines += small_calls(results)
    if "allocations" in results:
        lines += allocations(results)
    lines += memory(results) + million(results)
    if "big" in results:
        lines += big_messages(results)
    if "balancing" in results:
        lines += balancing(results)
    if "xds" in results:
        lines += xds_section(results)
    if "expiry" in results:
        lines += token_expiry(results)
    lines += regression_section(results)
    lines += callgrind_section()
    lines += flow_control_section(results)
    return "\n".join(lines) + "\n"


def callgrind_section():
    """The recorded instruction breakdowns (CALLGRIND.md, `bench.py --callgrind --record`), one
    level down, so a run's RESULTS.md keeps the before and after of the core."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "CALLGRIND.md")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        text = handle.read().splitlines()
    return [("#" + line) if line.startswith("#") else line for line in text] + [""]


def regression_section(results):
    """What `make bench` checked against target-baseline.json (benchkit/regression.py)."""
    checked = results.get("regression")
    if not checked:
        return []
    return ["## Regression guard", "",
            "Issue 23's target rows against `target-baseline.json`: each row is computed round by round (interleaved "
            "rounds pair each client with h2load or C-core under the same load), its figure the median and its noise "
            "the spread (max − min) of the per-round values; a row fails `make bench` when it is worse than the "
            "baseline by more than this run's and the baseline's noise added together, and at least both runs' typical "
            "relative noise (median over their rows of spread / figure) times the figure.", ""] + \
        [f"- {line}" for line in checked] + [""]


def known(value):
    return value == value  # not NaN


def current_commit():
    """The checkout's commit, short; empty outside a git checkout."""
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()


def header(arguments, results):
    # A run keeps its commit and day in results.json, so `--render` later says which build ran.
    commit = results.get("commit") or current_commit()
    day = results.get("date") or time.strftime('%Y-%m-%d')
    phases = ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in results["phases"])
    return [
        "# Benchmark results",
        "",
        f"`make bench` on {day} at commit `{commit or 'unknown'}`: {os.cpu_count()} cores "
        f"(shared with other work: ±15 % between runs; ratios within one run hold), loopback. "
        f"The run took {results['duration_seconds'] / 60:.1f} minutes after the build ({phases}).",
        "",
        "- Servers: **grpc-c++** (gRPC C++ 1.51 callback API, `CxxServer/bench_server.cc`) and **grpc-swift-2** "
        "(`Sources/BenchServer`). Both answer `grpc.testing.TestService/UnaryCall` with `response_size` zero bytes.",
        f"- Small calls: 100-byte request and response payloads; {arguments.calls_sequential} calls at 1 in flight, "
        f"{arguments.calls} at 100 and at 1,000 in flight, on one connection, after 200 warm-up calls; medians of {arguments.rounds} "
        "interleaved rounds (h2load, authrpc, authrpc on Channel.executor, authrpc-session, grpc-swift-2, C-core CQ, "
        "C-core callback, then again). "
        "`authrpc` runs its tasks on the default (global) executor; `authrpc on Channel.executor` runs them with "
        "`withTaskExecutorPreference(channel.executor)`, on the connection's I/O thread.",
        "- gRPC C-core's own client (`CxxClient/bench_client.cc`, Debian libgrpc++ 1.51): **C-core CQ** is the "
        "completion-queue API with one queue polled by the calling thread, **C-core callback** the callback API "
        "(completions on gRPC's threads start the next call); one channel, a fresh `ClientContext` with the same bearer "
        "token per call, CPU and mallocs read around the timed calls like BenchClient's. \"C-core best\" is the "
        "cheaper of the two.",
        "- CPU is the client's own user+sys time per call: for the Swift and C-core clients over the timed calls only "
        "(getrusage around them); for h2load, which cannot read its own, the difference between the run and a "
        "1,000-call run just before it (wait4 of each), so its start-up (7–10 ms) is not counted as per-call cost. "
        "Context switches (voluntary and involuntary, all threads) are counted the same way: at 1 in flight they "
        "are most of the CPU gap.",
        "- Allocations: `libMallocCounter.so` preloaded (LD_PRELOAD) counts every malloc/calloc/realloc/memalign and "
        "free of the client process; BenchClient reads it just before and after the timed calls, so set-up and "
        "warm-up are excluded. h2load's figure is the difference between a 1,000-call and a longer run. "
        "Allocation runs are separate from the timed runs, so counting never slows the CPU figures.",
        "",
    ]


# Round four's targets (PERFORMANCE.md, issue 23), in one place: mallocs per call, the library's
# own memory per call in flight, and, against h2load on the default executor, the p50 at 1 in
# flight, calls/s at 100 and 4 MiB throughput; CPU per call is `cpu_target`.
MALLOCS_TARGET = 8
MEMORY_TARGET_BYTES = KIB
P50_TARGET = 1.1
RATE_TARGET = 1.0
BIG_TARGET = 0.9


def cpu_target(client, concurrency):
    """The most CPU per call allowed, as a multiple of h2load's: 1.1× on `Channel.executor`; on the
    default executor 1.3× at 100 in flight and 1.8× at 1, where a cooperative thread's wake is paid
    per call (C-core's client must still cost more)."""
    if client == "authrpc-io":
        return 1.1
    return 1.3 if concurrency > 1 else 1.8


def summary(results):
    load, allocs, big = results.get("load", []), results.get("allocations", []), results.get("big", [])
    rows = []

    def row(figure, server, mine, floor, swift, target, ok, unit="", digits=1, ccore=float("nan")):
        if not known(mine):
            return
        def show(value):
            return f"{value:.{digits}f}{unit}" if known(value) else ""
        def times(theirs):
            return f"{ratio(mine, theirs):.2f}×" if known(theirs) else ""
        mark = "" if ok is None else verdict(ok)
        rows.append(f"| {figure} | {server} | {show(mine)} | {show(floor)} | {show(ccore)} | {show(swift)} | "
                    f"{times(floor)} | {times(ccore)} | {times(swift)} | {target} | {mark} |")

    for server in ("grpc-c++", "grpc-swift-2"):
        for transport in ("h2c", "tls"):
            def fig(client, concurrency, key, records=load):
                return median(records, key, impl=client, server=server, transport=transport, concurrency=concurrency)

            def best(concurrency, key, records=load, pick=min):
                values = [v for v in (fig(c, concurrency, key, records) for c in CCORE) if known(v)]
                return pick(values) if values else float("nan")
            for client, how in (("authrpc", ""), ("authrpc-io", ", on Channel.executor")):
                for concurrency in (100, 1):
                    mine, floor, swift = (fig(c, concurrency, "cpu_us_per_call") for c in (client, "h2load", "grpc-swift"))
                    ccore = best(concurrency, "cpu_us_per_call")
                    most = cpu_target(client, concurrency)
                    row(f"CPU per call, {transport}, {concurrency} in flight{how}", server, mine, floor, swift,
                        f"≤ {most}× h2load, ≤ 0.5× grpc-swift-2, < C-core best",
                        ratio(mine, floor) <= most and ratio(mine, swift) <= 0.5 and not ratio(mine, ccore) >= 1,
                        " µs", ccore=ccore)
                # Round four sets the p50 and calls/s targets for the default executor; the
                # `Channel.executor` rows keep round one's.
                latency, rate = (P50_TARGET, RATE_TARGET) if client == "authrpc" else (1.15, 0.9)
                mine, floor, swift = (fig(c, 1, "p50_us") for c in (client, "h2load", "grpc-swift"))
                row(f"p50 latency, {transport}, 1 in flight{how}", server, mine, floor, swift,
                    f"≤ {latency}× h2load, ≤ 0.6× grpc-swift-2",
                    ratio(mine, floor) <= latency and ratio(mine, swift) <= 0.6, " µs", 0, ccore=best(1, "p50_us"))
                mine, floor, swift = (fig(c, 100, "calls_per_second") for c in (client, "h2load", "grpc-swift"))
                row(f"calls/s, {transport}, 100 in flight{how}", server, mine, floor, swift, f"≥ {rate:.1f}× h2load",
                    ratio(mine, floor) >= rate, "", 0, ccore=best(100, "calls_per_second", pick=max))
            session_cpu = ratio(fig("authrpc-session", 100, "cpu_us_per_call"), fig("authrpc", 100, "cpu_us_per_call"))
            row(f"AuthSession (cached token) vs static token, CPU, {transport}, 100 in flight", server, session_cpu,
                float("nan"), float("nan"), "≤ 1.05×", session_cpu <= 1.05, "×", 2)
            for concurrency in (1, 100):
                mine, floor, swift = (fig(c, concurrency, "mallocs_per_call", allocs) for c in ("authrpc", "h2load", "grpc-swift"))
                limit = budget.limit_for("authrpc", transport, concurrency) if server == "grpc-c++" else None
                # Issue 23's target and the budget are set against the C++ server.
                row(f"mallocs per call, {transport}, {concurrency} in flight", server, mine, floor, swift,
                    "" if limit is None else f"≤ {MALLOCS_TARGET} (issue 23); budget {limit}",
                    None if limit is None else mine <= min(MALLOCS_TARGET, limit),
                    ccore=best(concurrency, "mallocs_per_call", allocs))
    memory_figures = inflight_figures(results)
    if memory_figures:
        own = memory_figures["own_rss"]
        limit = budget.memory_limit()
        row(f"RSS per call in flight ({results['settings']['in_flight']:,}), library's own (authrpc − bare continuation)",
            "grpc-c++", own, float("nan"), memory_figures["grpc-swift_rss"] - memory_figures["baseline_rss"],
            f"≤ 1 KiB (issue 23){'' if limit is None else f'; budget {limit} B'}", own <= MEMORY_TARGET_BYTES, " B", 0)
    if "million" in results:
        growth = million_growth(results["million"])
        row(f"{results['million']['calls']:,} sequential calls, RSS growth after the first 10,000", "grpc-c++",
            growth["rss"] / KIB, float("nan"), float("nan"), "< 1 MiB", growth["rss"] < MIB, " KiB", 0)
    for transport, target in (("h2c", 1.0), ("tls", 0.5)):
        for direction in ("response", "request"):
            for server in ("grpc-c++", "grpc-swift-2"):
                def gb(client):
                    return median(big, "gb_per_second", impl=client, server=server, transport=transport, direction=direction, concurrency=1)
                mine, floor = gb("authrpc"), gb("h2load")
                ccore = [v for v in (gb(c) for c in CCORE) if known(v)]
                # Against the C++ server, round four's ratio to h2load too; the grpc-swift-2
                # server, slower than every client, only bounds the rate.
                if server == "grpc-c++":
                    text = f"≥ {target} GB/s, ≥ {BIG_TARGET}× h2load"
                    ok = mine >= target and not ratio(mine, floor) < BIG_TARGET
                else:
                    text, ok = f"≥ {target} GB/s", mine >= target
                row(f"4 MiB {direction}s, {transport}, 1 in flight", server, mine, floor, gb("grpc-swift"),
                    text, ok, " GB/s", 2, ccore=max(ccore) if ccore else float("nan"))
    balanced = results.get("balancing", [])
    if balanced:
        timed = [r for r in balanced if not r.get("counted")]
        spread, single = median(timed, "calls_per_second", impl="authrpc-rr"), median(timed, "calls_per_second", impl="authrpc")
        row("calls/s, round-robin over 3 servers vs pick-first to 1, h2c, 100 in flight", "grpc-c++",
            ratio(spread, single), float("nan"), float("nan"), "≥ 0.9×", ratio(spread, single) >= 0.9, "×", 2)
    if results.get("xds"):
        percent, extra = xds.ALLOWANCE["cpu_percent"], xds.ALLOWANCE["mallocs"]
        for concurrency, found in sorted(xds.rows(results["xds"]).items()):
            row(f"CPU per call, xds:/// vs round robin over the same 3 servers (geometric mean of per-round ratios), "
                f"h2c, {concurrency} in flight", "grpc-c++", found["ratio_mean"], float("nan"), float("nan"),
                f"≤ {1 + percent / 100:.2f}× (failed only beyond the rounds' noise)", xds.cpu_verdict(found) == "ok",
                "×", 3)
            row(f"mallocs per call, xds:/// − round robin, h2c, {concurrency} in flight", "grpc-c++",
                found["mallocs_extra"], float("nan"), float("nan"), f"≤ +{extra}", xds.mallocs_verdict(found) == "ok",
                "", 2)
    for transport, found in session.ratios(results.get("session", {})).items():
        row(f"AuthSession (cached token) vs static token, instructions per call (callgrind, 1 in flight), {transport}",
            "grpc-c++", found, float("nan"), float("nan"), f"≤ {session.LIMIT:.2f}× (issue 23)", found <= session.LIMIT,
            "×", 3)
    if not rows:
        return []
    return ["## Against the targets (PERFORMANCE.md, issues 10 and 23)", "",
            "C-core best: the cheaper (for CPU and mallocs) or faster (calls/s, GB/s) of gRPC C-core's two clients; its "
            "p50 is the lower of the two. The targets are round four's (PERFORMANCE.md, issue 23) where it sets one, "
            "and round one's (issue 10) beside them: the ratios to grpc-swift-2, and the p50 and calls/s on "
            "`Channel.executor`.", "",
            "| figure | server | authrpc | h2load | C-core best | grpc-swift-2 | vs h2load | vs C-core best | vs grpc-swift-2 | target | |",
            "|---|---|---|---|---|---|---|---|---|---|---|"] + rows + [""]


def small_calls(results):
    load, allocs = results["load"], results["allocations"]
    lines = ["## Small calls (100-byte payloads)", "",
             "| server | transport | in flight | client | calls/s | p50 µs | p99 µs | CPU µs/call | context switches/call | mallocs/call |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for server in ("grpc-c++", "grpc-swift-2"):
        for transport in ("h2c", "tls"):
            for concurrency in (1, 100, 1000):
                for client in ("h2load", "authrpc", "authrpc-io", "authrpc-session", "grpc-swift") + CCORE:
                    match = dict(impl=client, server=server, transport=transport, concurrency=concurrency)
                    lines.append(f"| {server} | {transport} | {concurrency} | {CLIENT_NAMES[client]} | {median(load, 'calls_per_second', **match):.0f} | "
                                 f"{median(load, 'p50_us', **match):.0f} | {median(load, 'p99_us', **match):.0f} | "
                                 f"{median(load, 'cpu_us_per_call', **match):.1f} | {median(load, 'context_switches_per_call', **match):.2f} | "
                                 f"{median(allocs, 'mallocs_per_call', **match):.1f} |")
    return lines + ["", "Latency plot: `results.png`.", ""]


def balancing(results):
    records = results["balancing"]
    timed = [r for r in records if not r.get("counted")]
    counted = [r for r in records if r.get("counted")]
    lines = ["## Round-robin over three servers", "",
             "h2c, 100 in flight: one channel with pick-first to one gRPC C++ server, and one with "
             "round-robin over three (one connection each, `ipv4:` target), interleaved rounds; mallocs from a "
             "separate counted run of each. C-core is its completion-queue client with its own `round_robin` "
             "policy over the same target.", "",
             "| client | policy | servers | calls/s | p50 µs | p99 µs | CPU µs/call | context switches/call | mallocs/call |",
             "|---|---|---|---|---|---|---|---|---|"]
    rows = [(client, label, policy, count) for client in ("authrpc", "ccore-cq")
            for label, policy, count in ((client, "pick-first", 1), (f"{client}-rr", "round-robin", 3))]
    for client, label, policy, count in rows:
        if not any(r.get("impl") == label for r in timed):
            continue  # a results.json from before C-core ran in this phase
        lines.append(f"| {CLIENT_NAMES[client]} | {policy} | {count} | {median(timed, 'calls_per_second', impl=label):.0f} | "
                     f"{median(timed, 'p50_us', impl=label):.0f} | {median(timed, 'p99_us', impl=label):.0f} | "
                     f"{median(timed, 'cpu_us_per_call', impl=label):.1f} | "
                     f"{median(timed, 'context_switches_per_call', impl=label):.2f} | "
                     f"{median(counted, 'mallocs_per_call', impl=label):.2f} |")
    return lines + [""]


def xds_section(results):
    """Issue 26's row: a call on an xds:/// channel against the same call on a plain round-robin
    channel to the same servers (benchkit/xds.py)."""
    found = xds.rows(results["xds"])
    _, checked = xds.check(found)
    return ["## A call on an xds:/// channel against round robin (issue 26)", "",
            "h2c, the three gRPC C++ servers: `authrpc-rr` is a channel to `ipv4:` their three addresses with "
            "round robin, `authrpc-xds` a channel to `xds:///bench`, whose control plane (the tests' "
            "`Tests/Peers/xds_control_plane.py`) names one listener → one route → one EDS cluster (ROUND_ROBIN) of "
            "the same three addresses; one connection to each server either way. Interleaved rounds (the order "
            "swapped every other round), CPU medians and the median of the per-round ratios (their range in "
            "brackets); mallocs from one counted run of each. Issue 26 allows +5 % CPU and +1 malloc per call; "
            "the CPU check fails a run when the lower 95 % bound of the ratio (a one-sided t-test on the rounds' "
            "log ratios) is above 1.05: only when the rounds show the extra cost beyond their own noise.", ""] + \
        xds.table(found) + [""] + [f"- {line}" for line in checked] + [""]


def allocations(results):
    allocs = results["allocations"]
    lines = ["## Allocations per call", "",
             "Over the timed calls only (see above). `harness alone` runs the same load loop with no call: what "
             "BenchClient itself adds per call (its worker tasks). The budget (`allocation-budget.json`, mallocs per "
             f"call against grpc-c++) is checked by `make bench` and `bench.py --quick`; {budget_note()}",
             "",
             "| server | transport | in flight | client | mallocs | reallocs | frees | bytes asked | budget |",
             "|---|---|---|---|---|---|---|---|---|"]
    for server in ("grpc-c++", "grpc-swift-2"):
        for transport in ("h2c", "tls"):
            for concurrency in (1, 100, 1000):
                for client in ("authrpc", "authrpc-io", "authrpc-session", "grpc-swift", "h2load") + CCORE + ("noop",):
                    match = dict(impl=client, server=server, transport=transport, concurrency=concurrency)
                    limit = budget.limit_for(client, transport, concurrency) if server == "grpc-c++" else None
                    lines.append(f"| {server} | {transport} | {concurrency} | {CLIENT_NAMES[client]} | {median(allocs, 'mallocs_per_call', **match):.2f} | "
                                 f"{median(allocs, 'reallocs_per_call', **match):.2f} | {median(allocs, 'frees_per_call', **match):.2f} | "
                                 f"{median(allocs, 'malloc_bytes_per_call', **match):.0f} | {'' if limit is None else limit} |")
    return lines + [""]


def budget_note():
    try:
        document = budget.load()
    except FileNotFoundError:
        return "no budget is committed yet."
    return f"the budget was set on {document['measured_on']} from that day's figures plus {int(budget.MARGIN * 100)} %."


def inflight_figures(results, impls=("baseline", "authrpc", "grpc-swift", "ccore-cq")):
    records = results.get("inflight", [])
    if not records:
        return {}
    figures = {}
    for impl in impls:
        figures[f"{impl}_rss"] = median(records, "rss_growth_per_call_bytes", impl=impl)
        figures[f"{impl}_heap"] = median(records, "heap_growth_per_call_bytes", impl=impl)
        figures[f"{impl}_mallocs"] = median(records, "mallocs_per_call_held", impl=impl)
    figures["own_rss"] = figures["authrpc_rss"] - figures["baseline_rss"]
    figures["own_heap"] = figures["authrpc_heap"] - figures["baseline_heap"]
    return figures


def memory(results):
    figures = inflight_figures(results)
    if not figures:
        return []
    n = results["settings"]["in_flight"]
    lines = ["## Memory per call in flight", "",
             f"{n:,} calls in flight at once on one h2c connection: the grpc-c++ server parks every call that carries "
             "`x-bench-hold` until BenchClient, having seen the server count all of them (`x-bench-control: held`), "
             "measures and releases them (`x-bench-control: release`). The baseline is the same process (same channel, "
             f"same warm-up) with {n:,} tasks each waiting on a bare `UnsafeContinuation`, reached through the same protocol call as the held calls (`UnaryCaller.heldCall()`), so the harness's task and that call count on both sides. RSS from /proc/self/statm; "
             "heap = bytes in live malloc blocks (allocator-sized) from the preloaded counter. Medians of "
             f"{results['settings']['rounds']} interleaved rounds.", "",
             "| shape | RSS growth per call | heap growth per call | mallocs per call while parking |", "|---|---|---|---|"]
    for impl, name in (("baseline", "tasks on a bare continuation"), ("authrpc", "authrpc calls in flight"),
                       ("grpc-swift", "grpc-swift-2 calls in flight")):
        lines.append(f"| {name} | {figures[impl + '_rss']:.0f} B | {figures[impl + '_heap']:.0f} B | {figures[impl + '_mallocs']:.1f} |")
    lines.append(f"| **authrpc's own (authrpc − baseline)** | **{figures['own_rss']:.0f} B** | **{figures['own_heap']:.0f} B** | |")
    lines.append(f"| grpc-swift-2's own | {figures['grpc-swift_rss'] - figures['baseline_rss']:.0f} B | "
                 f"{figures['grpc-swift_heap'] - figures['baseline_heap']:.0f} B | |")
    if known(figures.get("ccore-cq_rss", float("nan"))):
        lines.append(f"| C-core CQ calls in flight (C++ 1.51; no task per call, so all its own) | "
                     f"{figures['ccore-cq_rss']:.0f} B | {figures['ccore-cq_heap']:.0f} B | {figures['ccore-cq_mallocs']:.1f} |")
    lines += ["", "Target: at most 1 KiB (1,024 B) of the library's own per call in flight (issue 23; round two's "
              f"was under 2 KiB): {verdict(figures['own_rss'] <= MEMORY_TARGET_BYTES)}.", ""]
    lines += held_blocks_table(results.get("inflight", []))
    return lines


# The live-block counter's bucket width (MallocCounter.h: MALLOC_COUNTER_BLOCK_STEP).
BLOCK_STEP = 16
# The bucket of the concurrency runtime's task-allocator slabs (a 1,016-byte malloc).
SLAB_BUCKET = 1008


def held_blocks(records, impl):
    """The median, over rounds, of how many more live blocks of each size bucket `impl` held per
    call while its calls were parked (BenchClient's `held_blocks_per_call`); buckets a round left
    out count as 0 in it."""
    rounds = [r["held_blocks_per_call"] for r in records if r.get("impl") == impl and "held_blocks_per_call" in r]
    buckets = {int(key) for counts in rounds for key in counts}
    return {bucket: statistics.median(counts.get(str(bucket), 0.0) for counts in rounds) for bucket in buckets}


def held_blocks_table(records):
    """What a parked call holds, block by block: authrpc's live blocks against the baseline's, by
    allocator size. Empty when the runs did not count blocks."""
    base, mine = held_blocks(records, "baseline"), held_blocks(records, "authrpc")
    if not base or not mine:
        return []
    rows = []
    for bucket in base.keys() | mine.keys():
        own = mine.get(bucket, 0.0) - base.get(bucket, 0.0)
        if abs(own) >= 0.05:
            rows.append((own * (bucket + BLOCK_STEP / 2), bucket, own))
    rows.sort(reverse=True)
    lines = ["What a parked call holds, block by block (the preloaded counter's live blocks by allocator size, "
             f"{BLOCK_STEP}-byte buckets; medians over the rounds of the growth per parked call):", "",
             "| allocator size | baseline | authrpc | authrpc − baseline | ≈ bytes |", "|---|---|---|---|---|"]
    for size, bucket, own in rows:
        name = f"{bucket:,}–{bucket + BLOCK_STEP - 1:,} B"
        if bucket == SLAB_BUCKET:
            name += " (task-allocator slabs)"
        lines.append(f"| {name} | {base.get(bucket, 0.0):.2f} | {mine.get(bucket, 0.0):.2f} | {own:+.2f} | {size:+,.0f} |")
    total = sum(size for size, _, _ in rows)
    lines += ["", f"The library's own blocks come to about {total:,.0f} B a parked call in the allocator's sizes; "
              "the RSS figure above also carries the heap's page-level slack.", ""]
    return lines


def million_growth(run):
    samples = run["samples"]
    first = next(s for s in samples if s["calls"] >= 10000)
    last = samples[-1]
    growth = {"rss": last["rss_bytes"] - first["rss_bytes"], "fds": last["fds"] - first["fds"],
              "rss_max": max(s["rss_bytes"] for s in samples if s["calls"] >= 10000) - first["rss_bytes"]}
    if "heap_live_bytes" in first:
        growth["heap"] = last["heap_live_bytes"] - first["heap_live_bytes"]
    return growth


def million(results):
    run = results.get("million")
    if not run:
        return []
    growth = million_growth(run)
    samples = run["samples"]
    first = next(s for s in samples if s["calls"] >= 10000)
    lines = ["## A million sequential calls", "",
             f"{run['calls']:,} calls one after another on one channel (authrpc, static token, grpc-c++ server, h2c), "
             f"in {run['seconds']:.0f} s ({run['calls_per_second']:.0f} calls/s, {run['cpu_us_per_call']:.1f} µs CPU per call, "
             "malloc counter preloaded). Sampled every 10,000 calls; growth is measured from the 10,000th call.", "",
             "| figure | at 10,000 calls | at the end | growth | target |", "|---|---|---|---|---|",
             f"| RSS | {first['rss_bytes'] / MIB:.2f} MiB | {samples[-1]['rss_bytes'] / MIB:.2f} MiB | {growth['rss'] / KIB:+.0f} KiB "
             f"(peak {growth['rss_max'] / KIB:+.0f} KiB) | < 1 MiB: {verdict(growth['rss'] < MIB)} |"]
    if "heap" in growth:
        lines.append(f"| live heap | {first['heap_live_bytes'] / MIB:.2f} MiB | {samples[-1]['heap_live_bytes'] / MIB:.2f} MiB | "
                     f"{growth['heap'] / KIB:+.1f} KiB | |")
    lines.append(f"| open descriptors | {first['fds']} | {samples[-1]['fds']} | {growth['fds']:+d} | none |")
    ccore = run.get("ccore")
    if ccore:
        theirs = million_growth(ccore)
        lines += ["", f"C-core's completion-queue client (C++ 1.51), the same {ccore['calls']:,} calls on one channel: "
                  f"{ccore['calls_per_second']:.0f} calls/s, {ccore['cpu_us_per_call']:.1f} µs CPU per call "
                  f"(authrpc: {run['cpu_us_per_call'] / ccore['cpu_us_per_call']:.2f}× its CPU); from its 10,000th call, "
                  f"RSS {theirs['rss'] / KIB:+.0f} KiB (peak {theirs['rss_max'] / KIB:+.0f} KiB)"
                  + (f", live heap {theirs['heap'] / KIB:+.1f} KiB" if "heap" in theirs else "")
                  + f", open descriptors {theirs['fds']:+d}."]
    return lines + ["", "Curve: `million.png`.", ""]


def token_expiry(results):
    records = results["expiry"]
    windows = sorted({r["stale_window_ms"] for r in records})
    lines = ["## Calls across a token expiry", "",
             "An `AuthSession` whose token stops being usable 2.5 s after it is made (expiry margin 1 s), calls "
             f"started at {records[0]['rate']} a second for 4 s whatever earlier ones are doing (grpc-c++ server, h2c), "
             "each timed from when it was due; the token endpoint (in the process) answers a refresh after "
             f"{EXPIRY_TOKEN_DELAY_MS_NOTE}. Stale window 0 refreshes only once the token has expired (the behaviour before "
             "refreshing ahead); a stale window refreshes in the background from that long before the expiry. "
             "Medians of the rounds. C-core has no row here: its client asks a call-credentials plugin for "
             "metadata on every call and leaves caching and refreshing to the plugin, so what this measures (a "
             "token cache that refreshes ahead) is the plugin's design, not C-core's.", "",
             "| stale window | p50 | p99 | max | calls over 100 ms | token requests |", "|---|---|---|---|---|---|"]
    for window in windows:
        match = dict(stale_window_ms=window)
        lines.append(f"| {window} ms | {median(records, 'p50_us', **match) / 1000:.2f} ms | "
                     f"{median(records, 'p99_us', **match) / 1000:.2f} ms | {median(records, 'max_us', **match) / 1000:.1f} ms | "
                     f"{median(records, 'calls_over_100ms', **match):.0f} of {records[0]['calls']} | "
                     f"{median(records, 'token_requests', **match):.0f} |")
    return lines + [""]


EXPIRY_TOKEN_DELAY_MS_NOTE = "500 ms"


def big_messages(results):
    big = results["big"]
    runs = " and ".join(f"{calls} calls at {concurrency} in flight" for concurrency, calls in results["big_runs"])
    lines = ["## 4 MiB messages", "",
             "4 MiB (4,194,304-byte) payloads: responses (a small request asking for 4 MiB) and requests (4 MiB up, an "
             f"empty response), {runs}, after 4 warm-up calls, medians of "
             f"{results['settings']['big_rounds']} interleaved rounds. GB/s = 10⁹ payload bytes per second of wall time, one "
             "direction. Targets: ≥ 1 GB/s on h2c, ≥ 0.5 GB/s on TLS.", "",
             "| server | transport | direction | in flight | h2load GB/s | authrpc GB/s | authrpc on Channel.executor GB/s | "
             "grpc-swift-2 GB/s | C-core CQ GB/s | C-core callback GB/s | authrpc CPU ms/call | authrpc on Channel.executor "
             "CPU ms/call | C-core CQ CPU ms/call | authrpc vs h2load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for server in ("grpc-c++", "grpc-swift-2"):
        for transport in ("h2c", "tls"):
            for direction in ("response", "request"):
                for concurrency in (1, 8):
                    match = dict(server=server, transport=transport, direction=direction, concurrency=concurrency)
                    h2load, mine, io, swift, cq, callback = (median(big, "gb_per_second", impl=c, **match)
                                                             for c in ("h2load", "authrpc", "authrpc-io", "grpc-swift") + CCORE)
                    cpu, io_cpu, cq_cpu = (median(big, "cpu_us_per_call", impl=c, **match) / 1000
                                           for c in ("authrpc", "authrpc-io", "ccore-cq"))
                    lines.append(f"| {server} | {transport} | {direction}s | {concurrency} | {h2load:.2f} | {mine:.2f} | {io:.2f} | "
                                 f"{swift:.2f} | {cq:.2f} | {callback:.2f} | {cpu:.2f} | {io_cpu:.2f} | {cq_cpu:.2f} | "
                                 f"{ratio(mine, h2load):.2f}× |")
    return lines + ["", "Plot: `bigmessages.png`.", ""]


def flow_control_section(results):
    windows = results["flow_control"]
    lines = ["## Flow-control windows", "",
             "What each side lets the other send before a WINDOW_UPDATE (HTTP/2 default: 65,535 bytes per stream and per "
             "connection). The servers' figures are read from their first SETTINGS and connection WINDOW_UPDATE "
             "(`nghttp -nv` against the h2c port, this run); the clients' from their configuration.", "",
             "| peer | stream window (SETTINGS_INITIAL_WINDOW_SIZE) | connection window | max frame size | notes |",
             "|---|---|---|---|---|"]
    for row in windows:
        lines.append(f"| {row['peer']} | {row['stream']} | {row['connection']} | {row['frame']} | {row['notes']} |")
    return lines + [""]


def size(value):
    if value is None:
        return "?"
    if value >= MIB and value % (MIB // 16) in (0, MIB // 16 - 1):
        return f"{value:,} ({value / MIB:.0f} MiB)"
    return f"{value:,}"


def flow_control(servers):
    """The windows every peer uses, for the report."""
    rows = []
    # Wherever the transport keeps it (Sources/HTTP2Client/, Sources/AuthRPCTransport/HTTP2/ after issue 22).
    found = sorted(glob.glob(os.path.join(ROOT, "Sources", "**", "HTTP2ConnectionConfiguration.swift"), recursive=True))
    config = found[0] if found else os.path.join(ROOT, "Sources", "HTTP2ConnectionConfiguration.swift")
    with open(config) as handle:
        source = handle.read()

    def constant(name):
        found = re.search(rf"var {name}: \w+ = ([\d\s<>*]+)", source)
        return eval_int(found.group(1)) if found else None
    rows.append({"peer": "authrpc client (`HTTP2ConnectionConfiguration`)", "stream": size(constant("initialStreamWindowSize")),
                 "connection": size(constant("connectionWindowSize")), "frame": size(constant("maxFrameSize")),
                 "notes": "connection window raised by WINDOW_UPDATE right after the preface"})
    rows.append({"peer": "grpc-swift-2 client (NIO transport defaults)", "stream": size(8 * MIB), "connection": size(8 * MIB),
                 "frame": "16,384", "notes": "`HTTP2ClientTransport.Config.HTTP2.defaults`: targetWindowSize 8 MiB"})
    rows.append({"peer": "h2load", "stream": size((1 << 30) - 1), "connection": size((1 << 30) - 1), "frame": "16,384",
                 "notes": "defaults `-w 30 -W 30`"})
    for server in servers.values():
        settings = server_settings(server)
        notes = {"grpc-c++": "16 MiB lookahead asked (`GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES`); with gRPC's default BDP "
                             "probing it announces 4 MiB − 1 and grows windows with the measured bandwidth-delay product, so "
                             "a 4 MiB request may wait for one WINDOW_UPDATE",
                 "grpc-swift-2": "`targetWindowSize` 16 MiB; the connection window starts at 65,535 and is topped up "
                                 "as data is read"}.get(server.name, "")
        rows.append({"peer": f"{server.name} server", "stream": size(settings.get("SETTINGS_INITIAL_WINDOW_SIZE")),
                     "connection": size(settings.get("connection")) if settings.get("connection") else "65,535 at first",
                     "frame": size(settings.get("SETTINGS_MAX_FRAME_SIZE", 16384)), "notes": notes})
    return rows


def eval_int(expression):
    value = 0
    for part in expression.split("*"):
        shift = [int(x) for x in part.split("<<")]
        term = shift[0] << (shift[1] if len(shift) > 1 else 0)
        value = term if value == 0 else value * term
    return value


def server_settings(server):
    """The server's first SETTINGS and its connection-level WINDOW_UPDATE, as nghttp sees them."""
    url = f"http://127.0.0.1:{server.ports['h2c']}/grpc.testing.TestService/UnaryCall"
    try:
        output = subprocess.run(["nghttp", "-nv", "-H", "content-type: application/grpc", "-H", "te: trailers", url],
                                capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    settings = {}
    block = re.search(r"recv SETTINGS frame <length=\d+, flags=0x00, stream_id=0>\n(.*?)\n\[", output, re.S)
    if block:
        for name, value in re.findall(r"\[(SETTINGS_\w+)\(0x\w+\):(\d+)\]", block.group(1)):
            settings[name] = int(value)
    update = re.search(r"recv WINDOW_UPDATE frame <length=4, flags=0x00, stream_id=0>\n\s*\(window_size_increment=(\d+)\)", output)
    if update:
        settings["connection"] = 65535 + int(update.group(1))
    return settings
