"""Self-tests of the measuring tools (`make bench-selftest`, also run first by `make bench` and
`make bench-quick`): the malloc counter counts exactly, h2load's request body is the message the
Swift clients send, the allocation and memory budgets and the regression guard fail what they
should, h2load's per-call figure cancels its start-up, and the callgrind reader counts self costs."""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest
from unittest import mock

from . import async_frames, budget, callgrind, clients, compare, frames, regression, report, session, wake, xds
from .processes import HERE, ROOT

COUNTER_SOURCE = os.path.join(HERE, "Sources", "MallocCounter")

# Every entry point once or more, between two snapshots; the counts it must produce.
PROBE = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <dlfcn.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include "MallocCounter.h"

    int main(void) {
        void (*snapshot)(struct malloc_counts *) = (void (*)(struct malloc_counts *))dlsym(RTLD_DEFAULT, "malloc_counter_snapshot");
        if (snapshot == NULL) return 3;
        struct malloc_counts before, after;
        void *volatile blocks[100];
        snapshot(&before);
        for (int i = 0; i < 100; i++) blocks[i] = malloc(24);
        void *volatile zeroed = calloc(10, 8);
        void *volatile grown = realloc(NULL, 16);
        grown = realloc(grown, 4096);
        void *aligned = NULL;
        if (posix_memalign(&aligned, 64, 128) != 0) return 4;
        void *volatile aligned_too = aligned_alloc(64, 256);
        for (int i = 0; i < 100; i++) free(blocks[i]);
        free(zeroed);
        free(grown);
        free(aligned);
        free(aligned_too);
        free(NULL);
        snapshot(&after);
        printf("%llu %llu %llu %llu %lld\\n",
               (unsigned long long)(after.allocations - before.allocations),
               (unsigned long long)(after.reallocations - before.reallocations),
               (unsigned long long)(after.frees - before.frees),
               (unsigned long long)(after.bytes - before.bytes),
               (long long)(after.live_bytes - before.live_bytes));
        return 0;
    }
    """)

# Blocks of two sizes held between two live-block copies, then freed: the buckets they fall in.
LIVE_PROBE = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <dlfcn.h>
    #include <malloc.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include "MallocCounter.h"

    static int64_t first[MALLOC_COUNTER_BLOCK_BUCKETS], held[MALLOC_COUNTER_BLOCK_BUCKETS],
        last[MALLOC_COUNTER_BLOCK_BUCKETS];

    int main(void) {
        uint64_t (*copy)(int64_t *, uint64_t) = (uint64_t (*)(int64_t *, uint64_t))dlsym(RTLD_DEFAULT, "malloc_counter_live_blocks");
        if (copy == NULL) return 3;
        void *volatile small[7], *volatile large[3];
        if (copy(first, MALLOC_COUNTER_BLOCK_BUCKETS) != MALLOC_COUNTER_BLOCK_BUCKETS) return 4;
        for (int i = 0; i < 7; i++) small[i] = malloc(40);
        for (int i = 0; i < 3; i++) large[i] = malloc(1000);
        void *volatile moved = malloc(40);
        moved = realloc(moved, 1000);  /* leaves the small bucket for the large one */
        copy(held, MALLOC_COUNTER_BLOCK_BUCKETS);
        size_t small_bucket = malloc_usable_size(small[0]) / MALLOC_COUNTER_BLOCK_STEP;
        size_t large_bucket = malloc_usable_size(large[0]) / MALLOC_COUNTER_BLOCK_STEP;
        for (int i = 0; i < 7; i++) free(small[i]);
        for (int i = 0; i < 3; i++) free(large[i]);
        free(moved);
        copy(last, MALLOC_COUNTER_BLOCK_BUCKETS);
        long long others = 0;
        for (size_t i = 0; i < MALLOC_COUNTER_BLOCK_BUCKETS; i++) {
            if (i != small_bucket && i != large_bucket) others += llabs(held[i] - first[i]);
        }
        long long back = 0;
        for (size_t i = 0; i < MALLOC_COUNTER_BLOCK_BUCKETS; i++) back += llabs(last[i] - first[i]);
        printf("%lld %lld %lld %lld\\n", (long long)(held[small_bucket] - first[small_bucket]),
               (long long)(held[large_bucket] - first[large_bucket]), others, back);
        return 0;
    }
    """)


class MallocCounterTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="malloc-counter-test-")
        cls.library = os.path.join(cls.work, "libMallocCounter.so")
        include = os.path.join(COUNTER_SOURCE, "include")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I", include, os.path.join(COUNTER_SOURCE, "MallocCounter.c"),
                        "-o", cls.library], check=True)
        probe = os.path.join(cls.work, "probe.c")
        with open(probe, "w") as handle:
            handle.write(PROBE)
        cls.probe = os.path.join(cls.work, "probe")
        # -O0 and -fno-builtin: the compiler must not elide a malloc/free pair.
        subprocess.run(["cc", "-O0", "-fno-builtin", "-I", include, probe, "-o", cls.probe], check=True)
        live_probe = os.path.join(cls.work, "live_probe.c")
        with open(live_probe, "w") as handle:
            handle.write(LIVE_PROBE)
        cls.live_probe = os.path.join(cls.work, "live_probe")
        subprocess.run(["cc", "-O0", "-fno-builtin", "-I", include, live_probe, "-o", cls.live_probe], check=True)

    def run_probe(self, env):
        return subprocess.run([self.probe], capture_output=True, text=True, env={**os.environ, **env})

    def test_counts_each_allocation_entry_point_exactly(self):
        result = self.run_probe({"LD_PRELOAD": self.library})
        self.assertEqual(result.returncode, 0, result.stderr)
        allocations, reallocations, frees, asked, live = (int(x) for x in result.stdout.split())
        self.assertEqual(allocations, 104)  # 100 malloc, calloc, realloc(NULL), posix_memalign, aligned_alloc
        self.assertEqual(reallocations, 1)
        self.assertEqual(frees, 104)  # free(NULL) is not a free
        self.assertEqual(asked, 100 * 24 + 80 + 16 + 4096 + 128 + 256)
        self.assertEqual(live, 0)  # every block was freed

    def test_counts_live_blocks_by_size_and_lets_them_go_when_freed(self):
        result = subprocess.run([self.live_probe], capture_output=True, text=True,
                                env={**os.environ, "LD_PRELOAD": self.library})
        self.assertEqual(result.returncode, 0, result.stderr)
        small, large, others, back = (int(x) for x in result.stdout.split())
        self.assertEqual(small, 7)  # the eighth small block was grown into a large one
        self.assertEqual(large, 4)
        self.assertEqual(others, 0)
        self.assertEqual(back, 0)  # every block freed: every bucket as before

    def test_without_the_preload_there_is_nothing_to_read(self):
        self.assertEqual(self.run_probe({"LD_PRELOAD": ""}).returncode, 3)

    def test_writes_the_whole_process_counts_at_exit_when_asked(self):
        report = os.path.join(self.work, "report.json")
        result = subprocess.run(["true"], env={**os.environ, "LD_PRELOAD": self.library, "MALLOC_COUNTER_REPORT": report})
        self.assertEqual(result.returncode, 0)
        with open(report) as handle:
            counts = json.load(handle)
        self.assertEqual(set(counts), {"allocations", "reallocations", "frees", "bytes", "live_bytes"})


class FrameTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(ROOT, "Examples", "Sandbox"))
        import test_service  # the sandbox's own generator for interop.proto
        cls.messages, _ = test_service.load_protos(tempfile.mkdtemp(prefix="bench-protos-"))

    def test_h2load_body_is_the_framed_simple_request(self):
        for request_bytes, response_bytes in ((100, 100), (0, 4 << 20), (4 << 20, 0)):
            frame = frames.request_frame(request_bytes, response_bytes)
            self.assertEqual(frame[0], 0)  # not compressed
            self.assertEqual(int.from_bytes(frame[1:5], "big"), len(frame) - 5)
            request = self.messages.SimpleRequest.FromString(frame[5:])
            self.assertEqual(request.response_size, response_bytes)
            self.assertEqual(request.payload.body, bytes(request_bytes))

    def test_h2load_command_makes_the_benchmarks_grpc_call(self):
        work = tempfile.mkdtemp(prefix="bench-h2load-")
        open(os.path.join(work, "libMallocCounter.so"), "w").close()
        runner = clients.Runner(work, work, "ca.pem")
        server = types.SimpleNamespace(ports={"h2c": 5001, "tls": 5002})
        command = runner.h2load_command(server, "tls", 1, 400, 100, 100)
        self.assertEqual(command[-1], "https://localhost:5002" + clients.PATH)
        self.assertEqual(command[command.index("-n") + 1], "400")
        self.assertEqual(command[command.index("-c") + 1], "1")  # one connection, as the clients use
        headers = [command[i + 1] for i, word in enumerate(command) if word == "-H"]
        self.assertEqual(headers, ["content-type: application/grpc", "te: trailers",
                                   f"authorization: Bearer {clients.TOKEN}"])
        with open(command[command.index("-d") + 1], "rb") as handle:
            self.assertEqual(handle.read(), frames.request_frame(100, 100))
        self.assertEqual(runner.h2load_command(server, "h2c", 1, 1)[-1], "http://127.0.0.1:5001" + clients.PATH)

    def test_h2load_summary_refuses_a_run_with_a_failed_call_or_short_data(self):
        frame = frames.min_response_frame_size(100)
        summary = ("finished in 250.5ms, 1596.81 req/s, 200.03KB/s\n"
                   "requests: 400 total, 400 started, 400 done, {} succeeded, {} failed, 0 errored, 0 timeout\n"
                   "traffic: 79.64KB (81552) total, 6.64KB (6800) headers (space savings 90.34%), {}B ({}) data\n")
        seconds, data = clients.h2load_summary(summary.format(400, 0, 400 * frame, 400 * frame), 400, 100, "here")
        self.assertAlmostEqual(seconds, 0.2505)
        self.assertEqual(data, 400 * frame)
        with self.assertRaisesRegex(RuntimeError, "399 of 400 succeeded"):
            clients.h2load_summary(summary.format(399, 1, 400 * frame, 400 * frame), 400, 100, "here")
        with self.assertRaisesRegex(RuntimeError, "response data bytes"):  # 2xx without the message
            clients.h2load_summary(summary.format(400, 0, 0, 0), 400, 100, "here")
        with self.assertRaisesRegex(RuntimeError, "cannot read"):
            clients.h2load_summary("connect failed\n", 400, 100, "here")

    def test_min_response_frame_size_is_a_real_response_frame(self):
        for response_bytes in (1, 100, 4 << 20):
            response = self.messages.SimpleResponse()
            response.payload.body = bytes(response_bytes)
            self.assertEqual(frames.min_response_frame_size(response_bytes), 5 + len(response.SerializeToString()))
        self.assertEqual(frames.min_response_frame_size(0), 5)


class AsyncFrameTests(unittest.TestCase):
    """async_frames reads each async function's context size from a real Swift binary."""

    SOURCE = textwrap.dedent("""
        @inline(never) func pause() async { await Task.yield() }
        @inline(never) func word(_ index: Int) -> Int { Int(CommandLine.arguments.count) &* index }
        @inline(never) func sum(_ words: (Int, Int, Int, Int, Int, Int, Int, Int)) -> Int {
            words.0 &+ words.1 &+ words.2 &+ words.3 &+ words.4 &+ words.5 &+ words.6 &+ words.7
        }
        @inline(never) func small() async -> Int { await pause(); return 1 }
        // Sixty-four opaque words live across the await: the context must hold them.
        @inline(never) func large(_ seed: Int) async -> Int {
            var rows: [(Int, Int, Int, Int, Int, Int, Int, Int)] = []
            for row in 0..<8 {
                let base = seed &+ row &* 8
                rows.append((word(base), word(base &+ 1), word(base &+ 2), word(base &+ 3),
                             word(base &+ 4), word(base &+ 5), word(base &+ 6), word(base &+ 7)))
            }
            let (a, b, c, d) = (rows[0], rows[1], rows[2], rows[3])
            let (e, f, g, h) = (rows[4], rows[5], rows[6], rows[7])
            rows = []
            await pause()
            return sum(a) &+ sum(b) &+ sum(c) &+ sum(d) &+ sum(e) &+ sum(f) &+ sum(g) &+ sum(h) &+ rows.count
        }
        print(await small() + large(Int(CommandLine.arguments.count)))
        """)

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="async-frames-test-")
        source = os.path.join(cls.work, "main.swift")
        with open(source, "w") as handle:
            handle.write(cls.SOURCE)
        cls.binary = os.path.join(cls.work, "probe")
        subprocess.run(["swiftc", "-O", source, "-o", cls.binary],
                       check=True, capture_output=True)

    def test_reads_the_context_size_of_each_async_function(self):
        sizes = {name: size for name, size in async_frames.async_function_pointers(self.binary)}
        small = next(size for name, size in sizes.items() if name.endswith("small()"))
        large = next(size for name, size in sizes.items() if name.endswith("large(_:)"))
        self.assertGreaterEqual(large, 64 * 8)
        self.assertLess(small, 128)

    def test_refuses_a_file_that_is_not_elf(self):
        with self.assertRaises(ValueError):
            async_frames.sections(b"#!/bin/sh\n" + bytes(64))


class CompareTests(unittest.TestCase):
    """`--compare`'s paired rounds: ratios round by round, their mean, and the sign test."""

    @staticmethod
    def runs(*cpu):
        return [{"cpu_us_per_call": value} for value in cpu]

    def test_ratios_are_taken_round_by_round(self):
        # The second build is 10 % cheaper in every round, while the load moves both by 2x.
        result = compare.paired(self.runs(10, 20, 10), self.runs(9, 18, 9), "cpu_us_per_call")
        self.assertEqual([round(r, 6) for r in result["ratios"]], [0.9, 0.9, 0.9])
        self.assertAlmostEqual(result["geomean"], 0.9)
        self.assertEqual((result["down"], result["up"]), (3, 0))

    def test_unequal_rounds_are_refused(self):
        with self.assertRaises(ValueError):
            compare.paired(self.runs(10, 11), self.runs(9), "cpu_us_per_call")

    def test_sign_test(self):
        self.assertAlmostEqual(compare.sign_test(9, 9), 2 / 512)
        self.assertAlmostEqual(compare.sign_test(8, 9), 2 * 10 / 512)
        self.assertEqual(compare.sign_test(5, 9), 1.0)

    def test_verdict_names_the_direction_that_is_better(self):
        lower = compare.paired(self.runs(*[10] * 9), self.runs(*[9] * 9), "cpu_us_per_call")
        self.assertIn("better beyond the rounds' noise", compare.verdict(lower, "lower"))
        self.assertIn("WORSE beyond the rounds' noise", compare.verdict(lower, "higher"))

    def test_a_split_is_noise(self):
        mixed = compare.paired(self.runs(10, 10, 10, 10, 10, 10, 10, 10, 10),
                               self.runs(9, 11, 9, 11, 9, 11, 9, 11, 9.5), "cpu_us_per_call")
        self.assertIn("within the rounds' noise", compare.verdict(mixed, "lower"))

    def test_five_rounds_cannot_pass_the_test(self):
        # Even 5 of 5 rounds agree by chance once in 16 runs: more rounds are needed.
        same_way = compare.paired(self.runs(*[10] * 5), self.runs(*[9] * 5), "cpu_us_per_call")
        self.assertIn("within the rounds' noise", compare.verdict(same_way, "lower"))


