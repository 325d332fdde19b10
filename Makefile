# `make demo` and `make test` do all the set-up themselves on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The suite runs on every core, up to 4 processes (pytest-xdist); PARALLEL= runs it in one process.
PARALLEL ?= -n auto --maxprocesses=4

.PHONY: install demo lint test test-fast check-sdist notebooks clean

# uv installs the packages: the same ones `pip install -e '.[test]'` would, in a third of pip's time on a fresh
# 2-core machine (docs/benchmarks.md). Bytecode is compiled at install, as pip does, plboost's own included (an
# editable install's is not, and with PYTHONDONTWRITEBYTECODE set every process would compile it anew).
# uv does not read pip's configuration: behind a package mirror, set UV_INDEX_URL, or install with pip:
# make install UV_INSTALL='.venv/bin/pip install'. Where uv fails, pip installs the packages, and says so.
UV_INSTALL := $(BIN)/uv pip install --python $(BIN)/python --compile-bytecode

# `make demo` installs what the demo runs on (plboost and its requirements: LightGBM, XGBoost, Numba, pandas, SciPy),
# and `make test` / `make install` add the test extra (scikit-learn, Dask, Optuna, CatBoost, pytest, ...) to it.
DEMO_STAMP := $(VENV)/.installed-demo

$(DEMO_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv>=0.4'
	$(UV_INSTALL) -e . || { echo "make: uv could not install the packages (above); pip installs them"; \
		$(BIN)/pip install -e .; }
	$(BIN)/python -m compileall -q plboost
	$(BIN)/plboost warm-up
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(UV_INSTALL) -e '.[test]' || { echo "make: uv could not install the packages (above); pip installs them"; \
		$(BIN)/pip install -e '.[test]'; }
	touch $(STAMP)

install: $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/plboost demo

# ruff, configured in pyproject.toml
lint: $(STAMP)
	$(BIN)/ruff check .

# Lint first, then the suite with the docstring examples (setup.cfg), then the kernels' tests again with Numba off,
# so that coverage sees the kernels' lines too.
test: lint
	$(BIN)/python -m pytest $(PARALLEL) --cov --cov-report= --durations=25
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest $(PARALLEL) -q -m "not engine" --cov --cov-append --cov-report=term \
		-W "ignore:overflow encountered:RuntimeWarning" \
		tests/objectives tests/test_metrics.py tests/test_properties.py

# The quick loop while developing: the suite and the docstring examples without the tests that train LightGBM or
# XGBoost (marker engine) or take long otherwise (marker slow); under two minutes on 2 cores once Numba's cache is warm.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PARALLEL) -q -m "not engine and not slow"

# The sdist holds what its tests need: build it, unpack it in a temporary directory (../shared linked beside it)
# and run make test-fast there, in a virtual environment of its own (scripts/check_sdist.sh).
check-sdist: $(STAMP)
	PYTHON=$(PYTHON) scripts/check_sdist.sh $(BIN)/python

# Executes the notebooks top to bottom (full settings) into build/notebooks/, outputs and figures included; the
# copies in notebooks/ stay without outputs, as git keeps them. Needs the notebooks extra (nbconvert, ipykernel).
NOTEBOOKS_STAMP := $(VENV)/.notebooks-installed
$(NOTEBOOKS_STAMP): $(STAMP)
	$(UV_INSTALL) -e '.[notebooks]'
	touch $(NOTEBOOKS_STAMP)

notebooks: $(NOTEBOOKS_STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=3600 \
		--output-dir build/notebooks notebooks/*.ipynb

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
