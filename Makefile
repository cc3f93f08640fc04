# freeblock: every target sets up what it needs on a fresh machine (a Python virtualenv in
# .venv with the package built in release mode), and stamp files keep repeated runs fast.
#
#   make demo    build, then run the quick-start demo (`freeblock demo`)
#   make test    the Rust tests, then the Python tests (with a short fuzz run of every parser and
#                the engine: crates/freeblock/tests/fuzz_regressions.rs). The Python tests use the
#                release build when `make build`/`demo` left a current one, else build the extension
#                in the dev profile, which reuses what `cargo test` compiled (no second compile of
#                the whole workspace with fat LTO)
#   make fuzz    libFuzzer, 1 M inputs per target (docs/fuzzing.md; FUZZ_TARGETS, FUZZ_RUNS)
#   make build   the virtualenv with the freeblock package (and its `freeblock` command)
#   make bench   simulator speed (`freeblock bench`)
#   make lint    cargo clippy, and ruff when it is installed
#   make clean   remove the virtualenv, build output and demo output
#
# Variables: PYTHON (a Python >= 3.11, default python3), CARGO (default cargo), VENV (default .venv).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
CARGO ?= cargo
VENV ?= .venv

VPY := $(VENV)/bin/python
STAMPS := $(VENV)/.freeblock-stamps
# Everything the extension module is built from.
RUST_INPUTS := Cargo.toml Cargo.lock pyproject.toml $(shell find crates -type f -not -path '*/target/*' 2>/dev/null)

.PHONY: help toolchain venv build demo test test-rust test-python bench lint clean fuzz

help:
	@echo "make demo    build, then run the quick-start demo"
	@echo "make test    build, then run the Rust and Python tests"
	@echo "make fuzz    1 M fuzz inputs per parser and the engine (libFuzzer)"
	@echo "make build | bench | lint | clean"

toolchain:
	@command -v $(CARGO) >/dev/null 2>&1 || { \
	  echo "error: '$(CARGO)' not found. Install the Rust toolchain (rustup, stable, Rust >= 1.81) and make sure cargo is on PATH." >&2; exit 1; }
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON)' not found. Install Python >= 3.11, or run make PYTHON=/path/to/python3.11." >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { \
	  echo "error: $(PYTHON) is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); freeblock needs >= 3.11 (run make PYTHON=python3.11)." >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "error: $(PYTHON) cannot create virtualenvs (on Debian/Ubuntu: apt-get install python3-venv)." >&2; exit 1; }

$(VPY):
	@$(MAKE) toolchain
	$(PYTHON) -m venv $(VENV)

# Runtime and dev dependencies, read from pyproject.toml, plus maturin.
$(STAMPS)/deps: pyproject.toml | $(VPY)
	@mkdir -p $(STAMPS)
	$(VPY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
	  print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"] + p["project"]["optional-dependencies"]["dev"]))' \
	  > $(STAMPS)/requirements.txt
	$(VPY) -m pip install --quiet --disable-pip-version-check -r $(STAMPS)/requirements.txt
	@touch $@

# The extension module, in release mode, installed in the virtualenv in develop (editable)
# mode: edits to python/freeblock need no rebuild; edits to crates/ do.
$(STAMPS)/build: $(STAMPS)/deps $(RUST_INPUTS)
	@$(MAKE) toolchain
	VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(VENV))/bin:$$PATH" \
	  $(VENV)/bin/maturin develop --release --quiet
	@rm -f $(STAMPS)/build-dev
	@touch $@

# The same in the dev profile (optimised, no LTO; Cargo.toml), for the Python tests: after
# `cargo test` it compiles only the extension crate. One extension is installed at a time, so
# each stamp removes the other.
$(STAMPS)/build-dev: $(STAMPS)/deps $(RUST_INPUTS)
	@$(MAKE) toolchain
	VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(VENV))/bin:$$PATH" \
	  $(VENV)/bin/maturin develop --quiet
	@rm -f $(STAMPS)/build
	@touch $@

venv: $(STAMPS)/deps

build: $(STAMPS)/build

demo: build
	$(VENV)/bin/freeblock demo

test: test-rust test-python

# Every test target, then the doc tests; examples are not built (`make lint` checks them).
# freeblock-py is in the set for its features only (it has no Rust tests; see its Cargo.toml).
test-rust: toolchain
	$(CARGO) test --workspace --tests
	$(CARGO) test --workspace --doc

# The release extension when it is current (`make demo` then `make test` rebuilds nothing),
# else the dev one.
test-python: $(STAMPS)/deps
	@if $(MAKE) -q $(STAMPS)/build; then echo "make test: the release build of the extension is current: testing it"; \
	 else $(MAKE) $(STAMPS)/build-dev; fi
	$(VPY) -m pytest tests/python

bench: build
	$(VENV)/bin/freeblock bench

# Every fuzz target (or FUZZ_TARGETS), FUZZ_RUNS inputs each; summary in fuzz/logs/summary.md.
FUZZ_RUNS ?= 1000000
fuzz: toolchain
	RUNS=$(FUZZ_RUNS) CARGO=$(CARGO) bash fuzz/run.sh $(FUZZ_TARGETS)

lint: toolchain
	$(CARGO) clippy --workspace --all-targets
	@if [ -x $(VENV)/bin/ruff ]; then $(VENV)/bin/ruff check python tests/python; \
	 elif command -v ruff >/dev/null 2>&1; then ruff check python tests/python; \
	 else echo "ruff not installed: skipping the Python lint ($(VPY) -m pip install ruff)"; fi

clean:
	rm -rf $(VENV) target out .pytest_cache .hypothesis .ruff_cache python/freeblock/_freeblock*.so
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
