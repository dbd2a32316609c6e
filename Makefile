# swift-authrpc: the two set-up commands are `make demo` and `make test`.
# Both install what is missing first (apt packages when run as root, the sandbox's venv).

SHELL := /bin/bash
VENV := .venv
PYTHON := $(VENV)/bin/python
PYTHON3 ?= python3

.PHONY: demo test interop test-sanitize api-check format format-check docs docs-check soak fuzz deps venv build protos bench bench-quick bench-profile bench-callgrind bench-selftest bench-deps clean

## demo: run auth_sample against the local sandbox (sign in, call, wait for expiry, call again)
demo: deps venv
	swift build --product auth_sample
	Scripts/demo.sh

## test: the whole test suite (Swift tests against the real peers, the peers' self-tests, the golden
## check of the generated sources, and Examples/GeneratedClient built through the build plugin and run)
test: deps venv
	swift build --build-tests
	Scripts/generate-protos.sh --check
	swift test
	$(PYTHON) -m unittest discover -s Examples/Sandbox -p 'test_*.py'
	$(PYTHON) -m unittest discover -s Tests/Peers -p 'test_*.py'
	$(PYTHON) -m unittest discover -s Tests/BuildPlugin -p 'test_*.py'

## interop: interop_client's every case against the sandbox's interop server (grpcio; plaintext
## and TLS with the CA the sandbox generates; the auth cases with its issuer, metadata-server emulator
## and service-account key), each also against a server that breaks the rule it checks. `make test`
## runs the same suites (InteropClient*), with everything else.
interop: deps venv
	swift build --build-tests
	swift test --skip-build --filter 'InteropClient'

## test-sanitize: the Swift suites under ThreadSanitizer and under AddressSanitizer, each in a
## build directory of its own, the two runs side by side (Scripts/test-sanitize.sh prefixes each
## line with the run's name); any report fails the run. Tests run one at a time: the sanitizers'
## slowdown on top of the whole suite at once would stretch the tests' time windows (a 3 s issuer
## outage, 20 s lock waits) past their ends. Tests/tsan-suppressions.txt says what TSan cannot
## see and why. TSan's exit pause (atexit_sleep_ms, 1 s by default, a wait for late reports from
## threads still running) is off: every auth_sample and interop_client the suites start would pay
## it. LeakSanitizer stays off: the Swift
## runtime's and Foundation's process-lifetime caches show up as leaks at exit in every
## process (the test runner and each auth_sample it starts), which would drown real reports.
test-sanitize: deps venv
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan
	swift build --build-tests --sanitize=address --scratch-path .build-asan
	Scripts/test-sanitize.sh

## api-check: the public API of every library product against the 0.1 baseline
## (swift package diagnose-api-breaking-changes); fails on a break CHANGELOG.md does not list
API_BASELINE := 2b5ce3965d2f422bc732117ce52bdcd61dd49385
api-check: deps
	Scripts/api-check.sh $(API_BASELINE)

## format-check: every hand-written Swift file as the toolchain's swift-format writes it
## (.swift-format: 4 spaces, 120 columns); generated sources are left alone
SWIFT_SOURCES = $(shell git ls-files '*.swift' | grep -v '/Generated/')
format-check:
	@swift format lint --strict --parallel $(SWIFT_SOURCES) && echo "format-check: $(words $(SWIFT_SOURCES)) files as .swift-format wants them"

## format: rewrite the hand-written Swift files in place as format-check wants them
format:
	swift format format --in-place --parallel $(SWIFT_SOURCES)

## docs-check: the DocC catalogs of AuthRPC, OAuth2 and GoogleAuth built with the toolchain's docc,
## warnings as errors (a broken link, a parameter list that does not match its function), and every
## public symbol with a documentation comment of its own and a place in its module's Topics. The
## modules are compiled with symbol graphs in .build-docs/, apart from .build (Scripts/docs.sh).
docs-check: deps
	Scripts/docs.sh --check

## docs: docs-check, then the three archives merged into .build-docs/swift-authrpc.doccarchive
## (static pages: python3 -m http.server --directory .build-docs/swift-authrpc.doccarchive)
docs: deps
	Scripts/docs.sh

## soak: the chaos soak (100,000 calls through a proxy that cuts connections, the server killed
## and restarted midway): no call runs twice on the server, each ends within its deadline, RSS and
## descriptors stay flat
soak: deps venv
	swift build --product ChaosSoak
	$(PYTHON) Tests/Peers/chaos_soak.py --client "$$(swift build --show-bin-path)/ChaosSoak" --report .build/soak-report.json

## fuzz: libFuzzer + AddressSanitizer on every parser fed by the network or disk and on the HTTP/2
## client against hostile server bytes (Fuzz/README.md). Builds in .build-fuzz; runs each target
## FUZZ_SECONDS (default 60) from the committed seeds, FUZZ_JOBS at once (FUZZ_TARGETS: a subset),
## and prints a table.
## `make test` replays the seeds and every past finding without a fuzzer build.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_TARGETS ?=
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_TARGETS="$(FUZZ_TARGETS)" Scripts/fuzz.sh

## deps: system packages (nghttp2, OpenSSL, zlib, protoc, python venv, h2load)
deps:
	@Scripts/install-deps.sh

## venv: the Python environment for the sandbox and the fault server (grpcio, Authlib, h2)
venv: $(VENV)/.installed

$(VENV)/.installed: Examples/Sandbox/requirements.txt
	$(PYTHON3) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r Examples/Sandbox/requirements.txt
	touch $@

build: deps
	swift build

## protos: regenerate Sources/*/Generated from Protos/ (the output is committed; `make test` checks it)
protos: deps
	Scripts/generate-protos.sh

## bench: the performance comparison (Benchmarks/, its own package; the first release build takes
## ~10 minutes, a run about 45 more on 2 cores): RESULTS.md, results.json and plots; fails past the allocation
## budget or when one of issue 23's target rows regresses beyond the run's noise
bench: bench-deps venv bench-selftest
	$(VENV)/bin/python -c "import matplotlib" 2>/dev/null || $(VENV)/bin/pip install --quiet --disable-pip-version-check matplotlib || true
	$(PYTHON) Benchmarks/bench.py

## bench-quick: swift-authrpc's CPU and allocations per call only (h2c/TLS, 1 and 100 in flight,
## C++ server, h2load and gRPC C-core beside it) and memory per call in flight, checked against
## the budget; writes nothing
bench-quick: bench-deps venv bench-selftest
	$(PYTHON) Benchmarks/bench.py --quick

## bench-profile: where swift-authrpc's CPU goes (perf, h2c, 100 in flight; see Benchmarks/README.md)
bench-profile: bench-deps venv
	$(PYTHON) Benchmarks/bench.py --profile

## bench-callgrind: instructions per call by layer (valgrind, 1 in flight, h2c; see Benchmarks/README.md)
bench-callgrind: bench-deps venv
	$(PYTHON) Benchmarks/bench.py --callgrind

## bench-selftest: the measuring tools' own tests (malloc counter, h2load's request body, budgets,
## regression guard, callgrind reader)
bench-selftest: bench-deps venv
	$(PYTHON) -m unittest discover -s Benchmarks/benchkit -t Benchmarks -p 'test_*.py'

bench-deps:
	@Scripts/install-deps.sh --bench

clean:
	rm -rf .build .build-tsan .build-asan .build-protoc-plugins .build-docs .build-api-baseline $(VENV)
