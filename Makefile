# Two commands a new user needs:  `make run`  (set up, then open callscope)
#                                 `make test` (set up, then run the tests: everything, as CI does)
# The developer's inner loop:     `make check` (the Qt-free, model-free tests: under two minutes)
# Options: NATIVE=1 builds llama.cpp for this CPU only (opt-in; the default build runs on any x86-64 with AVX2).
VENV   ?= .venv
PYTHON ?= python3
NATIVE ?= 0
BIN     = $(VENV)/bin

.PHONY: run test check setup system-deps llama llama-rebuild wheel-check bench screenshots lint desktop clean node-clients

run: setup
	$(BIN)/callscope gui

test: setup node-clients
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider

# Everything but the window, the model, llama.cpp's server, node and the slow builds; fails if a test loaded Qt.
CHECK_MARKERS = not (gui or model or llama or node or slow)
check: setup
	CALLSCOPE_CHECK_QT_FREE=1 $(BIN)/python -m pytest -q -p no:cacheprovider -m "$(CHECK_MARKERS)"

setup: system-deps llama $(VENV)/.installed

# Debian libraries Qt needs to start (installed only when missing; needs root or sudo).
system-deps:
	@bash scripts/system-deps.sh

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# llama-cpp-python, built once per machine and flag set (portable unless NATIVE=1) and cached by its
# flags under ~/.cache/callscope/wheels; swapped in when NATIVE changes. Runs before callscope's own
# install, so pip finds it satisfied and never compiles (or reuses) a build of its own.
llama: $(BIN)/python
	@NATIVE=$(NATIVE) $(PYTHON) scripts/llama_wheel.py $(BIN)/python

llama-rebuild: $(BIN)/python
	NATIVE=$(NATIVE) $(PYTHON) scripts/llama_wheel.py $(BIN)/python --rebuild

$(VENV)/.installed: pyproject.toml | llama
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

# The npm packages the tests run, each folder's committed lockfile installed with `npm ci` once into a cache folder
# ~/.cache/callscope/node/<lockfile hash> (scripts/node_clients.sh; node and npm from Debian's packages when missing):
# the real client libraries of the differential test (tests/system/test_differential.py), the opencode agent
# `serve` is tested with (tests/system/test_agent.py), and the config folder opencode would otherwise install at run time.
NODE_FOLDERS = tests/support/node tests/system/agent tests/system/agent/config
node-clients:
	@bash scripts/node_clients.sh $(NODE_FOLDERS) >/dev/null

# The built wheel in a fresh venv outside the checkout (tests/system/test_packaging.py does the same in `make test`).
wheel-check: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider tests/system/test_packaging.py

bench: setup
	$(BIN)/callscope bench all

screenshots: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python scripts/screenshots.py

lint: setup
	$(BIN)/ruff check app engine tests benchmarks scripts setup.py

# A launcher entry and icon for the desktop menu (freedesktop; per user, no root).
desktop: setup
	$(BIN)/python scripts/install_desktop.py --exec "$(abspath $(BIN))/callscope gui"

clean:
	rm -rf $(VENV) build *.egg-info
