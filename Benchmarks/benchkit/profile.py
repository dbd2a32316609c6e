"""`bench.py --profile`: where swift-authrpc's CPU goes, by shared object and by function.

Samples one BenchClient load run with `perf record` (cpu-clock: this machine's VMs expose no
hardware counters), and prints the flat profile, Swift names demangled. The data stays in
Benchmarks/.build/profile for `perf report -i` (e.g. `--children` for call graphs)."""

import os
import re
import subprocess

from .processes import HERE


def run(runner, server, transport, concurrency, calls, client="authrpc"):
    out = os.path.join(HERE, ".build", "profile")
    os.makedirs(out, exist_ok=True)
    data = os.path.join(out, f"perf-{client}-{transport}-{concurrency}.data")
    command = runner.command("load", client, server, transport, calls=calls, concurrency=concurrency)
    subprocess.run(["perf", "record", "--quiet", "-F", "4999", "-g", "-o", data, "--"] + command,
                   check=True, stdout=subprocess.DEVNULL)
    print(f"{client}, {transport}, {concurrency} in flight, {calls} calls against {server.name} "
          f"(process start-up and 200 warm-up calls included); data: {data}\n")
    for sort, limit in (("dso", "0.5"), ("symbol", "0.6")):
        report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio", "-g", "none",
                                 "--sort", sort, "--percent-limit", limit],
                                check=True, capture_output=True, text=True).stdout
        demangled = subprocess.run(["swift", "demangle", "--simplified"], input=report,
                                   check=True, capture_output=True, text=True).stdout
        rows = (re.sub(r"[\s-]+$", "", line) for line in demangled.splitlines() if line.strip() and not line.startswith("#"))
        text = "\n".join(rows)
        with open(os.path.join(out, f"report-{client}-{transport}-{concurrency}-{sort}.txt"), "w") as handle:
            handle.write(demangled)
        print(f"by {sort} (≥ {limit} % of samples):\n{text}\n")
