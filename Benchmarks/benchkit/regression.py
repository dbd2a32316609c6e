"""The regression guard of `make bench`: issue 23's target rows, each a figure of one run (a
ratio against h2load or C-core measured in the same interleaved rounds, or the library's bytes
per call in flight), against the committed Benchmarks/target-baseline.json.

Noise is measured, not assumed: every row is computed round by round (round i of authrpc
against round i of h2load: the rounds are interleaved, so a pair shares the machine's load), its
figure is the median of those per-round values and its noise their spread (max − min). A row
regresses when it is worse than its baseline by more than the two runs' noise added together,
and by more than the two runs' typical relative noise (the median over all their rows of spread /
figure) times the figure: three rounds estimate one row's noise poorly (its rounds may agree by
chance), and one run's rows share the machine. Simulated with ±5 % (±10 %) uniform noise on every
run of 3 rounds, this fails 1 % (2 %) of unchanged runs and catches a 20 % CPU regression in 100 %
(64 %) of them, a 40 % one always; the larger of the two runs' own spreads alone failed 13–15 %
of unchanged runs. Mallocs are exact and have their own budget (allocation-budget.json),
so they are not repeated here.
"""

import json
import os
import statistics
import subprocess
import time

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "target-baseline.json")
SERVER = "grpc-c++"  # issue 23's table is measured against the gRPC C++ server
CCORE = ("ccore-cq", "ccore-callback")


def per_round(records, key, **match):
    """The figure `key` of the records matching `match`, in the order they were run (one per round)."""
    return [r[key] for r in records if key in r and all(r.get(k) == v for k, v in match.items())]


def ccore_best(records, key, **match):
    """Round by round, the cheaper of C-core's two clients."""
    pairs = zip(*(per_round(records, key, impl=impl, **match) for impl in CCORE))
    return [min(pair) for pair in pairs]


def row(label, better, values):
    """A row from its per-round values; None when the run did not measure it."""
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return None
    return {"label": label, "better": better, "value": statistics.median(values),
            "noise": max(values) - min(values), "rounds": len(values)}


def ratios(mine, theirs):
    return [a / b for a, b in zip(mine, theirs) if b]


def target_rows(results):
    """{key: row} for every target row `results` holds (see the module's comment)."""
    rows = {}
    load = [r for r in results.get("load", []) if r.get("server") == SERVER]
    for transport in ("h2c", "tls"):
        def fig(impl, concurrency, key):
            return per_round(load, key, impl=impl, transport=transport, concurrency=concurrency)
        for client, how in (("authrpc", "default executor"), ("authrpc-io", "Channel.executor")):
            for concurrency in (1, 100):
                rows[f"cpu-vs-h2load/{client}/{transport}/{concurrency}"] = row(
                    f"CPU per call vs h2load, {transport}, {concurrency} in flight, {how}", "lower",
                    ratios(fig(client, concurrency, "cpu_us_per_call"), fig("h2load", concurrency, "cpu_us_per_call")))
        for concurrency in (1, 100):
            best = ccore_best(load, "cpu_us_per_call", transport=transport, concurrency=concurrency)
            rows[f"cpu-vs-ccore/authrpc/{transport}/{concurrency}"] = row(
                f"CPU per call vs C-core's cheaper client, {transport}, {concurrency} in flight, default executor", "lower",
                ratios(fig("authrpc", concurrency, "cpu_us_per_call"), best))
        rows[f"p50-vs-h2load/authrpc/{transport}/1"] = row(
            f"p50 latency vs h2load, {transport}, 1 in flight, default executor", "lower",
            ratios(fig("authrpc", 1, "p50_us"), fig("h2load", 1, "p50_us")))
        rows[f"calls-per-second-vs-h2load/authrpc/{transport}/100"] = row(
            f"calls/s vs h2load, {transport}, 100 in flight, default executor", "higher",
            ratios(fig("authrpc", 100, "calls_per_second"), fig("h2load", 100, "calls_per_second")))
        rows[f"session-vs-static/{transport}/100"] = row(
            f"AuthSession (cached token) vs static token, CPU, {transport}, 100 in flight", "lower",
            ratios(fig("authrpc-session", 100, "cpu_us_per_call"), fig("authrpc", 100, "cpu_us_per_call")))
        big = [r for r in results.get("big", []) if r.get("server") == SERVER]
        match = dict(transport=transport, direction="response", concurrency=1)
        rows[f"big-responses-vs-h2load/{transport}/1"] = row(
            f"4 MiB responses vs h2load, GB/s, {transport}, 1 in flight", "higher",
            ratios(per_round(big, "gb_per_second", impl="authrpc", **match),
                   per_round(big, "gb_per_second", impl="h2load", **match)))
    inflight = results.get("inflight", [])
    own = [a - b for a, b in zip(per_round(inflight, "rss_growth_per_call_bytes", impl="authrpc"),
                                 per_round(inflight, "rss_growth_per_call_bytes", impl="baseline"))]
    rows["memory-per-call-in-flight"] = row("library memory (RSS) per call in flight, bytes", "lower", own)
    return {key: value for key, value in rows.items() if value is not None}


