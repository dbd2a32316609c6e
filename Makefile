# swift-authrpc: the two set-up commands are `make demo` and `make test`.
# Both install what is missing first (apt packages when run as root, the sandbox's venv).

SHELL := /bin/bash
VENV := .venv
PYTHON := $(VENV)/bin/python
PYTHON3 ?= python3

.PHONY: demo test deps venv build protos bench clean

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

## bench: the performance comparison (Benchmarks/, its own package; the first release build takes ~10 minutes)
bench: deps venv
	swift build -c release --package-path Benchmarks
	$(VENV)/bin/python -c "import matplotlib" 2>/dev/null || $(VENV)/bin/pip install --quiet --disable-pip-version-check matplotlib || true
	$(PYTHON) Benchmarks/bench.py

clean:
	rm -rf .build .build-protoc-plugins $(VENV)
