"""`bench.py --callgrind`: where a call's instructions go, by layer, by shared object and by
Swift module, counted exactly by `valgrind --tool=callgrind` (this machine's VMs expose no
hardware counters to perf).

BenchClient runs twice under callgrind at 1 in flight with the same warm-up: a short run and a
long one. Every figure is (long − short) / (calls of long − calls of short), which cancels
start-up, warm-up and exit, as h2load's mallocs and CPU are measured. Costs are self costs
(instructions executed in the function itself, not its callees), from the callgrind.out files
read directly (valgrind demangles C++ names there, not Swift ones); system calls are counted per call as well (`--collect-systime`). The raw files
stay in Benchmarks/.build/callgrind for `callgrind_annotate`.

With `--record LABEL` the breakdown is also kept in Benchmarks/CALLGRIND.md under that label
(replacing an earlier one of the same label, client and transport), which RESULTS.md includes,
so a change to the core can show its "after" beside the "before"."""

import collections
import hashlib
import os
import re
import subprocess
import time

from .clients import h2load_summary
from .processes import HERE

RECORD = os.path.join(HERE, "CALLGRIND.md")
# valgrind 3.19 (Debian 12) cannot run BenchClient as built: it gives up on the DWARF 5 debug
# info the Swift toolchain writes ("unhandled dwarf2 abbrev form"), and it crashes in its own
# rt_sigsuspend wrapper, which writes into the caller's signal mask, when libdispatch's main-queue
# thread passes a mask in read-only memory. So the runs use a copy without debug info (function
# names stay in the symbol table) and preload a sigsuspend that hands the kernel a stack copy.
SIGSUSPEND_SHIM = """
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
"""
SHORT_CALLS = 100
WARMUP = 50
# h2load's request and response payloads: BenchClient's and CxxClient's defaults.
PAYLOAD_BYTES = 100

# Allocator entry points and glibc's internals behind them.
ALLOCATOR = re.compile(r"^(malloc|free|calloc|realloc|cfree|posix_memalign|aligned_alloc|memalign|_int_malloc|_int_free|"
                       r"_int_realloc|_int_memalign|malloc_consolidate|tcache_\w+|unlink_chunk|sysmalloc|__libc_\w*alloc|"
                       r"__libc_free|_mid_memalign|arena_get2|__malloc_\w+|malloc_usable_size)")
RETAIN_RELEASE = re.compile(r"^(swift_(unknownObject|bridgeObject|nonatomic_)?(retain|release|strongRetain|"
                            r"tryRetain|retain_n|release_n)\w*|_swift_release_\w*|_swift_retain_\w*|swift_isUniquelyReferenced\w*|"
                            r"swift_beginAccess|swift_endAccess|swift::runtime::AccessSet|swift::runtime::SwiftTLSContext|"
                            r"bool swift::RefCounts<.*>::doDecrementSlow|swift::RefCounts)")
CONCURRENCY = re.compile(r"^(swift_task_\w+|swift_continuation_\w+|swift_job_\w+|swift_asyncLet\w*|"
                         r"(\w+ )?swift::.*(Task|Job|Executor|Async|Continuation|Actor|StackAllocator)|"
                         r"\$ss?.*(Task|Continuation|Executor|Actor)\w*Tg5)")
# Swift modules (the first identifier of a mangled `$s<length><name>` symbol) by layer. The
# transport's module is HTTP2Client until issue 22 renames it AuthRPCTransport.
TRANSPORT_MODULES = {"HTTP2Client", "AuthRPCTransport", "AuthRPCSystem"}
CALL_PATH_MODULES = {"AuthRPC", "AuthRPCTracing", "AuthRPCMetrics", "OAuth2", "GoogleAPICore"}
PROTOBUF_MODULES = {"SwiftProtobuf", "AuthSampleService"}
# Names in the transport that belong to its I/O loop rather than to a stream or a call.
LOOP_NAMES = re.compile(r"ConnectionLoop|ConnectionInbox|ByteQueue|DeadlineQueue|SessionCallbacks|Wakeup|Socket|"
                        r"TLSSession|PollTimeout|FileDescriptor|Locked")

