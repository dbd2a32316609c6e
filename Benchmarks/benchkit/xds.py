"""The xDS row (issue 26): what a call on an `xds:///` channel costs over the same call on a plain
round-robin channel to the same servers.

The control plane is the tests' own (Tests/Peers/xds_control_plane.py), run as a child process as
the Swift tests run it: `--exit-with-stdin`, ready when it prints `XDS_CONTROL_PLANE READY <json
path>`, driven by its admin port's `POST /command`. It is told one listener -> one route -> one EDS
cluster (ROUND_ROBIN) whose endpoints are the bench's C++ servers' h2c ports, the servers the
round-robin channel's `ipv4:` target names, so both channels make one connection to each.

Issue 26's standard: at most +5 % CPU and +1 malloc per call. Mallocs are counted exactly and
checked as they are. CPU per call is a ratio of two noisy figures, and on this shared 2-core
machine one round's ratio of the same call to itself moves by up to ±15 % with the load, a
5-round median by up to 7 % (RESULTS.md has the figures), so a bare "median ratio ≤ 1.05" would
fail unchanged code at random. Each round pairs the two channels under
the same load; the check is a one-sided t-test on the rounds' log ratios: the run fails when even
the lower 95 % confidence bound of the xds call's CPU ratio (the geometric mean of the per-round
ratios, less t × its standard error) is above 1.05, that is, when the rounds show beyond their own
noise that the call costs more than 5 % more. A cost the rounds cannot tell from 5 % passes and is
said so; with one round there is no noise to measure, and CPU is not checked.
"""

import http.client
import json
import math
import os
import selectors
import statistics
import subprocess
import sys

from .processes import ROOT, stop_child

CONTROL_PLANE = os.path.join(ROOT, "Tests", "Peers", "xds_control_plane.py")
# The listener the channel's target names (`xds:///bench`), and the resources it leads to.
LISTENER = "bench"
TARGET = f"xds:///{LISTENER}"
# The two rows' client labels: the plain round-robin channel and the xDS one.
ROUND_ROBIN = "authrpc-rr"
XDS = "authrpc-xds"
ALLOWANCE = {"mallocs": 1, "cpu_percent": 5}
# One-sided 95 % quantiles of Student's t by degrees of freedom (rounds − 1); between two entries
# the smaller number of degrees (the larger quantile) is used, beyond the last the normal's.
T_95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833, 10: 1.812,
        12: 1.782, 15: 1.753, 20: 1.725, 30: 1.697}


def bootstrap(port, node_id="bench"):
    """The bootstrap (gRFC A27) naming the control plane on 127.0.0.1:`port`, for
    GRPC_XDS_BOOTSTRAP_CONFIG."""
    return json.dumps({"xds_servers": [{"server_uri": f"127.0.0.1:{port}", "channel_creds": [{"type": "insecure"}],
                                        "server_features": ["xds_v3"]}],
                       "node": {"id": node_id}})


def cluster_command(ports, listener=LISTENER):
    """The control plane's `basic` command: `listener` -> its routes -> one ROUND_ROBIN EDS cluster
    whose endpoints (one HEALTHY locality) are 127.0.0.1 at each of `ports`."""
    return {"op": "basic", "listener": listener, "route": f"{listener}-routes", "cluster": f"{listener}-cluster",
            "eds": f"{listener}-eds", "backends": [["127.0.0.1", str(port)] for port in ports]}


class ControlPlane:
    """Tests/Peers/xds_control_plane.py as a child process; it exits when its stdin closes."""

    def __init__(self, state_dir, python=sys.executable):
        os.makedirs(state_dir, exist_ok=True)
        self.process = subprocess.Popen([python, CONTROL_PLANE, "--state-dir", state_dir, "--exit-with-stdin"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=60)
        words = self.process.stdout.readline().split() if ready else []
        if words[:2] != ["XDS_CONTROL_PLANE", "READY"]:
            self.close()
            raise RuntimeError("the xDS control plane (Tests/Peers/xds_control_plane.py) did not start within 60 s")
        with open(words[2]) as handle:
            info = json.load(handle)
        self.port, self.admin_port = info["port"], info["admin_port"]

    def command(self, command):
        """One change (see `apply_command` in the script). http.client, not urllib: urllib would
        send loopback traffic through a proxy the environment names."""
        connection = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=30)
        try:
            body = json.dumps(command)
            connection.request("POST", "/command", body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            text = answer.read().decode("utf-8", "replace")
        finally:
            connection.close()
        if answer.status != 200:
            raise RuntimeError(f"the xDS control plane refused {command}: {answer.status} {text}")

    def close(self):
        stop_child(self.process)


def round_order(round_number):
    """The two channels' order in a round, swapped every other round (A B B A ...): a drift in the
    machine's load over a round then favours neither."""
    return (ROUND_ROBIN, XDS) if round_number % 2 == 0 else (XDS, ROUND_ROBIN)


def t_95(degrees):
    """The one-sided 95 % quantile of Student's t with `degrees` degrees of freedom, rounded up."""
    if degrees < 1:
        raise ValueError("no degrees of freedom: one round measures no noise")
    known = [d for d in T_95 if d <= degrees]
    return T_95[max(known)] if degrees <= max(T_95) else 1.645


def cpu_bounds(ratios):
    """(geometric mean, its lower one-sided 95 % confidence bound) of the per-round ratios, from
    their logs (a ratio's noise is multiplicative); the bound is None for fewer than two rounds."""
    logs = [math.log(ratio) for ratio in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), None
    error = statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - t_95(len(logs) - 1) * error)


