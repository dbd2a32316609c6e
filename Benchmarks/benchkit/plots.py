"""The PNGs beside RESULTS.md: latency per client, the million-call curve, 4 MiB throughput.
Drawn only when matplotlib is installed (the Makefile installs it into .venv best-effort)."""

import os

from .report import CLIENT_NAMES, MIB, median


def draw(directory, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        print("(matplotlib not installed: no plots)")
        return
    latency(pyplot, os.path.join(directory, "results.png"), results["load"])
    if results.get("million"):
        million(pyplot, os.path.join(directory, "million.png"), results["million"])
    big(pyplot, os.path.join(directory, "bigmessages.png"), results["big"])


# Short x labels, one per client (h2c and TLS are bars side by side): long names under 14 bars
# overlapped each other.
SHORT_NAMES = {"h2load": "h2load", "authrpc": "authrpc", "authrpc-io": "authrpc on\nChannel.\nexecutor",
               "authrpc-session": "authrpc-\nsession", "grpc-swift": "grpc-swift-2",
               "ccore-cq": "C-core\nCQ", "ccore-callback": "C-core\ncallback"}
LATENCY_CLIENTS = ("h2load", "authrpc", "authrpc-io", "authrpc-session", "grpc-swift", "ccore-cq", "ccore-callback")


def latency(pyplot, path, load):
    figure, axes = pyplot.subplots(2, 3, figsize=(20, 9))
    # (transport, percentile, colour, hatch): four bars per client.
    bars = (("h2c", "p50", "tab:blue", None), ("h2c", "p99", "tab:orange", None),
            ("tls", "p50", "tab:blue", "//"), ("tls", "p99", "tab:orange", "//"))
    width = 0.2
    # Clients the run measured (a results.json from before C-core's client has none of its rows).
    shown = [client for client in LATENCY_CLIENTS if any(r.get("impl") == client for r in load)]
    for row, server in zip(axes, ("grpc-c++", "grpc-swift-2")):
        for axis, concurrency in zip(row, (1, 100, 1000)):
            for index, (transport, percentile, colour, hatch) in enumerate(bars):
                values = [median(load, f"{percentile}_us", impl=client, server=server, transport=transport,
                                 concurrency=concurrency) for client in shown]
                axis.bar([c + (index - 1.5) * width for c in range(len(shown))], values, width=width,
                         color=colour, hatch=hatch, edgecolor="white" if hatch else None, label=f"{transport} {percentile}")
            axis.set_xticks(range(len(shown)), [SHORT_NAMES[c] for c in shown], fontsize=8)
            axis.set_ylabel("latency (µs)")
            axis.set_yscale("log")
            axis.set_title(f"{server} server, {concurrency} in flight")
            axis.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    print(f"plot: {path}")


def million(pyplot, path, run):
    samples = run["samples"]
    calls = [s["calls"] / 1000 for s in samples]
    figure, (memory, growth) = pyplot.subplots(1, 2, figsize=(14, 4.5))
    memory.plot(calls, [s["rss_bytes"] / MIB for s in samples], label="RSS (MiB)", color="tab:blue")
    if "heap_live_bytes" in samples[0]:
        memory.plot(calls, [s["heap_live_bytes"] / MIB for s in samples], label="live heap (MiB)", color="tab:green")
    memory.set_xlabel("calls (thousands)")
    memory.set_ylabel("MiB")
    memory.set_ylim(bottom=0)
    descriptors = memory.twinx()
    descriptors.plot(calls, [s["fds"] for s in samples], label="open descriptors", color="tab:red", linestyle="--")
    descriptors.set_ylabel("open descriptors")
    descriptors.set_ylim(bottom=0, top=max(s["fds"] for s in samples) * 2 + 1)
    handles = memory.get_legend_handles_labels()[0] + descriptors.get_legend_handles_labels()[0]
    memory.legend(handles, [h.get_label() for h in handles], loc="lower right")
    memory.set_title(f"{run['calls']:,} sequential calls on one channel (authrpc, h2c, grpc-c++)")

    # The same curves as growth from the 10,000th call, against the 1 MiB target.
    start = next(s for s in samples if s["calls"] >= 10000)
    later = [s for s in samples if s["calls"] >= 10000]
    growth.plot([s["calls"] / 1000 for s in later], [(s["rss_bytes"] - start["rss_bytes"]) / 1024 for s in later],
                label="RSS growth", color="tab:blue")
    if "heap_live_bytes" in start:
        growth.plot([s["calls"] / 1000 for s in later], [(s["heap_live_bytes"] - start["heap_live_bytes"]) / 1024 for s in later],
                    label="live heap growth", color="tab:green")
    ccore = run.get("ccore")
    if ccore:
        start_ccore = next(s for s in ccore["samples"] if s["calls"] >= 10000)
        later_ccore = [s for s in ccore["samples"] if s["calls"] >= 10000]
        growth.plot([s["calls"] / 1000 for s in later_ccore],
                    [(s["rss_bytes"] - start_ccore["rss_bytes"]) / 1024 for s in later_ccore],
                    label="RSS growth, C-core CQ client", color="tab:orange", linestyle="--")
    growth.axhline(1024, color="grey", linestyle=":", label="target: < 1 MiB")
    growth.set_xlabel("calls (thousands)")
    growth.set_ylabel("KiB since the 10,000th call")
    growth.set_ylim(bottom=min(0, growth.get_ylim()[0]), top=1200)
    growth.legend(loc="upper left")
    growth.set_title("growth after the first 10,000 calls")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    print(f"plot: {path}")


def big(pyplot, path, records):
    figure, axes = pyplot.subplots(1, 2, figsize=(15, 4.5), sharey=True)
    clients = [c for c in ("h2load", "authrpc", "authrpc-io", "grpc-swift", "ccore-cq", "ccore-callback")
               if any(r.get("impl") == c for r in records)]
    for axis, server in zip(axes, ("grpc-c++", "grpc-swift-2")):
        groups = [(t, d, c) for t in ("h2c", "tls") for d in ("response", "request") for c in (1, 8)]
        width = 0.8 / len(clients)
        for index, client in enumerate(clients):
            values = [median(records, "gb_per_second", impl=client, server=server, transport=t, direction=d, concurrency=c)
                      for t, d, c in groups]
            axis.bar([g + (index - (len(clients) - 1) / 2) * width for g in range(len(groups))], values, width=width,
                     label=CLIENT_NAMES[client])
        axis.set_xticks(range(len(groups)), [f"{t}\n{d}s\n{c} in flight" for t, d, c in groups], fontsize=7)
        axis.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        axis.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        axis.set_ylabel("GB/s (4 MiB payloads)")
        axis.set_title(f"{server} server")
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    print(f"plot: {path}")