LAYERS = (
    "nghttp2",
    "OpenSSL (libssl, libcrypto)",
    "malloc/free (glibc)",
    "libc: syscall wrappers, memcpy, locks, other",
    "Swift retain/release, exclusivity",
    "Swift concurrency: tasks, continuations, executors",
    "Swift runtime and stdlib (libswiftCore), other",
    "library: connection loop (I/O thread, TLS records, sockets)",
    "library: transport streams and connection (HTTP/2 requests, responses)",
    "library: call path (AuthRPC: channel, call, metadata, options)",
    "protobuf encode/decode (SwiftProtobuf, generated stubs)",
    "Foundation, Dispatch",
    "bench harness (BenchClient, CxxClient)",
    "ld.so (mostly __tls_get_addr: thread-local access)",
    "other",
    "gRPC C-core (libgrpc, libgpr, libgrpc++)",
    "abseil (C-core's locks, status, strings)",
    "C++ runtime (libstdc++)",
    "Swift stdlib generics specialized into the binary (called by the library: Array, Sequence, hashing)",
    "h2load itself (its own code, libev)",
    "malloc/free (jemalloc: h2load's allocator)",
)


def swift_module(symbol):
    """The module of a mangled Swift symbol (`$s7AuthRPC...` -> AuthRPC; `$ss...`/`$sS...` -> Swift)."""
    if not symbol.startswith("$s"):
        return None
    rest = symbol[2:]
    if rest[:1] in ("s", "S"):
        return "Swift"
    found = re.match(r"(\d+)", rest)
    if not found:
        return None
    length = int(found.group(1))
    start = len(found.group(1))
    return rest[start:start + length]


def layer_of(obj, symbol):
    """The layer one function's instructions belong to."""
    name = os.path.basename(obj)
    if "libnghttp2" in name:
        return LAYERS[0]
    if name.startswith(("libgrpc", "libgpr", "libaddress_sorting", "libupb")):
        return LAYERS[15]
    if name.startswith("libabsl"):
        return LAYERS[16]
    if name.startswith("libprotobuf"):
        return LAYERS[10]
    if name.startswith("libstdc++"):
        return LAYERS[17]
    if name == "bench_client":
        return LAYERS[12]
    if name == "h2load" or name.startswith("libev."):
        return LAYERS[19]
    if name.startswith("libjemalloc"):
        return LAYERS[20]
    if "libssl" in name or "libcrypto" in name:
        return LAYERS[1]
    if ALLOCATOR.match(symbol):
        return LAYERS[2]
    if name.startswith(("libc.so", "libc-", "libpthread", "libm.so", "librt")):
        return LAYERS[3]
    if name.startswith("ld-linux"):
        return LAYERS[13]
    if RETAIN_RELEASE.match(symbol):
        return LAYERS[4]
    if "libswift_Concurrency" in name or CONCURRENCY.match(symbol):
        return LAYERS[5]
    if name.startswith(("libFoundation", "libdispatch", "libBlocksRuntime", "lib_FoundationICU", "libicu")):
        return LAYERS[11]
    module = swift_module(symbol)
    if module in TRANSPORT_MODULES:
        return LAYERS[7] if LOOP_NAMES.search(symbol) else LAYERS[8]
    if module in CALL_PATH_MODULES:
        return LAYERS[9]
    if module in PROTOBUF_MODULES:
        return LAYERS[10]
    if module == "BenchClient":
        return LAYERS[12]
    if module == "Swift" and not name.startswith("libswift"):
        return LAYERS[18]
    if name.startswith("libswift") or module == "Swift" or symbol.startswith(("swift_", "_swift", "swift::")):
        return LAYERS[6]
    return LAYERS[14]


