# Two commands on a fresh machine with nothing but Python:
#   make demo   -- create .venv, install graphclust, run the demo
#   make test   -- create .venv, install graphclust with the test extras, run the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# numba caches compiled kernels here so repeated runs skip compilation
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache

.PHONY: demo test test-fast bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test,pgmpy,image,docs,dask]'
	touch $@ $(VENV)/.core $(VENV)/.docs

$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[docs]'
	touch $@ $(VENV)/.core

$(VENV)/.bench: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test,pgmpy,image,docs,dask,bench]'
	touch $@ $(VENV)/.test $(VENV)/.core $(VENV)/.docs

demo: $(VENV)/.core
	$(BIN)/graphclust demo

test: $(VENV)/.test
	$(BIN)/python -m pytest -n 2 --dist loadfile -q

test-fast: $(VENV)/.test
	$(BIN)/python -m pytest -q -x -m "not slow"

# executes examples/*.ipynb for the gallery (tools/gallery_hook.py): full size, a few minutes;
# GRAPHCLUST_NB_SMALL=1 make docs builds it on small data
docs: $(VENV)/.docs
	$(BIN)/python -m mkdocs build --strict

bench: $(VENV)/.bench
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
