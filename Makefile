# swift-authrpc: the two set-up commands are `make demo` and `make test`.
# Both install what is missing first (apt packages when run as root, the sandbox's venv).

SHELL := /bin/bash
VENV := .venv
PYTHON := $(VENV)/bin/python
PYTHON3 ?= python3

.PHONY: demo test soak deps venv build protos bench bench-quick bench-profile bench-selftest bench-deps clean

## demo: run auth_sample against the local sandbox (sign in, call, wait for expiry, call again)
demo: deps venv
	swift build --product auth_sample
	Scripts/demo.sh

## test: the whole test suite (Swift tests against the real peers, and the peers' self-tests)
test: deps venv
	swift build --build-tests
	swift test
	$(PYTHON) -m unittest discover -s Examples/Sandbox -p 'test_*.py'
	$(PYTHON) -m unittest discover -s Tests/Peers -p 'test_*.py'

## soak: the chaos soak (100,000 calls through a proxy that cuts connections, the server killed
## and restarted midway): no call runs twice on the server, each ends within its deadline, RSS and
## descriptors stay flat
soak: deps venv
	swift build --product ChaosSoak
	$(PYTHON) Tests/Peers/chaos_soak.py --client "$$(swift build --show-bin-path)/ChaosSoak" --report .build/soak-report.json

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

## protos: regenerate Sources/*/Generated from Protos/ (the output is committed)
protos: deps
	Scripts/generate-protos.sh

## bench: the performance comparison (Benchmarks/, its own package; the first release build takes
## ~10 minutes, a run about 25 more): RESULTS.md, results.json and plots; fails past the allocation budget
bench: bench-deps venv bench-selftest
	$(VENV)/bin/python -c "import matplotlib" 2>/dev/null || $(VENV)/bin/pip install --quiet --disable-pip-version-check matplotlib || true
	$(PYTHON) Benchmarks/bench.py

## bench-quick: swift-authrpc's CPU and allocations per call only (h2c/TLS, 1 and 100 in flight,
## C++ server), checked against the allocation budget; writes nothing
bench-quick: bench-deps venv bench-selftest
	$(PYTHON) Benchmarks/bench.py --quick

## bench-profile: where swift-authrpc's CPU goes (perf, h2c, 100 in flight; see Benchmarks/README.md)
bench-profile: bench-deps venv
	$(PYTHON) Benchmarks/bench.py --profile

## bench-selftest: the measuring tools' own tests (malloc counter, h2load's request body, budget)
bench-selftest: bench-deps venv
	$(PYTHON) -m unittest discover -s Benchmarks/benchkit -t Benchmarks -p 'test_*.py'

bench-deps:
	@Scripts/install-deps.sh --bench

clean:
	rm -rf .build $(VENV)