def parse(path):
    """Self cost per (object, function) of a callgrind.out file: {(obj, fn): [event costs]}, and
    the event names."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    costs = collections.defaultdict(lambda: None)
    events = []
    obj = fn = ""
    skip_next = False

    def resolve(kind, text):
        # `(id) name` defines a compressed name, `(id)` refers to one.
        found = re.match(r"\((\d+)\)(?:\s+(.*))?$", text)
        if not found:
            return text
        if found.group(2) is not None:
            names[kind][found.group(1)] = found.group(2)
        return names[kind].get(found.group(1), text)

    with open(path, errors="replace") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if skip_next:
                skip_next = False  # the inclusive cost of a call: not this function's self cost
                continue
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                parts = line.split()
                values = [int(v) for v in parts[1:]]
                current = costs[(obj, fn)]
                if current is None:
                    costs[(obj, fn)] = values + [0] * (len(events) - len(values))
                else:
                    for index, value in enumerate(values):
                        current[index] += value
                continue
            key, _, value = line.partition("=")
            if key == "events" or line.startswith("events:"):
                events = line.split(":", 1)[1].split()
            elif key == "ob":
                obj = resolve("ob", value)
            elif key == "fn":
                fn = resolve("fn", value)
            elif key in ("fl", "fi", "fe"):
                resolve("fl", value)
            elif key in ("cob",):
                resolve("ob", value)
            elif key in ("cfn",):
                resolve("fn", value)
            elif key in ("cfi", "cfl"):
                resolve("fl", value)
            elif key == "calls":
                skip_next = True
    return {key: value for key, value in costs.items() if value is not None}, events


def per_call(short, long, calls):
    """{key: per-call cost of the first event (and of the others)} from two parsed runs."""
    (short_costs, events), (long_costs, _) = short, long
    result = {}
    for key in set(short_costs) | set(long_costs):
        a = short_costs.get(key, [0] * len(events))
        b = long_costs.get(key, [0] * len(events))
        result[key] = [(y - x) / calls for x, y in zip(a, b)]
    return result, events


def group(costs, by):
    totals = collections.defaultdict(lambda: None)
    for (obj, fn), values in costs.items():
        key = by(obj, fn)
        if totals[key] is None:
            totals[key] = list(values)
        else:
            totals[key] = [t + v for t, v in zip(totals[key], values)]
    return {k: v for k, v in totals.items() if v is not None}


def demangle(symbols):
    try:
        output = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols),
                                capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(symbols)
    return output if len(output) == len(symbols) else list(symbols)


def table(title, rows, total, events, limit=None):
    lines = [f"{title}", "", "| | instructions per call | share | system calls per call |", "|---|---|---|---|"]
    sys_index = events.index("sysCount") if "sysCount" in events else None
    shown = sorted(rows.items(), key=lambda item: -item[1][0])
    if limit:
        shown = shown[:limit]
    for name, values in shown:
        if abs(values[0]) < 0.5 and not limit:
            continue
        calls = f"{values[sys_index] if abs(values[sys_index]) >= 0.005 else 0.0:.2f}" if sys_index is not None else ""
        lines.append(f"| {name} | {values[0]:,.0f} | {100 * values[0] / total:.1f} % | {calls} |")
    return lines + [""]


def report(costs, events, label):
    """The markdown breakdown: by layer, by object, by Swift module, top functions."""
    total, syscalls = totals(costs, events)
    lines = [f"### {label}: {total:,.0f} instructions and {syscalls:.2f} system calls per call", ""]
    lines += table("By layer:", group(costs, layer_of), total, events)
    lines += table("By shared object:", group(costs, lambda obj, fn: f"`{os.path.basename(obj)}`"), total, events)
    lines += table("By Swift module (mangled-name prefix; C functions under their object):",
                   group(costs, lambda obj, fn: swift_module(fn) or f"(C) {os.path.basename(obj)}"), total, events)
    top = sorted(costs.items(), key=lambda item: -item[1][0])[:25]
    names = demangle([fn for (_, fn), _ in top])
    rows = {f"`{name[:110]}` ({os.path.basename(obj)})": values for ((obj, _), values), name in zip(top, names)}
    lines += table("Top 25 functions (self cost):", rows, total, events, limit=25)
    return lines


def record(label, heading, lines, note):
    """Keeps `lines` in CALLGRIND.md as the section `## LABEL: heading`, replacing that section."""
    sections = read_sections()
    sections[f"{label}: {heading}"] = [note, ""] + lines[2:]  # the breakdown without its own heading
    with open(RECORD, "w") as handle:
        handle.write("# Where a call's instructions go (callgrind)\n\n"
                     "Written by `Benchmarks/bench.py --callgrind --record LABEL` (see benchkit/callgrind.py): "
                     "instructions and system calls per call, 1 in flight, the difference of a long and a short "
                     "run under `valgrind --tool=callgrind`, self cost of each function. Exact counts (no sampling), "
                     "so they compare across machines and loads; time is not instructions (a cache miss or a "
                     "thread wake costs time that counts no instruction here). System calls are counted under valgrind, "
                     "which runs one thread at a time, so a client whose threads hand work over may make more of "
                     "them than it does natively. Repeated runs differ by a few percent (65,479 and 64,200 instructions per "
                     "call for authrpc over h2c on the same build): how many loop turns and wake-ups a call takes "
                     "depends on timing.\n\n")
        # The references (C-core, h2load) first, then the library's steps in the order recorded.
        for title, body in sorted(sections.items(), key=lambda item: not item[0].startswith("reference")):
            handle.write(f"## {title}\n\n" + "\n".join(body).rstrip() + "\n\n")


def read_sections():
    sections, title = {}, None
    if not os.path.exists(RECORD):
        return sections
    with open(RECORD) as handle:
        for line in handle.read().splitlines():
            if line.startswith("## "):
                title = line[3:]
                sections[title] = []
            elif title is not None:
                sections[title].append(line)
    return {title: "\n".join(body).strip("\n").splitlines() for title, body in sections.items()}


def prepare(out, binary):
    """(the binary without debug info, the sigsuspend shim), both in `out`, rebuilt when stale.
    The copy is named after the binary's whole path: two builds (before and after a change) each
    get their own, where one copy by file name alone was newer than the older build and counted
    the other build's instructions for it."""
    digest = hashlib.sha1(os.path.abspath(binary).encode()).hexdigest()[:10]
    stripped = os.path.join(out, f"{os.path.basename(binary)}-{digest}.nodebug")
    if not os.path.exists(stripped) or os.path.getmtime(stripped) < os.path.getmtime(binary):
        subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
    shim = os.path.join(out, "libsigsuspend_copy.so")
    if not os.path.exists(shim) or os.path.getmtime(shim) < os.path.getmtime(__file__):
        source = os.path.join(out, "sigsuspend_copy.c")
        with open(source, "w") as handle:
            handle.write(SIGSUSPEND_SHIM)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", source, "-o", shim], check=True)
    return stripped, shim