class WakeCostTests(unittest.TestCase):
    """wake_cost really hands off between two threads, and the arithmetic prices the extra wakes."""

    def test_each_handoff_is_one_context_switch_with_a_cost(self):
        figures = wake.measure(wake.build(), handoffs=2000)
        self.assertEqual(figures["handoffs"], 2000)
        # Each handoff puts a thread to sleep: close to one switch each (never none, as a spin would).
        self.assertGreater(figures["context_switches_per_handoff"], 0.5)
        self.assertGreater(figures["cpu_us_per_handoff"], 0)
        self.assertGreater(figures["wall_us_per_handoff"], 0)

    def test_refuses_fewer_than_two_handoffs(self):
        with self.assertRaises(subprocess.CalledProcessError):
            wake.measure(wake.build(), handoffs=1)

    def test_prices_only_the_extra_switches(self):
        extra, priced, difference = wake.explained(60.0, 3.3, 40.0, 1.1, {"cpu_us_per_handoff": 4.0})
        self.assertAlmostEqual(extra, 2.2)
        self.assertAlmostEqual(priced, 8.8)
        self.assertAlmostEqual(difference, 20.0)
        self.assertEqual(wake.explained(30.0, 1.0, 40.0, 1.1, {"cpu_us_per_handoff": 4.0})[:2], (0.0, 0.0))


class BudgetFileTestCase(unittest.TestCase):
    """Each test writes its own allocation-budget.json, in a directory of its own."""

    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="bench-budget-"), "allocation-budget.json")
        patcher = mock.patch.object(budget, "PATH", self.path)
        patcher.start()
        self.addCleanup(patcher.stop)


class BudgetTests(BudgetFileTestCase):
    def write(self, limits, server="grpc-c++"):
        with open(self.path, "w") as handle:
            json.dump({"server": server, "measured_on": "today", "mallocs_per_call": limits}, handle)

    def test_a_figure_over_its_budget_fails_and_one_within_passes(self):
        self.write({"authrpc": {"h2c": {"1": 26, "100": 25}}})
        over, lines = budget.check({("authrpc", "h2c", 1): 26.0, ("authrpc", "h2c", 100): 25.2}, "grpc-c++")
        self.assertEqual(len(lines), 2)
        self.assertEqual(len(over), 1)
        self.assertIn("authrpc h2c 100 in flight: 25.20 mallocs/call, budget 25", over[0])

    def test_a_budget_measured_against_another_server_fails(self):
        self.write({"authrpc": {"h2c": {"1": 26}}}, server="grpc-swift-2")
        over, _ = budget.check({("authrpc", "h2c", 1): 1.0}, "grpc-c++")
        self.assertEqual(len(over), 1)
        self.assertIn("measured against grpc-swift-2", over[0])

    def test_a_missing_budget_fails(self):
        over, _ = budget.check({("authrpc", "h2c", 1): 1.0}, "grpc-c++")
        self.assertIn("missing", over[0])

    def test_update_adds_the_margin_and_keeps_figures_it_did_not_measure(self):
        self.write({"authrpc-session": {"tls": {"1": 40}}})
        budget.update({("authrpc", "h2c", 1): 25.98}, "grpc-c++")
        limits = budget.load()["mallocs_per_call"]
        self.assertEqual(limits["authrpc"]["h2c"]["1"], 28)  # ceil(25.98 × 1.05 + 0.5)
        self.assertEqual(limits["authrpc-session"]["tls"]["1"], 40)


class MemoryBudgetTests(BudgetFileTestCase):

    def write(self, memory=None, server="grpc-c++"):
        document = {"server": server, "measured_on": "today", "mallocs_per_call": {}}
        if memory is not None:
            document[budget.MEMORY_KEY] = memory
        with open(self.path, "w") as handle:
            json.dump(document, handle)

    def test_memory_over_its_budget_fails_and_within_passes(self):
        self.write(memory=7000)
        over, lines = budget.check_memory(7001.0, "grpc-c++")
        self.assertEqual(len(over), 1)
        self.assertIn("7001 B, budget 7000 B (OVER BUDGET)", over[0])
        over, lines = budget.check_memory(6999.0, "grpc-c++")
        self.assertEqual(over, [])
        self.assertIn("(ok)", lines[0])

    def test_a_budget_without_a_memory_figure_or_for_another_server_fails(self):
        self.write(memory=None)
        self.assertIn("no library_rss_bytes_per_call_in_flight", budget.check_memory(1.0, "grpc-c++")[0][0])
        self.write(memory=7000, server="grpc-swift-2")
        self.assertIn("measured against grpc-swift-2", budget.check_memory(1.0, "grpc-c++")[0][0])

    def test_update_adds_the_margin_and_the_malloc_update_keeps_it(self):
        self.write(memory=1)
        budget.update_memory(6835.0)
        self.assertEqual(budget.memory_limit(), 7520)  # 6835 × 1.1 = 7518.5, up to a multiple of 16
        measured_on = budget.load()[budget.MEMORY_DATE_KEY]
        budget.update({("authrpc", "h2c", 1): 16.0}, "grpc-c++")
        self.assertEqual(budget.memory_limit(), 7520)
        self.assertEqual(budget.load()[budget.MEMORY_DATE_KEY], measured_on)


class FrameBudgetTests(BudgetFileTestCase):
    def setUp(self):
        super().setUp()
        with open(self.path, "w") as handle:
            json.dump({"server": "grpc-c++", "measured_on": "today", "mallocs_per_call": {}}, handle)

    def test_only_the_call_chain_is_read(self):
        generated, perform, _ = budget.CALL_FRAMES
        sizes = [(generated, 272), (perform, 560), ("unrelated()", 9999)]
        self.assertEqual(budget.call_frames(sizes), {generated: 272, perform: 560})

    def test_a_grown_or_missing_frame_fails_and_one_within_passes(self):
        generated, perform, closure = budget.CALL_FRAMES
        budget.update_frames({generated: 272, perform: 560, closure: 112})
        over, lines = budget.check_frames({generated: 272, perform: 576})
        self.assertEqual(len(lines), 3)
        self.assertEqual(len(over), 2)
        self.assertIn("576 B, budget 560 B (OVER BUDGET)", over[0])
        self.assertIn("not in the binary", over[1])
        self.assertEqual(budget.check_frames({generated: 256, perform: 560, closure: 112})[0], [])

    def test_a_budget_without_frames_fails_and_the_malloc_update_keeps_them(self):
        self.assertIn("no async_frame_bytes", budget.check_frames({})[0][0])
        budget.update_frames({budget.CALL_FRAMES[0]: 272})
        budget.update({("authrpc", "h2c", 1): 8.0}, "grpc-c++")
        self.assertEqual(budget.load()[budget.FRAMES_KEY], {budget.CALL_FRAMES[0]: 272})


def load_record(impl, concurrency, cpu, transport="h2c", **more):
    return {"impl": impl, "server": "grpc-c++", "transport": transport, "concurrency": concurrency,
            "cpu_us_per_call": cpu, "p50_us": 100.0, "calls_per_second": 10_000.0, **more}


