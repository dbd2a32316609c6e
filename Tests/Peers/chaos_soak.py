#!/usr/bin/env python3
"""The chaos soak: many unary calls through a proxy that cuts connections, with a server crash.

Starts soak_server.py (grpcio) on a loopback port and chaos_proxy.py in front of it, runs the Swift
ChaosSoak client through the proxy, and kills the server (SIGKILL) once half of the calls have
finished, starting it again on the same port after --down-ms. Then it checks, and reports:

- every call ended, each exactly once, with OK or a status, within its deadline (plus --slack-ms);
- no request ran twice on the server (the server records each call's x-soak-id);
- every call that ended OK ran on the server;
- the client's RSS and open descriptors stayed flat after the first 10,000 calls.

Exit status 0 when every check holds, 1 otherwise. Everything runs on 127.0.0.1 and stops by
itself (--max-seconds bounds the whole run).
"""

import argparse
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STATUS_NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                "UNAUTHENTICATED"]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(arguments, ready_prefix, timeout=60):
    """Starts a helper process (stdin held open, so it dies with us) and waits for its READY line."""
    process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{arguments[1]} exited before it was ready (status {process.wait()})")
        if line.startswith(ready_prefix):
            return process, line.split()[-1]
    process.kill()
    raise RuntimeError(f"{arguments[1]} was not ready within {timeout} s")