def version(program):
    """The first line of `program --version` (h2load: `h2load nghttp2/1.52.0`)."""
    return subprocess.run([program, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]


def count(runner, server, transport, calls, client="authrpc"):
    """Two callgrind runs of one client (BenchClient, CxxClient or h2load; SHORT_CALLS and
    SHORT_CALLS + calls at 1 in flight): (each function's self cost per call, the event names)."""
    out = os.path.join(HERE, ".build", "callgrind")
    os.makedirs(out, exist_ok=True)
    parsed = []
    for n in (SHORT_CALLS, SHORT_CALLS + calls):
        path = os.path.join(out, f"callgrind-{client}-{transport}-{n}.out")
        if client == "h2load":
            # nghttp2's own client, the floor: no warm-up of its own, so the short run's calls
            # cancel its start-up, connection and first calls alike.
            command = runner.h2load_command(server, transport, 1, n, PAYLOAD_BYTES, PAYLOAD_BYTES)
            env = os.environ
            print(f"callgrind: h2load {transport}, {n} calls ...", flush=True)
        else:
            command = runner.command("load", client, server, transport, calls=n, concurrency=1, warmup=WARMUP)
            command[0], shim = prepare(out, command[0])
            # Swift seeds its hashing per process, so a dictionary's order, and the work of the
            # harness's sorted JSON line at exit, differ from run to run: ±1.5 % of a call's count
            # with 300 calls. Fixed seeding leaves ±0.3 %.
            env = {**os.environ, "LD_PRELOAD": shim, "SWIFT_DETERMINISTIC_HASHING": "1"}
            print(f"callgrind: {client} {transport}, {n} calls after {WARMUP} warm-up calls ...", flush=True)
        finished = subprocess.run(["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={path}",
                                   "--collect-systime=nsec", "--dump-instr=no"] + command,
                                  check=True, stdout=subprocess.PIPE, text=True, timeout=1800, env=env)
        if client == "h2load":
            h2load_summary(finished.stdout, n, PAYLOAD_BYTES, f"{server.name} {transport} under callgrind")
        parsed.append(parse(path))
    return per_call(parsed[0], parsed[1], calls)


def totals(costs, events):
    """(instructions, system calls) per call of a `count`."""
    sys_index = events.index("sysCount") if "sysCount" in events else None
    instructions = sum(values[0] for values in costs.values())
    syscalls = sum(values[sys_index] for values in costs.values()) if sys_index is not None else float("nan")
    return instructions, syscalls


def run(runner, server, transport, calls, client="authrpc", label=None):
    """`count`'s breakdown of one client, printed; recorded under `label` when given; returns its
    lines."""
    costs, events = count(runner, server, transport, calls, client)
    heading = f"{client}, {transport}, 1 in flight"
    lines = report(costs, events, f"{heading}, against {server.name} ({SHORT_CALLS + calls} − {SHORT_CALLS} calls)")
    print("\n".join(lines))
    if label:
        # The last commit that changed the library (Sources/), which is what before and after compare.
        commit = subprocess.run(["git", "-C", HERE, "log", "-1", "--format=%h", "--", "../Sources"],
                                capture_output=True, text=True).stdout.strip()
        measured = version("h2load") if client == "h2load" else f"library Sources at `{commit}`"
        record(label, heading, lines, f"{lines[0][4:]}. Measured {time.strftime('%Y-%m-%d')}, {measured}, "
                                      f"against the {server.name} server.")
        print(f"callgrind: recorded in {RECORD}")
    return lines
