# Two commands do all the set-up on a fresh machine with Python >= 3.11 and make:
#   make demo   creates .venv, installs libra-tools, runs `libra eval bfcl`
#   make test   creates .venv, installs libra-tools with test extras, runs the test suite
# Both are idempotent: a second run only re-installs when pyproject.toml changed.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.libra-installed

.PHONY: setup appworld demo test bench bench-eval bench-invoke bench-build bench-propagation clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "libra-tools needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,plot,openai,scitooleval]'
	# bfcl-eval's declared dependencies pull GBs of CUDA torch; its data and backends need only mpmath.
	$(BIN)/pip install --quiet --no-deps 'bfcl-eval==2026.3.23' 'mpmath>=1.3,<2'
	@touch $(STAMP)

setup: $(STAMP)

# AppWorld pins pydantic<2 and old sqlmodel/fastapi, so it gets its own venv (PyPI only, ~30 s, idempotent).
appworld: setup
	$(BIN)/python -m libra.benchmarks.appworld_env setup

demo: setup
	$(BIN)/libra eval bfcl --method bm25 --method dense

test: setup appworld
	$(BIN)/python -m pytest

bench: setup bench-eval bench-invoke

bench-eval: setup
	$(BIN)/python benchmarks/bench_eval.py

bench-invoke: setup
	$(BIN)/python benchmarks/bench_invoke.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