def stop(process, sig=signal.SIGTERM):
    if process.poll() is None:
        process.send_signal(sig)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True, help="the built ChaosSoak executable")
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--deadline-ms", type=int, default=5000)
    parser.add_argument("--slack-ms", type=int, default=1000, help="how late past its deadline a call may end")
    parser.add_argument("--mean-lifetime-ms", type=float, default=2000.0, help="the proxy's mean connection lifetime")
    parser.add_argument("--down-ms", type=int, default=1500, help="how long the crashed server stays down")
    parser.add_argument("--rss-growth-kib", type=int, default=4096, help="allowed RSS growth after 10,000 calls")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-seconds", type=int, default=1200, help="give up after this long")
    parser.add_argument("--report", help="write the results as JSON here")
    arguments = parser.parse_args(argv)

    work = tempfile.mkdtemp(prefix="authrpc-soak-")
    ids_file = os.path.join(work, "server-ids.txt")
    outcomes_file = os.path.join(work, "outcomes.txt")
    proxy_stats = os.path.join(work, "proxy.json")
    python = sys.executable
    server_port = free_port()
    server_command = [python, os.path.join(HERE, "soak_server.py"), "--port", str(server_port),
                      "--ids-file", ids_file, "--exit-with-stdin"]
    server, _ = start(server_command, "SOAK SERVER READY")
    proxy, proxy_port = start([python, os.path.join(HERE, "chaos_proxy.py"), "--target-port", str(server_port),
                               "--mean-lifetime-ms", str(arguments.mean_lifetime_ms), "--refuse-fraction", "0.02", "--seed", str(arguments.seed),
                               "--stats-file", proxy_stats, "--exit-with-stdin"], "CHAOS PROXY READY")
    client = subprocess.Popen([arguments.client, "--target", f"127.0.0.1:{proxy_port}", "--calls", str(arguments.calls),
                               "--concurrency", str(arguments.concurrency), "--deadline-ms", str(arguments.deadline_ms),
                               "--outcomes-file", outcomes_file], stdout=subprocess.PIPE, text=True)
    watchdog = threading.Timer(arguments.max_seconds, client.kill)
    watchdog.start()

    samples = []
    restarted_at = None
    done = False
    started = time.monotonic()
    try:
        for line in client.stdout:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "SAMPLE":
                samples.append({"calls": int(parts[1]), "rss_kib": int(parts[2]), "fds": int(parts[3])})
            elif parts[0] == "PROGRESS" and restarted_at is None and int(parts[1]) >= arguments.calls // 2:
                restarted_at = int(parts[1])
                stop(server, signal.SIGKILL)
                time.sleep(arguments.down_ms / 1000)
                server, _ = start(server_command, "SOAK SERVER READY")
            elif parts[0] == "DONE":
                done = True
        client.wait()
    finally:
        watchdog.cancel()
        elapsed = time.monotonic() - started
        stop(proxy)
        stop(server)

    failures = []
    if not done or client.returncode != 0:
        failures.append(f"the client did not finish (status {client.returncode}, bounded at {arguments.max_seconds} s)")

    outcomes = {}
    duplicate_outcomes = 0
    late = []
    codes = collections.Counter()
    with open(outcomes_file, encoding="ascii") as file:
        for line in file:
            call_id, code, micros = (int(field) for field in line.split())
            if call_id in outcomes:
                duplicate_outcomes += 1
            outcomes[call_id] = code
            codes[STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else str(code)] += 1
            if micros > (arguments.deadline_ms + arguments.slack_ms) * 1000:
                late.append((call_id, micros / 1000))
    missing = arguments.calls - len(outcomes)
    if missing or duplicate_outcomes:
        failures.append(f"{missing} calls never ended, {duplicate_outcomes} ended twice")
    if late:
        failures.append(f"{len(late)} calls ended more than {arguments.slack_ms} ms after their deadline (worst {max(m for _, m in late):.0f} ms)")

    ran = collections.Counter()
    with open(ids_file, encoding="ascii", errors="replace") as file:
        for line in file:
            text = line.strip()
            if text.isdigit():
                ran[int(text)] += 1
    twice = sorted(call_id for call_id, count in ran.items() if count > 1)
    if twice:
        failures.append(f"{len(twice)} requests ran more than once on the server (first: {twice[:5]})")
    ok_not_run = [call_id for call_id, code in outcomes.items() if code == 0 and ran[call_id] == 0]
    if ok_not_run:
        failures.append(f"{len(ok_not_run)} calls ended OK but never ran on the server")

    warm = next((sample for sample in samples if sample["calls"] >= 10_000), None)
    last = samples[-1] if samples else None
    rss_growth = (last["rss_kib"] - warm["rss_kib"]) if warm and last else None
    # Compared after warm-up too: the live connection (socket + wake-up descriptor) and the
    # runtime's own descriptors (created on first use) are there by then.
    fd_growth = (last["fds"] - warm["fds"]) if warm and last else None
    if rss_growth is not None and rss_growth > arguments.rss_growth_kib:
        failures.append(f"RSS grew by {rss_growth} KiB after the first 10,000 calls (allowed {arguments.rss_growth_kib})")
    if fd_growth is not None and fd_growth > 2:
        failures.append(f"open descriptors grew by {fd_growth} after the first 10,000 calls")

    with open(proxy_stats, encoding="utf-8") as file:
        proxy_counts = json.load(file)
    report = {
        "calls": arguments.calls, "concurrency": arguments.concurrency, "deadline_ms": arguments.deadline_ms,
        "seconds": round(elapsed, 1), "statuses": dict(codes), "server_restarted_after_calls": restarted_at,
        "ran_on_server": sum(ran.values()), "ran_twice": len(twice), "late": len(late),
        "rss_kib_first_last": [samples[0]["rss_kib"], last["rss_kib"]] if last else None,
        "rss_growth_after_10k_kib": rss_growth, "fd_growth": fd_growth, "samples": samples,
        "proxy": proxy_counts, "failures": failures,
    }
    if arguments.report:
        with open(arguments.report, "w", encoding="utf-8") as file:
            json.dump(report, file, indent=2)

    print(f"chaos soak: {arguments.calls} calls, {arguments.concurrency} in flight, deadline {arguments.deadline_ms} ms, "
          f"{elapsed:.1f} s")
    print(f"  statuses: {', '.join(f'{name} {count}' for name, count in codes.most_common())}")
    print(f"  proxy: {proxy_counts['accepted']} connections, {proxy_counts['reset']} reset, {proxy_counts['closed']} closed, "
          f"{proxy_counts['refused']} refused; server killed and restarted after {restarted_at} calls")
    print(f"  server ran {sum(ran.values())} requests, {len(twice)} of them more than once")
    if last:
        print(f"  client RSS {samples[0]['rss_kib']} -> {last['rss_kib']} KiB (growth after 10,000 calls: {rss_growth} KiB), "
              f"open fds {samples[0]['fds']} -> {last['fds']}")
    for failure in failures:
        print(f"  FAILED: {failure}")
    print("  all checks passed" if not failures else f"  {len(failures)} check(s) failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
