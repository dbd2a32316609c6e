"""`bench.py --compare BEFORE`: a change measured against the build before it, on this machine, now.

CPU per call moves by ±5-15 % between runs on a shared 2-core machine, more than most single
changes, so medians of two separate `--quick` runs cannot tell a 3 % gain from the load. Here the
two builds run in the same interleaved rounds (before then after, then after then before: neither
always runs first), and each round's after/before ratio is taken: the load a round saw weighs on
both sides of its ratio. The answer is the geometric mean of those ratios, their range, and how
many rounds point the same way (a sign test: when the change does nothing, all of 9 rounds agree
by chance once in 256 runs)."""

import math
import os
import shutil
import statistics

# The figures compared, and which way is better.
FIGURES = (("cpu_us_per_call", "CPU µs/call", "lower"),
           ("context_switches_per_call", "switches/call", "lower"),
           ("calls_per_second", "calls/s", "higher"))


def paired(before, after, key):
    """The per-round ratios after/before of `key` (runs of the same round side by side), their
    geometric mean, and how many rounds went down and up."""
    if len(before) != len(after) or not before:
        raise ValueError("paired rounds need the same, non-zero number of runs on both sides")
    ratios = [b[key] / a[key] for a, b in zip(before, after)]
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return {"ratios": ratios, "geomean": mean,
            "down": sum(r < 1 for r in ratios), "up": sum(r > 1 for r in ratios)}


def sign_test(agreeing, rounds):
    """The chance that `agreeing` or more of `rounds` rounds point one given way when the change
    does nothing (each round then as likely up as down), doubled for either way."""
    tail = sum(math.comb(rounds, k) for k in range(agreeing, rounds + 1)) / 2 ** rounds
    return min(1.0, 2 * tail)


def verdict(result, better):
    """One line for a figure's comparison: the mean change, the range, the rounds that agree."""
    mean, ratios = result["geomean"], result["ratios"]
    rounds = len(ratios)
    agreeing = max(result["down"], result["up"])
    went = "down" if result["down"] >= result["up"] else "up"
    p = sign_test(agreeing, rounds)
    if p <= 0.05:
        good = (went == "down") == (better == "lower")
        judged = "better" if good else "WORSE"
        call = f"{judged} beyond the rounds' noise"
    else:
        call = "within the rounds' noise"
    return (f"{(mean - 1) * 100:+.1f} % (rounds {min(ratios):.3f}-{max(ratios):.3f}; {agreeing} of {rounds} "
            f"{went}, chance {p:.3f}): {call}")


def saved_copy(path, work):
    """The BEFORE build (bench.py has checked it is an executable file), copied into the run's
    directory: a build made meanwhile cannot change it."""
    copy = os.path.join(work, "BenchClient.before")
    shutil.copy2(path, copy)
    return copy


def run(arguments, runner, server, clients, transports, work):
    """Runs the current build and `arguments.compare` in the same interleaved rounds, prints each
    figure's paired change; returns the lines."""
    before = saved_copy(arguments.compare, work)
    after = runner.client
    concurrency = arguments.concurrency
    calls = arguments.calls if concurrency > 1 else arguments.calls_sequential
    runs = {}
    for round_index in range(arguments.rounds):
        for transport in transports:
            for client in clients:
                sides = (("before", before), ("after", after))
                for side, binary in sides if round_index % 2 == 0 else reversed(sides):
                    runner.client = binary
                    runs.setdefault((transport, client, side), []).append(
                        runner.load(client, server, transport, concurrency, calls))
        print(f"compare: round {round_index + 1} of {arguments.rounds} done", flush=True)
    runner.client = after
    lines = [f"\n{arguments.compare} (before) against this build (after), {server.name} "
             f"server, {concurrency} in flight, {calls} calls a run, {arguments.rounds} interleaved rounds; "
             "per-round after/before ratios, their geometric mean (each figure is tested on its own: of twenty "
             "figures a change does not move, one passes the test by chance):"]
    for transport in transports:
        for client in clients:
            a, b = runs[(transport, client, "before")], runs[(transport, client, "after")]
            for key, label, better in FIGURES:
                median_a = statistics.median(r[key] for r in a)
                median_b = statistics.median(r[key] for r in b)
                lines.append(f"  {client:11} {transport:4} {label:14} {median_a:10.2f} -> {median_b:10.2f}  "
                             + verdict(paired(a, b, key), better))
    print("\n".join(lines))
    return lines