class RegressionTests(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="bench-baseline-"), "target-baseline.json")
        patcher = mock.patch.object(regression, "PATH", self.path)
        patcher.start()
        self.addCleanup(patcher.stop)

    @staticmethod
    def results(authrpc_cpu, h2load_cpu, memory=None):
        """Interleaved rounds at 100 in flight over h2c: round i of each client in order."""
        load = []
        for mine, theirs in zip(authrpc_cpu, h2load_cpu):
            load += [load_record("h2load", 100, theirs), load_record("authrpc", 100, mine),
                     load_record("ccore-cq", 100, 2 * theirs), load_record("ccore-callback", 100, 3 * theirs)]
        results = {"load": load}
        if memory:
            results["inflight"] = [record for own, base in memory for record in (
                {"impl": "baseline", "rss_growth_per_call_bytes": base},
                {"impl": "authrpc", "rss_growth_per_call_bytes": base + own})]
        return results

    def test_a_row_is_the_median_of_per_round_ratios_and_its_noise_their_spread(self):
        rows = regression.target_rows(self.results([8.0, 9.0, 10.5], [4.0, 4.0, 5.0]))
        cpu = rows["cpu-vs-h2load/authrpc/h2c/100"]
        self.assertAlmostEqual(cpu["value"], 2.1)  # ratios 2.0, 2.25, 2.1
        self.assertAlmostEqual(cpu["noise"], 0.25)
        self.assertEqual(cpu["better"], "lower")
        ccore = rows["cpu-vs-ccore/authrpc/h2c/100"]  # against the cheaper C-core client, round by round
        self.assertAlmostEqual(ccore["value"], 1.05)
        self.assertNotIn("cpu-vs-h2load/authrpc/tls/100", rows)  # not measured: no row

    def test_worse_by_more_than_the_noise_regresses_and_within_it_does_not(self):
        baseline = regression.target_rows(self.results([8.0, 8.2, 8.1], [4.0, 4.0, 4.0]))  # 2.025 ± 0.05
        within = regression.target_rows(self.results([8.3, 8.1, 8.5], [4.0, 4.0, 4.0]))  # 2.075 ± 0.1
        regressions, lines = regression.compare(within, baseline)
        self.assertEqual(regressions, [], lines)
        worse = regression.target_rows(self.results([9.0, 9.1, 9.2], [4.0, 4.0, 4.0]))  # 2.275 ± 0.05
        regressions, _ = regression.compare(worse, baseline)
        self.assertTrue(any("CPU per call vs h2load, h2c, 100 in flight" in line and "REGRESSED" in line
                            for line in regressions), regressions)

    def test_a_row_whose_rounds_agree_by_chance_is_allowed_the_runs_typical_noise(self):
        def rows(cpu, session_noise):
            return {"cpu": {"label": "CPU", "better": "lower", "value": cpu, "noise": 0.0, "rounds": 3},
                    "a": {"label": "a", "better": "lower", "value": 1.0, "noise": 0.1, "rounds": 3},
                    "b": {"label": "b", "better": "lower", "value": 1.0, "noise": 0.1, "rounds": 3},
                    "c": {"label": "c", "better": "lower", "value": 1.0, "noise": session_noise, "rounds": 3}}
        # Typical relative noise 0.1 in each run: 2.0 -> 2.3 is within 0.2 × 2.0, 2.0 -> 2.5 is not.
        self.assertEqual(regression.compare(rows(2.3, 0.1), rows(2.0, 0.1))[0], [])
        self.assertEqual(len(regression.compare(rows(2.5, 0.1), rows(2.0, 0.1))[0]), 1)

    def test_a_higher_is_better_row_regresses_when_it_falls(self):
        def rows(value):
            return {"calls": {"label": "calls/s vs h2load", "better": "higher", "value": value, "noise": 0.02}}
        self.assertEqual(regression.compare(rows(0.95), rows(0.9))[0], [])  # faster: fine
        self.assertEqual(len(regression.compare(rows(0.85), rows(0.9))[0]), 1)

    def test_memory_per_call_in_flight_is_checked_round_by_round(self):
        baseline = regression.target_rows(self.results([8.0], [4.0], memory=[(6800, 1450), (6850, 1460)]))
        self.assertAlmostEqual(baseline["memory-per-call-in-flight"]["value"], 6825)
        grown = regression.target_rows(self.results([8.0], [4.0], memory=[(7400, 1450), (7420, 1460)]))
        regressions, _ = regression.compare(grown, baseline)
        self.assertTrue(any("memory" in line for line in regressions), regressions)

    def test_the_first_run_writes_the_baseline_and_the_next_is_checked_against_it(self):
        regressions, lines = regression.check(self.results([8.0, 8.2, 8.1], [4.0, 4.0, 4.0]), ROOT)
        self.assertEqual(regressions, [])
        self.assertIn("no baseline was committed", lines[0])
        self.assertTrue(os.path.exists(self.path))
        regressions, _ = regression.check(self.results([9.0, 9.1, 9.2], [4.0, 4.0, 4.0]), ROOT)
        self.assertTrue(regressions)
        regressions, _ = regression.check(self.results([9.0, 9.1, 9.2], [4.0, 4.0, 4.0]), ROOT, update=True)
        self.assertEqual(regressions, [])
        self.assertAlmostEqual(regression.load()["rows"]["cpu-vs-h2load/authrpc/h2c/100"]["value"], 2.275)


