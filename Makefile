# Two commands from a fresh machine: `make bench` (the main job) and `make test`.
# Everything they install goes into git-ignored caches: .venv/ and .cache/tools/.
# `make test-fast` runs the tests that need no tool, server or backend: the Python dependencies alone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
ARGS ?=

.PHONY: setup test test-fast bench lint type protos clean chromium picture mutation

# The virtualenv, reinstalled only when the dependency pins change.
$(INSTALLED): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test,lint,type,profile]'
	touch $@

# Python packages plus the pinned tools: ghz, versitygw, toxiproxy (go install), mongo-java-server (Maven).
setup: $(INSTALLED)
	$(BIN)/python -m harness tools

# Every test once: those of our own logic first (a fault there shows in minutes), then those against real servers,
# backends and a browser. Two pytest-xdist workers, a core each: the live tests wait on servers as much as they
# compute. A file's tests stay on one worker (its servers and runs are the module's); each worker hands out ports of
# its own (tests/conftest.py). Each layer prints its slowest tests and its total.
XDIST := -n 2 --dist loadfile
test: test-fast setup chromium
	$(BIN)/python -m pytest -m "live or browser" $(XDIST) --durations=15

test-fast: $(INSTALLED)
	$(BIN)/python -m pytest -m "not live and not browser" $(XDIST) --durations=15

# Debian's chromium, for the test that opens results/report.html in a real browser; as root, apt-get installs it.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		{ echo "the browser test needs chromium: apt-get install chromium"; exit 1; }

bench: setup
	$(BIN)/python -m harness run-all $(ARGS)

# The README's picture, docs/report.png: the top of results/report.html as Chromium draws it.
picture: setup chromium
	$(BIN)/python -m harness.render.browser

# Mutation testing of the modules that decide verdicts (pyproject's [tool.mutmut]), outside `make test`: mutmut
# copies the project into mutants/ (git-ignored) and docs/MUTATION.md gets the score and the survivors by function.
mutation: $(INSTALLED)
	$(BIN)/python -m pip install -q -c constraints.txt mutmut
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results --all true > mutants/results.txt
	$(BIN)/python -m tests.mutation_score mutants/results.txt docs/MUTATION.md

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

type: $(INSTALLED)
	$(BIN)/mypy

protos: setup
	$(BIN)/python -m protos.generate --go-plugins $$($(BIN)/python -c \
	  'from harness.run.tools import PROTOC_GEN_GO as a, PROTOC_GEN_GO_GRPC as b; print(a.path, b.path)')

clean:
	rm -rf $(VENV) .cache
