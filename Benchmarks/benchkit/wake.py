"""What one thread wake costs on this machine (WakeCost/wake_cost.c: two threads handing a token
back and forth through futex-backed semaphores), and how much of a call's cost on the default
executor the extra wakes explain: such a call makes more context switches than gRPC C-core's
completion-queue client, whose calling thread polls its queue, or than a call on Channel.executor."""

import json
import os
import shutil
import subprocess

from .processes import HERE

SOURCE = os.path.join(HERE, "WakeCost", "wake_cost.c")
HANDOFFS = 100_000


def build():
    """Compiles wake_cost into Benchmarks/.build/wake-cost (again only when its source changed)."""
    out = os.path.join(HERE, ".build", "wake-cost")
    binary = os.path.join(out, "wake_cost")
    if os.path.exists(binary) and os.path.getmtime(binary) > os.path.getmtime(SOURCE):
        return binary
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("bench: no C compiler for WakeCost/wake_cost.c: run `Scripts/install-deps.sh --bench`")
    os.makedirs(out, exist_ok=True)
    subprocess.run([compiler, "-O2", "-pthread", SOURCE, "-o", binary + ".partial"], check=True)
    os.replace(binary + ".partial", binary)
    return binary


def measure(binary, handoffs=HANDOFFS):
    """wake_cost's figures: cpu_us_per_handoff, wall_us_per_handoff, context_switches_per_handoff."""
    result = subprocess.run([binary, str(handoffs)], capture_output=True, text=True, check=True, timeout=300)
    return json.loads(result.stdout.strip().splitlines()[-1])


def explained(cpu_us, switches, reference_cpu_us, reference_switches, wake):
    """How much of `cpu_us - reference_cpu_us` (a call against a client that switches less) the
    extra context switches explain at this machine's cost of one wake: (extra switches, their CPU
    in µs, the difference in µs)."""
    extra = max(0.0, switches - reference_switches)
    return extra, extra * wake["cpu_us_per_handoff"], cpu_us - reference_cpu_us