class CCoreReportTests(unittest.TestCase):
    def test_the_targets_table_puts_ccores_cheaper_client_beside_h2load(self):
        load = [load_record("h2load", 100, 4.0), load_record("authrpc", 100, 8.0),
                load_record("ccore-cq", 100, 10.0), load_record("ccore-callback", 100, 16.0),
                load_record("grpc-swift", 100, 40.0)]
        row = next(line for line in report.summary({"load": load}) if line.startswith("| CPU per call, h2c, 100 in flight |"))
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        # figure, server, authrpc, h2load, C-core best, grpc-swift-2, vs h2load, vs C-core, vs grpc-swift-2
        self.assertEqual(cells[2:9], ["8.0 µs", "4.0 µs", "10.0 µs", "40.0 µs", "2.00×", "0.80×", "0.20×"])

    @staticmethod
    def target_cells(results, figure):
        row = next(line for line in report.summary(results) if line.startswith(f"| {figure} |"))
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        return cells[9], cells[10]

    def test_the_cpu_rows_are_held_to_round_fours_targets(self):
        # Default executor: 1.8x h2load at 1 in flight, 1.3x at 100; Channel.executor: 1.1x. Every
        # row also stays under C-core's cheaper client and half of grpc-swift-2.
        load = [load_record("h2load", 1, 10.0), load_record("authrpc", 1, 15.0), load_record("authrpc-io", 1, 10.5),
                load_record("ccore-cq", 1, 16.0), load_record("grpc-swift", 1, 100.0),
                load_record("h2load", 100, 4.0), load_record("authrpc", 100, 5.4), load_record("authrpc-io", 100, 4.6),
                load_record("ccore-cq", 100, 12.0), load_record("grpc-swift", 100, 80.0)]
        results = {"load": load}
        self.assertEqual(self.target_cells(results, "CPU per call, h2c, 1 in flight"),
                         ("≤ 1.8× h2load, ≤ 0.5× grpc-swift-2, < C-core best", "met"))
        self.assertEqual(self.target_cells(results, "CPU per call, h2c, 100 in flight"),
                         ("≤ 1.3× h2load, ≤ 0.5× grpc-swift-2, < C-core best", "**not met**"))
        self.assertEqual(self.target_cells(results, "CPU per call, h2c, 1 in flight, on Channel.executor"),
                         ("≤ 1.1× h2load, ≤ 0.5× grpc-swift-2, < C-core best", "met"))
        self.assertEqual(self.target_cells(results, "CPU per call, h2c, 100 in flight, on Channel.executor")[1],
                         "**not met**")
        # Above C-core's cheaper client fails the row, however close to h2load.
        load[3] = load_record("ccore-cq", 1, 14.0)
        self.assertEqual(self.target_cells(results, "CPU per call, h2c, 1 in flight")[1], "**not met**")

    def test_the_latency_and_rate_rows_of_the_default_executor_are_held_to_round_four(self):
        load = [load_record("h2load", 1, 10.0, p50_us=100.0), load_record("authrpc", 1, 15.0, p50_us=112.0),
                load_record("authrpc-io", 1, 10.5, p50_us=112.0),
                load_record("h2load", 100, 4.0, calls_per_second=10_000.0),
                load_record("authrpc", 100, 5.0, calls_per_second=9_500.0),
                load_record("authrpc-io", 100, 4.0, calls_per_second=9_500.0)]
        results = {"load": load}
        self.assertEqual(self.target_cells(results, "p50 latency, h2c, 1 in flight"),
                         ("≤ 1.1× h2load, ≤ 0.6× grpc-swift-2", "**not met**"))
        self.assertEqual(self.target_cells(results, "calls/s, h2c, 100 in flight"), ("≥ 1.0× h2load", "**not met**"))
        # Round four sets neither for Channel.executor: round one's 1.15x and 0.9x stand.
        self.assertEqual(self.target_cells(results, "p50 latency, h2c, 1 in flight, on Channel.executor")[0],
                         "≤ 1.15× h2load, ≤ 0.6× grpc-swift-2")
        self.assertEqual(self.target_cells(results, "calls/s, h2c, 100 in flight, on Channel.executor"),
                         ("≥ 0.9× h2load", "met"))

    def test_a_4_mib_row_against_the_cpp_server_needs_nine_tenths_of_h2load_too(self):
        def big(impl, rate):
            return {"impl": impl, "server": "grpc-c++", "transport": "h2c", "direction": "response",
                    "concurrency": 1, "gb_per_second": rate}
        results = {"big": [big("h2load", 2.0), big("authrpc", 1.5)]}
        self.assertEqual(self.target_cells(results, "4 MiB responses, h2c, 1 in flight"),
                         ("≥ 1.0 GB/s, ≥ 0.9× h2load", "**not met**"))
        results = {"big": [big("h2load", 2.0), big("authrpc", 1.9)]}
        self.assertEqual(self.target_cells(results, "4 MiB responses, h2c, 1 in flight")[1], "met")

    def test_a_mallocs_row_is_held_to_eight_and_to_the_budget(self):
        allocs = [{"impl": "authrpc", "server": "grpc-c++", "transport": "h2c", "concurrency": 1,
                   "mallocs_per_call": 4.0}]
        with mock.patch.object(budget, "limit_for", return_value=12):
            cells = self.target_cells({"allocations": allocs}, "mallocs per call, h2c, 1 in flight")
            self.assertEqual(cells, ("≤ 8 (issue 23); budget 12", "met"))
            allocs[0]["mallocs_per_call"] = 9.0
            self.assertEqual(self.target_cells({"allocations": allocs}, "mallocs per call, h2c, 1 in flight")[1],
                             "**not met**")

    def test_a_rendered_run_names_the_commit_and_day_it_ran_on(self):
        settings = types.SimpleNamespace(calls_sequential=10, calls=20, rounds=3)
        results = {"commit": "abc1234", "date": "2026-01-02", "phases": [("small", 60.0)], "duration_seconds": 60.0}
        self.assertIn("`make bench` on 2026-01-02 at commit `abc1234`:", report.header(settings, results)[2])

    def test_the_memory_section_holds_the_library_to_one_kib(self):
        def section(own):
            records = [{"impl": impl, "rss_growth_per_call_bytes": rss, "heap_growth_per_call_bytes": rss,
                        "mallocs_per_call_held": 1.0}
                       for impl, rss in (("baseline", 1_500.0), ("authrpc", 1_500.0 + own), ("grpc-swift", 30_000.0))]
            results = {"inflight": records, "settings": {"in_flight": 10_000, "rounds": 3}}
            return next(line for line in report.memory(results) if line.startswith("Target:"))
        self.assertTrue(section(1_900.0).endswith("**not met**."))  # under round two's 2 KiB, over 1 KiB
        self.assertTrue(section(1_000.0).endswith(": met."))

    def test_the_small_calls_table_has_both_ccore_clients(self):
        load = [load_record(impl, 1, 10.0) for impl in ("h2load", "authrpc", "ccore-cq", "ccore-callback")]
        lines = report.small_calls({"load": load, "allocations": []})
        self.assertTrue(any("| C-core CQ (C++ 1.51) |" in line and "| 10.0 |" in line for line in lines), lines)
        self.assertTrue(any("| C-core callback (C++ 1.51) |" in line for line in lines))


class HeldBlocksReportTests(unittest.TestCase):
    @staticmethod
    def rounds(*authrpc_slabs):
        """One baseline and one authrpc record a round; authrpc holds a stream block in every
        round but the last and the given number of slabs."""
        records = []
        for index, slabs in enumerate(authrpc_slabs):
            records.append({"impl": "baseline", "held_blocks_per_call": {"64": 1.2, "1008": 1.0}})
            mine = {"64": 1.2, "1008": slabs}
            if index < len(authrpc_slabs) - 1:
                mine["304"] = 1.0
            records.append({"impl": "authrpc", "held_blocks_per_call": mine})
        return records

    def test_names_the_blocks_authrpc_holds_beyond_the_baseline_largest_first(self):
        lines = report.held_blocks_table(self.rounds(2.0, 2.0, 3.0))
        rows = [line for line in lines if line.startswith("| ") and "B" in line.split("|")[1]]
        self.assertEqual(rows[0], "| 1,008–1,023 B (task-allocator slabs) | 1.00 | 2.00 | +1.00 | +1,016 |")
        self.assertEqual(rows[1], "| 304–319 B | 0.00 | 1.00 | +1.00 | +312 |")  # median: 1, 1, 0
        self.assertEqual(len(rows), 2)  # the 64-byte blocks are the same on both sides
        self.assertIn("about 1,328 B a parked call", lines[-2])

    def test_runs_that_did_not_count_blocks_write_no_table(self):
        self.assertEqual(report.held_blocks_table([{"impl": "authrpc"}, {"impl": "baseline"}]), [])


class H2loadPerCallTests(unittest.TestCase):
    def test_the_difference_of_two_runs_cancels_start_up(self):
        startup, per_call = 0.009, 3.6e-6
        short, long = startup + 1000 * per_call, startup + 200_000 * per_call
        self.assertAlmostEqual(clients.h2load_per_call(short, long, 1000, 200_000) / per_call, 1.0, places=9)
        self.assertGreater(long / 200_000 / per_call, 1.01)  # what the whole process would have said

    def test_a_long_run_no_longer_than_the_short_one_is_refused(self):
        with self.assertRaises(ValueError):
            clients.h2load_per_call(1.0, 2.0, 1000, 1000)

    def test_ccore_clients_run_the_cxx_binary_with_benchclients_command_line(self):
        runner = clients.Runner.__new__(clients.Runner)
        runner.client, runner.ccore_client, runner.ca_cert = "/bin/BenchClient", "/bin/bench_client", "ca.pem"
        server = mock.Mock(ports={"h2c": 1234})
        self.assertEqual(runner.command("load", "ccore-cq", server, "h2c", calls=5)[:4],
                         ["/bin/bench_client", "load", "--impl", "ccore-cq"])
        self.assertEqual(runner.command("load", "authrpc", server, "h2c", calls=5)[0], "/bin/BenchClient")


