# The one test command of the README: every Rust test (unit, integration, doctests),
# then the Python package built into a local virtual environment and its test suite.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: test rust-test python python-test demo

test: rust-test python-test

rust-test:
	cargo test --workspace

# A local venv with the build and test tools, and the package built in release mode.
$(VENV)/.tools: python/requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r python/requirements-dev.txt
	touch $@

python: $(VENV)/.tools
	cd python && VIRTUAL_ENV=$(abspath $(VENV)) ../$(VENV)/bin/maturin develop --release --quiet

python-test: python
	$(PY) -m pytest -q python/tests

demo:
	cargo run --release -- dedup
