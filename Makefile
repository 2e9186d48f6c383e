# The entry points a person uses. Everything runs from a fresh clone: the first target
# that needs it creates .venv, installs the pinned dependencies and generates the
# protobuf code.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
GEN := gen
PROTOS := $(shell find protos -name '*.proto')
GEN_STAMP := $(GEN)/.stamp
comma := ,

.PHONY: help run test soak lint format protos golden bench clean
.PHONY: load bench-report
.PHONY: fuzz faults
.PHONY: images base-image manifests test-postgres
.PHONY: web web-check

# The image every service image builds on: python:3.11-slim, or `local` for the offline
# Debian base that scripts/base-image.sh makes (no container registry needed).
BASE_IMAGE ?= python:3.11-slim

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@# gen/ holds the generated protobuf packages (tabletop.*): put it on the path.
	echo "$(CURDIR)/$(GEN)" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tabletop-gen.pth"
	@touch $@

$(GEN_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(GEN) && mkdir -p $(GEN)
	@# tabletop.binpb: every descriptor with its comments and json names, which server
	@# reflection serves (grpcurl describe, grpcui and Postman show the documentation).
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m grpc_tools.protoc -I protos \
		--python_out=$(GEN) --grpc_python_out=$(GEN) --mypy_out=$(GEN) \
		--include_imports --include_source_info --descriptor_set_out=$(GEN)/tabletop.binpb \
		$(PROTOS)
	@touch $@

protos: $(GEN_STAMP) ## generate the protobuf code into gen/ (never edited by hand)

# The web app (web/): its npm packages from the lock file, the TypeScript client generated
# from protos/ by buf with protoc-gen-es (web/src/gen, never committed), and esbuild's
# bundle in web/dist. `make run` builds it when Node.js is there and runs without it if not.
WEB_DIR := web
WEB_MODULES := $(WEB_DIR)/node_modules/.package-lock.json
WEB_GEN := $(WEB_DIR)/src/gen/.stamp
WEB_DIST := $(WEB_DIR)/dist/index.html
WEB_SOURCES := $(shell find $(WEB_DIR)/src -path $(WEB_DIR)/src/gen -prune -o -type f -print 2>/dev/null) \
	$(WEB_DIR)/index.html $(WEB_DIR)/build.mjs $(WEB_DIR)/tsconfig.json

$(WEB_MODULES): $(WEB_DIR)/package.json $(WEB_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "make web: needs Node.js 20+ and npm (Debian: apt-get install nodejs npm)"; exit 1; }
	npm ci --prefix $(WEB_DIR) --no-audit --no-fund

$(WEB_GEN): $(PROTOS) $(WEB_DIR)/buf.gen.yaml $(WEB_MODULES) $(STAMP)
	$(VENV)/bin/buf generate --template $(WEB_DIR)/buf.gen.yaml
	@touch $@

$(WEB_DIST): $(WEB_GEN) $(WEB_SOURCES)
	cd $(WEB_DIR) && node build.mjs

web: $(WEB_DIST) ## build the web app into web/dist (Node.js 20+ and npm; make run serves it)

web-check: $(WEB_GEN) ## type-check the web app (TypeScript, strict)
	cd $(WEB_DIR) && node_modules/.bin/tsc --noEmit -p .

run: $(GEN_STAMP) ## start every game service, the gateway and the web app on the embedded store
	@if command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory web || echo "web app: its build failed (above); the games run without it"; \
	fi
	$(PY) -m services.run

# `make test` leaves out the tests and cases marked `soak` (whole games where a bounded run
# or another test covers the same in make test, repetitions); `make soak` runs them, the
# random-play tests with 1,000 games per configuration and the fuzz tests with 100
# examples each (-k matches marker names too).
test: $(GEN_STAMP) ## run the tests (all but the soak-marked ones)
	$(PY) -m pytest -n 2 -q -m "not soak" -p tests.reliability.figures --durations=40

soak: $(GEN_STAMP) ## the soak-marked tests, random play with 1,000 games per configuration, fuzzing with 100 examples per test
	TABLETOP_RANDOM_GAMES=1000 TABLETOP_FUZZ_EXAMPLES=100 $(PY) -m pytest -n 2 -q -rf tests \
		-k "random or soak or test_fuzz" -p tests.reliability.figures --timeout=3600

# How long `make fuzz` and `make faults` run, in whole seconds.
FUZZ_SECONDS ?= 600
FAULT_SECONDS ?= 600

fuzz: $(GEN_STAMP) ## fuzz every RPC of every service: the calls, then Play, FUZZ_SECONDS each (default 600)
	TABLETOP_FUZZ_SECONDS=$(FUZZ_SECONDS) $(PY) -m pytest -n 2 -q tests/reliability/test_fuzz.py \
		--timeout=$$(( $(FUZZ_SECONDS) + 600 ))
	TABLETOP_FUZZ_SECONDS=$(FUZZ_SECONDS) $(PY) -m pytest -n 2 -q tests/reliability/test_play_fuzz.py \
		--timeout=$$(( $(FUZZ_SECONDS) + 600 ))

# FAULT_MODE: single (every service on SQLite: test_faults.py), replicas (two, then three
# replicas of one service on PostgreSQL: test_replicas.py, half of FAULT_SECONDS each, on
# a private loopback server it restarts) or both.
FAULT_MODE ?= both

faults: $(GEN_STAMP) ## kill, pause and restart processes under load, FAULT_SECONDS per mode (FAULT_MODE=single|replicas|both)
ifneq ($(FAULT_MODE),replicas)
	TABLETOP_FAULT_SECONDS=$(FAULT_SECONDS) $(PY) -m pytest -q tests/reliability/test_faults.py \
		--timeout=$$(( $(FAULT_SECONDS) + 900 ))
endif
ifneq ($(FAULT_MODE),single)
	pg=$$(bash scripts/postgres.sh start) && eval "$$pg" && \
		TABLETOP_FAULT_SECONDS=$(FAULT_SECONDS) $(PY) -m pytest -q tests/reliability/test_replicas.py \
		--timeout=$$(( $(FAULT_SECONDS) + 900 ))
endif

golden: $(GEN_STAMP) ## rewrite the golden playthroughs (review the diff)
	TABLETOP_UPDATE_GOLDEN=1 $(PY) -m pytest -q tests -k golden

# `buf breaking` compares the protos with those of the last release, which clients rely
# on. RELEASE_COMMIT is that tag's commit (a clone may lack tags): change both together.
RELEASE_TAG ?= v0.1.0
RELEASE_COMMIT := a6cf048d7cede2b847f33c56387d2ab2fb9ef126

lint: $(GEN_STAMP) ## ruff, mypy, buf lint, and buf breaking against RELEASE_TAG's protos
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/buf lint
	@# The web app's TypeScript, where its packages are installed (CI installs them).
	@if [ -x $(WEB_DIR)/node_modules/.bin/tsc ]; then $(MAKE) --no-print-directory web-check; \
	else echo "lint: the web app is not type-checked: run make web first$$( \
		[ "$${CI:-}" = true ] && echo ' (CI=true: a failure)')"; [ "$${CI:-}" != true ]; fi
	@# The release's protos: its tag; else its commit; else the tag fetched from the
	@# remote (a shallow clone lacks both). Without any of them buf breaking cannot run:
	@# said plainly, and a failure under CI=true, where the check is required.
	@against=""; why="there is no remote to fetch it from"; \
	if git rev-parse -q --verify "refs/tags/$(RELEASE_TAG)^{commit}" >/dev/null 2>&1; then \
		against=".git#tag=$(RELEASE_TAG)"; \
	elif git cat-file -e "$(RELEASE_COMMIT)^{commit}" 2>/dev/null; then \
		against=".git#ref=$(RELEASE_COMMIT)"; \
	elif [ -n "$$(git remote 2>/dev/null)" ]; then \
		depth=""; \
		[ "$$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ] && depth="--depth=1"; \
		remote=$$(git remote | head -n 1); \
		echo "lint: fetching tag $(RELEASE_TAG) from $$remote for buf breaking"; \
		if git fetch -q $$depth "$$remote" "refs/tags/$(RELEASE_TAG):refs/tags/$(RELEASE_TAG)"; then \
			against=".git#tag=$(RELEASE_TAG)"; \
		else \
			why="fetching it from $$remote failed"; \
		fi; \
	fi; \
	if [ -n "$$against" ]; then \
		echo "$(VENV)/bin/buf breaking --against '$$against'"; \
		$(VENV)/bin/buf breaking --against "$$against"; \
	else \
		echo "lint: buf breaking could not run: neither tag $(RELEASE_TAG) nor commit" \
			"$(RELEASE_COMMIT) is in this clone, and $$why$$( \
			[ "$${CI:-}" = true ] && echo ' (CI=true: a failure)')"; \
		[ "$${CI:-}" != true ]; \
	fi

format: $(STAMP) ## format the Python code
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The load and bench extras are installed on demand, so `make test` stays lean.
LOAD_STAMP := $(VENV)/.installed-load
BENCH_STAMP := $(VENV)/.installed-bench

$(LOAD_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,load]'
	@touch $@

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $@

GAME ?= channeling
TARGET ?= 127.0.0.1:50051
USERS ?= 32
SPAWN_RATE ?= $(USERS)
DURATION ?= 60s

load: $(GEN_STAMP) $(LOAD_STAMP) ## Locust, headless: GAME=channeling TARGET=127.0.0.1:50051 USERS=32 DURATION=60s
	@mkdir -p bench/results
	$(VENV)/bin/locust -f bench/locustfile.py --headless --host $(TARGET) --game $(GAME) \
		-u $(USERS) -r $(SPAWN_RATE) --run-time $(DURATION) --only-summary \
		--csv bench/results/load-$(subst $(comma),-,$(GAME)) \
		--html bench/results/load-$(subst $(comma),-,$(GAME)).html

BENCH_ARGS ?=

bench: $(GEN_STAMP) $(BENCH_STAMP) ## benchmarks: print a table, write bench/results/ (BENCH_ARGS=--quick)
	$(PY) -m bench $(BENCH_ARGS)

bench-report: $(STAMP) ## rewrite the figures in BENCHMARKS.md from bench/results/latest.json
	$(PY) -m bench report

base-image: ## the offline base image: Debian bookworm with python3, from the apt mirror
	bash scripts/base-image.sh

# The web app's image takes web/dist as built here (its build reaches no npm registry):
# `make web` first, which says what to install when Node.js or npm is missing.
images: $(STAMP) $(WEB_DIST) ## one image per game service, the gateway and the web app (BASE_IMAGE=local: offline)
	$(PY) -m deploy.images --base $(BASE_IMAGE)

manifests: $(GEN_STAMP) ## rewrite deploy/k8s and deploy/observability from their sources (commit the result)
	$(PY) -m deploy.k8s.generate
	$(PY) -m deploy.observability.generate

test-postgres: $(GEN_STAMP) ## store and two-replica tests on a throwaway local PostgreSQL
	pg=$$(bash scripts/postgres.sh start) && eval "$$pg" && $(PY) -m pytest -q tests/kit

clean: ## remove generated code, caches and the virtual environment
	rm -rf $(GEN) $(VENV) .pytest_cache .ruff_cache .hypothesis
	rm -rf $(WEB_DIR)/node_modules $(WEB_DIR)/src/gen $(WEB_DIR)/dist