# A callgrind.out with compressed names, a call (whose inclusive cost is not the caller's own)
# and a second block of the same function.
CALLGRIND_OUT = textwrap.dedent("""\
    # callgrind format
    version: 1
    positions: line
    events: Ir sysCount
    summary: 1000 3

    ob=(1) /usr/lib/x86_64-linux-gnu/libnghttp2.so.14
    fl=(1) ???
    fn=(1) nghttp2_session_mem_recv
    0 100
    cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
    cfl=(2) ???
    cfn=(2) malloc
    calls=2 0
    0 500
    ob=(2)
    fl=(2)
    fn=(2)
    0 40
    fn=(3) send
    0 10 3
    ob=(3) /work/Benchmarks/.build/release/BenchClient
    fl=(3) ???
    fn=(4) $s11HTTP2Client14ConnectionLoopC3runyyF
    0 7
    fn=(5) $s7AuthRPC7ChannelC4callyyYaKF
    0 5
    fn=(1)
    ob=(1)
    fn=(1)
    +1 30
    """)


class CallgrindTests(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="callgrind-test-"), "callgrind.out")
        with open(self.path, "w") as handle:
            handle.write(CALLGRIND_OUT)

    def test_self_costs_leave_out_what_callees_cost(self):
        costs, events = callgrind.parse(self.path)
        self.assertEqual(events, ["Ir", "sysCount"])
        nghttp2 = costs[("/usr/lib/x86_64-linux-gnu/libnghttp2.so.14", "nghttp2_session_mem_recv")]
        self.assertEqual(nghttp2, [130, 0])  # 100 + 30, not the call's 500
        self.assertEqual(costs[("/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc")], [40, 0])
        self.assertEqual(costs[("/usr/lib/x86_64-linux-gnu/libc.so.6", "send")], [10, 3])

    def test_per_call_is_the_difference_of_two_runs(self):
        short = ({("a", "f"): [100, 1]}, ["Ir", "sysCount"])
        long = ({("a", "f"): [1100, 5], ("a", "g"): [200, 0]}, ["Ir", "sysCount"])
        costs, _ = callgrind.per_call(short, long, 100)
        self.assertEqual(costs[("a", "f")], [10.0, 0.04])
        self.assertEqual(costs[("a", "g")], [2.0, 0.0])

    def test_layers_by_object_and_by_swift_module(self):
        costs, events = callgrind.parse(self.path)
        layers = callgrind.group(costs, callgrind.layer_of)
        self.assertEqual(layers["nghttp2"], [130, 0])
        self.assertEqual(layers["malloc/free (glibc)"], [40, 0])
        self.assertEqual(layers["libc: syscall wrappers, memcpy, locks, other"], [10, 3])
        self.assertEqual(layers["library: connection loop (I/O thread, TLS records, sockets)"], [7, 0])
        self.assertEqual(layers["library: call path (AuthRPC: channel, call, metadata, options)"], [5, 0])
        self.assertEqual(callgrind.layer_of("libswiftCore.so", "swift_retain"), "Swift retain/release, exclusivity")
        self.assertEqual(callgrind.layer_of("libswift_Concurrency.so", "swift_task_switch"),
                         "Swift concurrency: tasks, continuations, executors")
        # valgrind writes C++ names demangled: the runtime's exclusivity set and task allocator.
        self.assertEqual(callgrind.layer_of("libswiftCore.so", "swift::runtime::AccessSet::insert(swift::runtime::Access*)"),
                         "Swift retain/release, exclusivity")
        self.assertEqual(callgrind.layer_of("libswift_Concurrency.so", "swift::StackAllocator<984ul>::alloc(unsigned long)"),
                         "Swift concurrency: tasks, continuations, executors")
        self.assertEqual(callgrind.layer_of("/x/BenchClient", "$sSTsE11allSatisfyySbSb7ElementQzKXEKF"),
                         callgrind.LAYERS[18])  # stdlib generics specialized into the binary
        # h2load, the floor: its own code and libev apart from nghttp2, and its allocator as malloc.
        self.assertEqual(callgrind.layer_of("/usr/bin/h2load", "0x0000000000020d00"), "h2load itself (its own code, libev)")
        self.assertEqual(callgrind.layer_of("/usr/lib/libev.so.4.0.0", "ev_run"), "h2load itself (its own code, libev)")
        self.assertEqual(callgrind.layer_of("/usr/lib/libjemalloc.so.2", "free"),
                         "malloc/free (jemalloc: h2load's allocator)")
        self.assertEqual(callgrind.layer_of("/usr/lib/libnghttp2.so.14", "nghttp2_session_mem_recv"), "nghttp2")
        self.assertEqual(callgrind.swift_module("$sSa6appendyyxnF"), "Swift")
        self.assertEqual(callgrind.swift_module("$s16AuthRPCTransport4LoopC"), "AuthRPCTransport")
        self.assertIsNone(callgrind.swift_module("nghttp2_submit_request"))


    def test_each_build_is_counted_from_its_own_stripped_copy(self):
        out = tempfile.mkdtemp(prefix="callgrind-prepare-")
        builds = []
        for name in ("before", "after"):
            os.makedirs(os.path.join(out, name))
            binary = os.path.join(out, name, "BenchClient")
            shutil.copy(shutil.which("true"), binary)
            builds.append(binary)
        # The newer build first: a copy named by file name alone was then "fresh" for the older.
        after, _ = callgrind.prepare(out, builds[1])
        before, _ = callgrind.prepare(out, builds[0])
        self.assertNotEqual(after, before)
        self.assertTrue(all(os.path.exists(path) for path in (after, before)))

    def test_totals_add_every_functions_instructions_and_system_calls(self):
        costs = {("a", "f"): [10.0, 0.5], ("b", "g"): [2.5, 1.0]}
        self.assertEqual(callgrind.totals(costs, ["Ir", "sysCount"]), (12.5, 1.5))
        instructions, syscalls = callgrind.totals(costs, ["Ir"])
        self.assertEqual(instructions, 12.5)
        self.assertNotEqual(syscalls, syscalls)  # nan: no system calls were counted


class SessionRowTests(unittest.TestCase):
    """Issue 23's AuthSession row, in instructions: at most 1.03× the static token's."""

    @staticmethod
    def figures(h2c_session, tls_session, static=(37_000.0, 52_000.0)):
        return {transport: {"authrpc": {"instructions": plain, "syscalls": 8.0},
                            "authrpc-session": {"instructions": mine, "syscalls": 8.0}}
                for transport, plain, mine in (("h2c", static[0], h2c_session), ("tls", static[1], tls_session))}

    def test_within_the_limit_nothing_is_over(self):
        over, lines = session.check(self.figures(37_470.0, 52_330.0))
        self.assertEqual(over, [])
        self.assertEqual(len(lines), 2)
        self.assertIn("37,470 against 37,000 instructions a call (+470, 1.013×; limit 1.03×): ok", lines[0])

    def test_past_the_limit_the_transport_is_named(self):
        over, lines = session.check(self.figures(37_470.0, 53_600.0))
        self.assertEqual(over, ["AuthSession vs static token, instructions, tls: 1.031× > 1.03×"])
        self.assertTrue(lines[1].endswith("OVER"), lines[1])

    def test_the_targets_table_has_a_row_per_transport(self):
        rows = [line for line in report.summary({"session": self.figures(37_470.0, 53_600.0)})
                if line.startswith("| AuthSession (cached token) vs static token, instructions")]
        self.assertEqual(len(rows), 2)
        self.assertIn("| 1.013× |", rows[0])
        self.assertTrue(rows[0].rstrip().endswith("| ≤ 1.03× (issue 23) | met |"), rows[0])
        self.assertTrue(rows[1].rstrip().endswith("| **not met** |"), rows[1])

    def test_a_run_without_the_phase_has_no_row(self):
        self.assertEqual(session.ratios({}), {})
        self.assertFalse(any("instructions per call (callgrind" in line for line in report.summary({"load": []})))