def rows(records):
    """{in flight: row} from the phase's records: each record a run of `impl` (ROUND_ROBIN or
    XDS) at `concurrency` in flight, timed (in round order) or `counted` (malloc counter
    preloaded). A row holds each channel's median CPU µs/call, the per-round CPU ratios (xds /
    round robin), their median, geometric mean and its lower 95 % bound, each channel's
    mallocs/call and their difference."""
    found = {}
    for concurrency in sorted({r["concurrency"] for r in records}):
        def timed(impl):
            return [r["cpu_us_per_call"] for r in records
                    if r["impl"] == impl and r["concurrency"] == concurrency and not r.get("counted")]

        def counted(impl):
            values = [r["mallocs_per_call"] for r in records
                      if r["impl"] == impl and r["concurrency"] == concurrency and r.get("counted")]
            return statistics.median(values) if values else float("nan")
        plain, xds = timed(ROUND_ROBIN), timed(XDS)
        if not plain or len(plain) != len(xds):
            raise ValueError(f"{concurrency} in flight: {len(plain)} round-robin and {len(xds)} xds rounds")
        ratios = [mine / theirs for mine, theirs in zip(xds, plain)]
        mean, lower = cpu_bounds(ratios)
        found[concurrency] = {
            "rounds": len(ratios), "calls": next(r["calls"] for r in records if r["concurrency"] == concurrency),
            "cpu_rr": statistics.median(plain), "cpu_xds": statistics.median(xds),
            "ratio": statistics.median(ratios), "ratios": ratios, "ratio_mean": mean, "ratio_lower": lower,
            "mallocs_rr": counted(ROUND_ROBIN), "mallocs_xds": counted(XDS),
        }
        found[concurrency]["mallocs_extra"] = found[concurrency]["mallocs_xds"] - found[concurrency]["mallocs_rr"]
    return found


def cpu_verdict(row, allowance=ALLOWANCE):
    """"OVER" when the rounds show the xds call's CPU above the allowance beyond their noise (the
    lower 95 % bound of its ratio is above it), "ok" when its ratio is within the allowance, and
    what else holds otherwise."""
    limit = 1 + allowance["cpu_percent"] / 100
    if row["ratio_lower"] is None:
        return "not checked (one round measures no noise)"
    if row["ratio_lower"] > limit:
        return "OVER"
    if row["ratio_mean"] > limit:
        return "above the allowance, but not beyond the rounds' noise"
    return "ok"


def mallocs_verdict(row, allowance=ALLOWANCE):
    """"OVER" when the xds call makes more than the allowance's mallocs more per call (or was not
    counted), else "ok"."""
    return "ok" if row["mallocs_extra"] <= allowance["mallocs"] else "OVER"  # NaN (not counted) is OVER


def check(found, allowance=ALLOWANCE):
    """(over, lines): each row against issue 26's standard (see `cpu_verdict`, `mallocs_verdict`)."""
    over, lines = [], []
    for concurrency, row in sorted(found.items()):
        cpu, mallocs = cpu_verdict(row, allowance), mallocs_verdict(row, allowance)
        bound = "" if row["ratio_lower"] is None else f", lower 95 % bound {row['ratio_lower']:.3f}×"
        line = (f"xds vs round robin, h2c, {concurrency} in flight: CPU {row['ratio_mean']:.3f}× (geometric mean of "
                f"{row['rounds']} rounds{bound}; allowed {1 + allowance['cpu_percent'] / 100:.2f}×): {cpu}; "
                f"mallocs {row['mallocs_extra']:+.2f}/call (allowed +{allowance['mallocs']}): {mallocs}")
        lines.append(line)
        if "OVER" in (cpu, mallocs):
            over.append(line)
    return over, lines


def table(found):
    """The row as text lines, for the console and RESULTS.md."""
    lines = [f"| in flight | rounds | calls/run | {ROUND_ROBIN} CPU µs/call | {XDS} CPU µs/call | CPU ratio: median "
             f"(rounds' range) | geometric mean, lower 95 % bound | {ROUND_ROBIN} mallocs/call | {XDS} mallocs/call | "
             "mallocs difference |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for concurrency, row in sorted(found.items()):
        bound = "–" if row["ratio_lower"] is None else f"{row['ratio_lower']:.3f}×"
        lines.append(f"| {concurrency} | {row['rounds']} | {row['calls']:,} | {row['cpu_rr']:.2f} | {row['cpu_xds']:.2f} | "
                     f"{row['ratio']:.3f}× ({min(row['ratios']):.3f}–{max(row['ratios']):.3f}) | "
                     f"{row['ratio_mean']:.3f}×, {bound} | "
                     f"{row['mallocs_rr']:.2f} | {row['mallocs_xds']:.2f} | {row['mallocs_extra']:+.2f} |")
    return lines
