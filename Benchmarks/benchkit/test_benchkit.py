"""Self-tests of the measuring tools (`make bench-selftest`, also run first by `make bench` and
`make bench-quick`): the malloc counter counts exactly, h2load's request body is the message the
Swift clients send, and the allocation budget fails what it should."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

from . import budget, frames, report
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

    def test_min_response_frame_size_is_a_real_response_frame(self):
        for response_bytes in (1, 100, 4 << 20):
            response = self.messages.SimpleResponse()
            response.payload.body = bytes(response_bytes)
            self.assertEqual(frames.min_response_frame_size(response_bytes), 5 + len(response.SerializeToString()))
        self.assertEqual(frames.min_response_frame_size(0), 5)


class BudgetTests(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="bench-budget-"), "allocation-budget.json")
        patcher = mock.patch.object(budget, "PATH", self.path)
        patcher.start()
        self.addCleanup(patcher.stop)

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
        self.assertTrue(any(line.startswith("| pick-first | 1 | 20000 |") for line in lines), lines)
        self.assertTrue(any(line.startswith("| round-robin | 3 | 18000 |") for line in lines), lines)


if __name__ == "__main__":
    unittest.main()