class CallgrindRecordTests(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="callgrind-record-"), "CALLGRIND.md")
        patcher = mock.patch.object(callgrind, "RECORD", self.path)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_a_label_replaces_its_own_section_and_keeps_the_others(self):
        lines = ["### heading", "", "| layer | 1 |"]
        callgrind.record("before", "authrpc, h2c, 1 in flight", lines, "first")
        callgrind.record("before", "authrpc, tls, 1 in flight", lines, "tls")
        callgrind.record("before", "authrpc, h2c, 1 in flight", ["### heading", "", "| layer | 2 |"], "second")
        sections = callgrind.read_sections()
        self.assertEqual(list(sections), ["before: authrpc, h2c, 1 in flight", "before: authrpc, tls, 1 in flight"])
        text = "\n".join(sections["before: authrpc, h2c, 1 in flight"])
        self.assertIn("second", text)
        self.assertIn("| layer | 2 |", text)
        self.assertNotIn("| layer | 1 |", text)
        with mock.patch.object(report.os.path, "join", return_value=self.path):
            included = report.callgrind_section()
        self.assertIn("### before: authrpc, tls, 1 in flight", included)

    def test_the_references_come_before_the_librarys_steps(self):
        lines = ["### heading", "", "| layer | 1 |"]
        callgrind.record("after", "authrpc, h2c, 1 in flight", lines, "after")
        callgrind.record("reference (C-core)", "ccore-cq, h2c, 1 in flight", lines, "c-core")
        callgrind.record("before", "authrpc, h2c, 1 in flight", lines, "before")
        callgrind.record("reference (nghttp2)", "h2load, h2c, 1 in flight", lines, "h2load")
        self.assertEqual(list(callgrind.read_sections()),
                         ["reference (C-core): ccore-cq, h2c, 1 in flight", "reference (nghttp2): h2load, h2c, 1 in flight",
                          "after: authrpc, h2c, 1 in flight", "before: authrpc, h2c, 1 in flight"])


class ReportWriteTests(unittest.TestCase):
    def test_a_run_replaces_its_own_sections_and_keeps_those_written_by_hand(self):
        output = os.path.join(tempfile.mkdtemp(prefix="bench-report-"), "RESULTS.md")
        with open(output, "w") as handle:
            handle.write("# Benchmark results\n\nold introduction\n\n## Small calls (100-byte payloads)\n\n"
                         "old figures\n\n## Per-call core: before/after\n\nhand table\n\n### What is left\n\n"
                         "the profile\n")
        generated = "# Benchmark results\n\nnew introduction\n\n## Small calls (100-byte payloads)\n\nnew figures\n"
        arguments = mock.Mock(output=output)
        with mock.patch.object(report, "render", return_value=generated), mock.patch("builtins.print"):
            report.write(arguments, {})
        with open(output) as handle:
            text = handle.read()
        self.assertIn("new figures", text)
        self.assertNotIn("old figures", text)
        self.assertNotIn("old introduction", text)
        self.assertIn("## Per-call core: before/after\n\nhand table\n\n### What is left\n\nthe profile\n", text)
        self.assertLess(text.index("new figures"), text.index("hand table"))


    def test_a_second_run_leaves_the_kept_sections_as_the_first_left_them(self):
        output = os.path.join(tempfile.mkdtemp(prefix="bench-report-"), "RESULTS.md")
        with open(output, "w") as handle:
            handle.write("# Benchmark results\n\n## Small calls (100-byte payloads)\n\nold\n\n"
                         "## First by hand\n\none\n\n\n\n## Second by hand\n\ntwo\n")
        generated = "# Benchmark results\n\n## Small calls (100-byte payloads)\n\nnew\n"
        arguments = mock.Mock(output=output)
        texts = []
        for _ in range(2):
            with mock.patch.object(report, "render", return_value=generated), mock.patch("builtins.print"):
                report.write(arguments, {})
            with open(output) as handle:
                texts.append(handle.read())
        self.assertEqual(texts[0], texts[1])
        self.assertIn("\n\none\n\n## Second by hand\n\ntwo\n", texts[0])
        self.assertTrue(texts[0].endswith("two\n"))


class BalancingReportTests(unittest.TestCase):
    @staticmethod
    def record(impl, calls_per_second, counted=False):
        return {"impl": impl, "server": "grpc-c++", "transport": "h2c", "concurrency": 100, "phase": "balancing",
                "calls_per_second": calls_per_second, "p50_us": 900, "p99_us": 2000, "cpu_us_per_call": 40.0,
                "context_switches_per_call": 0.5, "mallocs_per_call": 14.0, "counted": counted}

    def rows(self, spread, single):
        results = {"balancing": [self.record("authrpc", single), self.record("authrpc-rr", spread),
                                 self.record("authrpc", 0, counted=True), self.record("authrpc-rr", 0, counted=True)]}
        return [line for line in report.summary(results) + report.balancing(results) if line.startswith("|")]

    def test_round_robin_at_nine_tenths_of_pick_first_meets_the_target(self):
        target = next(line for line in self.rows(18_000, 20_000) if "round-robin over 3 servers" in line)
        self.assertIn("0.90×", target)
        self.assertIn("| met |", target)

    def test_round_robin_below_nine_tenths_does_not(self):
        target = next(line for line in self.rows(17_000, 20_000) if "round-robin over 3 servers" in line)
        self.assertIn("**not met**", target)

    def test_the_section_shows_both_policies_timed_apart_from_the_counted_runs(self):
        lines = self.rows(18_000, 20_000)
        self.assertTrue(any(line.startswith("| authrpc | pick-first | 1 | 20000 |") for line in lines), lines)
        self.assertTrue(any(line.startswith("| authrpc | round-robin | 3 | 18000 |") for line in lines), lines)
        self.assertFalse(any("C-core CQ" in line for line in lines), lines)

    def test_ccores_client_has_a_row_for_each_policy_beside_authrpcs(self):
        records = [self.record(label, rate, counted) for label, rate in
                   (("authrpc", 20_000), ("authrpc-rr", 18_000), ("ccore-cq", 15_000), ("ccore-cq-rr", 12_000))
                   for counted in (False, True)]
        lines = report.balancing({"balancing": records})
        self.assertIn("| C-core CQ (C++ 1.51) | pick-first | 1 | 15000 |", "\n".join(lines))
        self.assertIn("| C-core CQ (C++ 1.51) | round-robin | 3 | 12000 |", "\n".join(lines))


