# One command each, on a fresh machine: `make serve` (the gateway on its embedded default) and
# `make test` (set up, then the test suite). Both create .venv on first use.
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build on disk first, so nothing pulls a multi-GB CUDA torch.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test,bench]"
	touch $@

.PHONY: setup serve test lint
setup: $(VENV)/.installed

serve: setup
	$(VENV)/bin/cachegate serve

test: setup
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check gateway agent_runtime tests bench
	$(VENV)/bin/mypy
