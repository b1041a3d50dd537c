# Two commands a new user needs:  `make run`  (set up, then open callscope)
#                                 `make test` (set up, then run the tests)
VENV   ?= .venv
PYTHON ?= python3
BIN     = $(VENV)/bin

.PHONY: run test setup system-deps bench screenshots lint clean

run: setup
	$(BIN)/callscope gui

test: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider

setup: system-deps $(VENV)/.installed

# Debian libraries Qt needs to start (installed only when missing; needs root or sudo).
system-deps:
	@bash scripts/system-deps.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip >/dev/null
	@echo "Installing callscope (the first install compiles llama-cpp-python: about 10 minutes on 2 cores)"
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

bench: setup
	$(BIN)/callscope bench all

screenshots: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python scripts/screenshots.py

lint: setup
	$(BIN)/ruff check app engine tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