class XDSRowTests(unittest.TestCase):
    """Issue 26's row: a call on an xds:/// channel against the same call on a round-robin one."""

    @staticmethod
    def records(rr_cpu, xds_cpu, rr_mallocs=9.0, xds_mallocs=9.5, concurrency=100):
        """Timed runs, round by round (in the phase's order), then one counted run of each."""
        timed = []
        for round_number, (plain, mine) in enumerate(zip(rr_cpu, xds_cpu)):
            cpu = {xds.ROUND_ROBIN: plain, xds.XDS: mine}
            timed += [{"impl": label, "concurrency": concurrency, "calls": 1000, "cpu_us_per_call": cpu[label]}
                      for label in xds.round_order(round_number)]
        counted = [{"impl": label, "concurrency": concurrency, "calls": 1000, "counted": True, "cpu_us_per_call": 99.0,
                    "mallocs_per_call": value} for label, value in ((xds.ROUND_ROBIN, rr_mallocs), (xds.XDS, xds_mallocs))]
        return timed + counted

    def test_the_order_swaps_every_other_round(self):
        self.assertEqual([xds.round_order(n) for n in range(3)],
                         [(xds.ROUND_ROBIN, xds.XDS), (xds.XDS, xds.ROUND_ROBIN), (xds.ROUND_ROBIN, xds.XDS)])

    def test_the_ratio_is_the_median_of_per_round_ratios_and_counted_runs_are_only_mallocs(self):
        row = xds.rows(self.records([10, 20, 10], [11, 20, 10.2], xds_mallocs=10.25))[100]
        self.assertEqual((row["cpu_rr"], row["cpu_xds"], row["rounds"], row["calls"]), (10, 11, 3, 1000))
        self.assertAlmostEqual(row["ratio"], 1.02)  # of 1.10, 1.00, 1.02; not 11 / 10
        self.assertAlmostEqual(row["ratio_mean"], (1.10 * 1.00 * 1.02) ** (1 / 3))
        self.assertAlmostEqual(row["mallocs_extra"], 1.25)

    def test_the_lower_bound_is_the_geometric_mean_less_t_standard_errors(self):
        # Logs ±0.1 around 0: mean 0, standard deviation 0.1 × √2, standard error 0.1; t(1 degree) = 6.314.
        mean, lower = xds.cpu_bounds([math.exp(0.1), math.exp(-0.1)])
        self.assertAlmostEqual(mean, 1.0)
        self.assertAlmostEqual(lower, math.exp(-6.314 * 0.1))
        self.assertEqual(xds.cpu_bounds([1.2])[1], None)
        self.assertEqual((xds.t_95(4), xds.t_95(11), xds.t_95(100)), (2.132, 1.812, 1.645))

    def test_rounds_missing_for_one_channel_are_refused(self):
        records = self.records([10, 10], [10, 10])
        records.remove(next(r for r in records if r["impl"] == xds.XDS and not r.get("counted")))
        with self.assertRaises(ValueError):
            xds.rows(records)

    def test_within_the_standard_passes(self):
        over, lines = xds.check(xds.rows(self.records([10, 10, 10], [10.4, 10.5, 10.3], xds_mallocs=10.0)))
        self.assertEqual(over, [])
        self.assertIn("CPU 1.040× (geometric mean of 3 rounds, lower 95 % bound 1.023×; allowed 1.05×): ok", lines[0])
        self.assertIn("mallocs +1.00/call (allowed +1): ok", lines[0])

    def test_more_than_one_malloc_more_fails(self):
        over, _ = xds.check(xds.rows(self.records([10, 10, 10], [10, 10, 10], xds_mallocs=10.01)))
        self.assertEqual(len(over), 1)
        self.assertIn("mallocs +1.01/call (allowed +1): OVER", over[0])

    def test_a_cpu_ratio_over_the_standard_beyond_the_noise_fails(self):
        # Ratios 1.09, 1.10, 1.11: the rounds agree, the lower bound (1.083) is above 1.05.
        over, _ = xds.check(xds.rows(self.records([100, 100, 100], [109, 110, 111])))
        self.assertEqual(len(over), 1)
        self.assertIn("CPU 1.100× (geometric mean of 3 rounds, lower 95 % bound 1.083×; allowed 1.05×): OVER", over[0])

    def test_a_cpu_ratio_over_the_standard_within_the_noise_passes_and_says_so(self):
        # Ratios 1.00, 1.07, 1.12: the mean is over 1.05, the lower bound is not.
        over, lines = xds.check(xds.rows(self.records([100, 100, 100], [100, 107, 112])))
        self.assertEqual(over, [])
        self.assertIn("above the allowance, but not beyond the rounds' noise", lines[0])

    def test_one_round_does_not_check_cpu_and_still_checks_mallocs(self):
        over, lines = xds.check(xds.rows(self.records([100], [150], xds_mallocs=11.0)))
        self.assertIn("not checked (one round measures no noise)", lines[0])
        self.assertIn("mallocs +2.00/call (allowed +1): OVER", over[0])

    def test_a_row_without_counted_mallocs_fails(self):
        records = [r for r in self.records([10], [10]) if not r.get("counted")]
        over, _ = xds.check(xds.rows(records))
        self.assertEqual(len(over), 1)

    def test_the_control_plane_is_told_one_round_robin_cluster_of_the_servers_and_the_bootstrap_names_it(self):
        command = xds.cluster_command([5001, 5002, 5003])
        self.assertEqual(command["op"], "basic")
        self.assertEqual(command["listener"], "bench")
        self.assertEqual(command["backends"], [["127.0.0.1", "5001"], ["127.0.0.1", "5002"], ["127.0.0.1", "5003"]])
        self.assertEqual(xds.TARGET, "xds:///bench")
        document = json.loads(xds.bootstrap(6000))
        self.assertEqual(document["xds_servers"][0]["server_uri"], "127.0.0.1:6000")
        self.assertEqual(document["xds_servers"][0]["channel_creds"], [{"type": "insecure"}])

    def test_the_command_is_one_the_control_plane_applies(self):
        sys.path.insert(0, os.path.dirname(xds.CONTROL_PLANE))
        try:
            import xds_control_plane
        except ImportError as error:  # grpcio and xds-protos live in the project's .venv
            self.skipTest(f"the control plane's modules are not installed here: {error}")
        finally:
            sys.path.remove(os.path.dirname(xds.CONTROL_PLANE))
        plane = xds_control_plane.ControlPlane()  # not started: the resources alone
        xds_control_plane.apply_command(plane, xds.cluster_command([5001, 5002]))
        cluster = plane._resources[xds_control_plane.CLUSTER]["bench-cluster"]
        self.assertIn("bench", plane._resources[xds_control_plane.LISTENER])
        self.assertIn("bench-eds", plane._resources[xds_control_plane.ENDPOINTS])
        self.assertTrue(cluster.type_url.endswith("envoy.config.cluster.v3.Cluster"))

    def test_the_section_and_the_targets_rows_show_both_channels(self):
        results = {"xds": self.records([10, 10, 10], [10.2, 10.3, 10.1], xds_mallocs=9.5) +
                   self.records([50, 50, 50], [60, 60, 60], xds_mallocs=11.0, concurrency=1)}
        text = "\n".join(report.xds_section(results))
        self.assertIn("| 100 | 3 | 1,000 | 10.00 | 10.20 | 1.020× (1.010–1.030) | 1.020×, 1.003× | 9.00 | 9.50 | +0.50 |",
                      text)
        targets = [line for line in report.summary(results) if "xds:///" in line]
        self.assertEqual(len(targets), 4)
        self.assertIn("**not met**", targets[0])  # 1 in flight: 1.20×
        self.assertIn("**not met**", targets[1])  # 1 in flight: +2.00 mallocs
        self.assertIn("| met |", targets[2])
        self.assertIn("| met |", targets[3])


class MillionReportTests(unittest.TestCase):
    @staticmethod
    def run_of(cpu, rss_growth):
        samples = [{"calls": calls, "seconds": calls / 1000, "rss_bytes": 10 << 20, "fds": 8, "heap_live_bytes": 1 << 20}
                   for calls in (0, 10000, 20000)]
        samples[-1]["rss_bytes"] += rss_growth
        return {"calls": 20000, "seconds": 20.0, "calls_per_second": 1000.0, "cpu_us_per_call": cpu, "samples": samples}

    def test_ccores_run_is_reported_beside_authrpcs_with_its_growth_and_the_cpu_ratio(self):
        run = {**self.run_of(30.0, 0), "ccore": self.run_of(40.0, 2048)}
        text = "\n".join(report.million({"million": run}))
        self.assertIn("C-core's completion-queue client (C++ 1.51), the same 20,000 calls", text)
        self.assertIn("(authrpc: 0.75× its CPU)", text)
        self.assertIn("RSS +2 KiB", text)


if __name__ == "__main__":
    unittest.main()
