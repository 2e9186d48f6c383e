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

.PHONY: help run test soak lint format protos golden bench clean

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
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m grpc_tools.protoc -I protos \
		--python_out=$(GEN) --grpc_python_out=$(GEN) --mypy_out=$(GEN) $(PROTOS)
	@touch $@

protos: $(GEN_STAMP) ## generate the protobuf code into gen/ (never edited by hand)

run: $(GEN_STAMP) ## start every game service and the gateway on the embedded store
	$(PY) -m services.run

test: $(GEN_STAMP) ## run the tests
	$(PY) -m pytest -n 2 -q

soak: $(GEN_STAMP) ## the random-play tests with 1,000 games per configuration
	TABLETOP_RANDOM_GAMES=1000 $(PY) -m pytest -n 2 -q tests -k "random"

golden: $(GEN_STAMP) ## rewrite the golden playthroughs (review the diff)
	TABLETOP_UPDATE_GOLDEN=1 $(PY) -m pytest -q tests -k golden

lint: $(GEN_STAMP) ## ruff and buf lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/buf lint

format: $(STAMP) ## format the Python code
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(GEN_STAMP) ## benchmarks: print figures, write bench/results/
	$(PY) -m bench

clean: ## remove generated code, caches and the virtual environment
	rm -rf $(GEN) $(VENV) .pytest_cache .ruff_cache .hypothesis