def compare(rows, baseline):
    """(regressions, lines): each baseline row against this run's, allowed the two runs' noise
    added, and at least their typical relative noise (see the module's comment). Rows the run did not measure are skipped; rows the baseline lacks are
    reported (no verdict)."""
    regressions, lines = [], []
    typical = pooled_noise(rows) + pooled_noise(baseline)
    for key, now in sorted(rows.items()):
        before = baseline.get(key)
        if before is None:
            lines.append(f"{now['label']}: {now['value']:.3f} (±{now['noise']:.3f}), no baseline yet")
            continue
        allowed = max(now["noise"] + before["noise"], typical * abs(before["value"]))
        change = now["value"] - before["value"]
        worse = change > allowed if now["better"] == "lower" else -change > allowed
        line = (f"{now['label']}: {now['value']:.3f} against {before['value']:.3f} at baseline "
                f"(change {change:+.3f}, noise allowed ±{allowed:.3f}): {'REGRESSED' if worse else 'ok'}")
        lines.append(line)
        if worse:
            regressions.append(line)
    return regressions, lines


def pooled_noise(rows):
    """The run's typical relative noise: the median over its rows of spread / figure. Three
    rounds give a row a poor estimate of its own noise (by chance, its rounds may agree), and the
    rows of one run share the machine's noise, so a row is allowed at least this much."""
    relative = [row["noise"] / abs(row["value"]) for row in rows.values() if row["value"] and row.get("rounds", 2) > 1]
    return statistics.median(relative) if relative else 0.0


def load():
    with open(PATH) as handle:
        return json.load(handle)


def write(rows, root):
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    document = {
        "comment": ("Issue 23's target rows from one make bench run against the gRPC C++ server (median of the "
                    "interleaved rounds' per-round figures, noise = their spread). make bench fails when a row is "
                    "worse than here by more than this noise and the run's added (at least both runs' typical relative noise); "
                    "bench.py --update-budget rewrites this file."),
        "server": SERVER,
        "measured_on": time.strftime("%Y-%m-%d"),
        "commit": commit or "unknown",
        "rows": rows,
    }
    with open(PATH, "w") as handle:
        json.dump(document, handle, indent=2, sort_keys=True)
        handle.write("\n")
    return document


def check(results, root, update=False):
    """The guard for one full run: returns (regressions, lines). Writes the baseline when asked,
    or when none is committed yet (the first run records it, for the commit to carry)."""
    rows = target_rows(results)
    if not rows:
        return [], []
    if update or not os.path.exists(PATH):
        write(rows, root)
        return [], [f"wrote {PATH} ({len(rows)} rows){'' if update else ': no baseline was committed'}"]
    return compare(rows, load()["rows"])
