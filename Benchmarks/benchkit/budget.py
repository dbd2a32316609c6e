"""The committed allocation budget (Benchmarks/allocation-budget.json): mallocs per call for
each swift-authrpc client, transport and number in flight, and the library's own memory (RSS)
per call in flight (the `memory` phase: 10,000 calls parked by the server, against as many bare
continuations), and the async frame (context) size of each function a waiting call keeps, read
from BenchClient's binary. `make bench` and `bench.py --quick` fail when a measured figure exceeds
it; `bench.py --update-budget` rewrites it from a run."""

import json
import math
import os
import time

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "allocation-budget.json")
# Room for run-to-run variation: at 100 in flight, how calls share reads and writes moves the
# count by a few percent.
MARGIN = 0.05
# RSS is counted in pages and the parked calls' memory moves with how the allocator's arenas fill:
# rounds of the same build spread by up to ~5 % (RESULTS.md's memory section).
MEMORY_MARGIN = 0.10
MEMORY_KEY = "library_rss_bytes_per_call_in_flight"
MEMORY_DATE_KEY = "memory_measured_on"
FRAMES_KEY = "async_frame_bytes"
# The async functions of a waiting unary call, from the generated method down (BenchClient's
# grpc.testing client), by demangled name. Their sizes are exact for one toolchain: no margin. A
# waiting call keeps every frame of its chain in the task's 1,016-byte allocator slabs, and a
# frame that does not fit the slab in use costs a new slab per call in flight, so a frame that
# grows may cost a kilobyte per call for a caller whose own frame leaves less room.
CALL_FRAMES = (
    "Grpc_Testing_TestServiceClient.unaryCall(_:options:)",
    "Channel.perform(_:body:options:serviceConfig:observers:)",
    "closure #1 in Channel.perform(_:body:options:serviceConfig:observers:)",
)


def load():
    with open(PATH) as handle:
        return json.load(handle)


def save(document):
    """Writes `document` as the budget; returns it."""
    with open(PATH, "w") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    return document


def check(measured, server):
    """`measured`: {(client, transport, concurrency): mallocs per call} against `server`.
    Returns the lines that exceed the budget (empty when all are within it) and a line per
    figure checked."""
    if not os.path.exists(PATH):
        return [f"{PATH} is missing: create it with bench.py --quick --update-budget"], []
    document = load()
    if document["server"] != server:
        return [f"the budget was measured against {document['server']}, this run against {server}"], []
    budget = document["mallocs_per_call"]
    over, report = [], []
    for (client, transport, concurrency), value in sorted(measured.items()):
        limit = budget.get(client, {}).get(transport, {}).get(str(concurrency))
        if limit is None:
            continue
        verdict = "ok" if value <= limit else "OVER BUDGET"
        line = f"{client} {transport} {concurrency} in flight: {value:.2f} mallocs/call, budget {limit} ({verdict})"
        report.append(line)
        if value > limit:
            over.append(line)
    return over, report


def check_memory(measured, server):
    """`measured`: the library's own RSS bytes per call in flight against `server`. Returns
    (over, lines) as `check` does."""
    if not os.path.exists(PATH):
        return [f"{PATH} is missing: create it with bench.py --quick --update-budget"], []
    document = load()
    if document["server"] != server:
        return [f"the budget was measured against {document['server']}, this run against {server}"], []
    limit = document.get(MEMORY_KEY)
    if limit is None:
        return [f"{PATH} has no {MEMORY_KEY}: set it with bench.py --quick --update-budget"], []
    verdict = "ok" if measured <= limit else "OVER BUDGET"
    line = f"library memory per call in flight: {measured:.0f} B, budget {limit} B ({verdict})"
    return ([line] if measured > limit else []), [line]


def call_frames(sizes):
    """{name: context size} of CALL_FRAMES, from `sizes` ([(function name, size)] as
    async_frames.async_function_pointers gives them); a name missing from the binary is absent."""
    return {name: size for name, size in sizes if name in CALL_FRAMES}


def check_frames(measured):
    """`measured`: {name: context size} of CALL_FRAMES. Returns (over, lines) as `check` does: a
    frame larger than its budget, or one the binary no longer has (renamed, or inlined into its
    caller, whose frame then holds it), fails."""
    limits = load().get(FRAMES_KEY) if os.path.exists(PATH) else None
    if not limits:
        return [f"{PATH} has no {FRAMES_KEY}: set it with bench.py --quick --update-budget"], []
    over, lines = [], []
    for name, limit in limits.items():
        size = measured.get(name)
        if size is None:
            line = f"async frame of {name}: not in the binary (renamed or inlined?), budget {limit} B (MISSING)"
        else:
            verdict = "ok" if size <= limit else "OVER BUDGET"
            line = f"async frame of {name}: {size} B, budget {limit} B ({verdict})"
        lines.append(line)
        if size is None or size > limit:
            over.append(line)
    return over, lines


def update_frames(measured):
    """Sets the frame budget to `measured`, exactly."""
    document = load()
    document[FRAMES_KEY] = {name: measured[name] for name in CALL_FRAMES if name in measured}
    return save(document)


def update_memory(measured):
    """Sets the memory budget to `measured` plus its margin, rounded up to 16 bytes."""
    document = load()
    document[MEMORY_KEY] = int(math.ceil(measured * (1 + MEMORY_MARGIN) / 16) * 16)
    document[MEMORY_DATE_KEY] = time.strftime("%Y-%m-%d")
    return save(document)


def memory_limit():
    """The memory budget in bytes per call in flight, or None."""
    return load().get(MEMORY_KEY) if os.path.exists(PATH) else None


def limit_for(client, transport, concurrency):
    if not os.path.exists(PATH):
        return None
    return load()["mallocs_per_call"].get(client, {}).get(transport, {}).get(str(concurrency))


def update(measured, server):
    """Writes a budget of each measured figure plus the margin, rounded up; figures not measured
    in this run keep their budget, and the memory and frame budgets keep their figures."""
    previous = load()["mallocs_per_call"] if os.path.exists(PATH) else {}
    document = {
        "comment": ("Mallocs per unary call (client process, timed calls only, LD_PRELOAD counter), and the library's "
                    "own RSS per call in flight (10,000 parked calls minus as many bare continuations), and the async "
                    "frame bytes a waiting call keeps per function (read from BenchClient, exact for one toolchain), "
                    "that make bench and bench.py --quick allow; measured against the server named below. Lower it as "
                    "the library gets cheaper: bench.py --quick --update-budget writes today's figures plus "
                    f"{int(MARGIN * 100)} % (memory: {int(MEMORY_MARGIN * 100)} %, frames: exact)."),
        "server": server,
        "measured_on": time.strftime("%Y-%m-%d"),
        "mallocs_per_call": previous,
    }
    if os.path.exists(PATH):
        kept = load()
        for key in (MEMORY_KEY, MEMORY_DATE_KEY, FRAMES_KEY):
            if key in kept:
                document[key] = kept[key]
    for (client, transport, concurrency), value in sorted(measured.items()):
        document["mallocs_per_call"].setdefault(client, {}).setdefault(transport, {})[str(concurrency)] = \
            math.ceil(value * (1 + MARGIN) + 0.5)
    return save(document)
