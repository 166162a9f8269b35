# Two entry points a new user needs: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.cclab-installed
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: install demo test test-rust test-python bench bench-sweeps crash-test validate validate-smooth clean

$(STAMP): $(SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip "maturin>=1.7,<2"
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras test
	touch $@

install: $(STAMP)

# The main job: the reference scenario of the background-transfer paper (section IV-A).
demo: $(STAMP)
	$(VENV)/bin/cclab run scenarios/background/single-link.toml --out results/single-link

test: $(STAMP) test-rust test-python

test-rust:
	cargo test --release --workspace --exclude cclab-py

test-python: $(STAMP)
	$(PY) -m pytest -q

# cclab and ns-3 side by side (installs the harness's ns-3 on first use; see docs/performance.md).
bench: $(STAMP)
	$(PY) bench/engine.py

# Sweeps and the result store: overhead per run, a 10,000-run sweep, LocalCluster
# against the local pool (15 minutes on the shared 2-core machine; docs/performance.md).
bench-sweeps: $(STAMP)
	$(PY) bench/sweeps.py

# The long crash campaign of the result store: 200 sweeps killed with SIGKILL at random
# instants (half in-process, half `cclab sweep` with its pool), resumed, every result
# checked (docs/sweeps.md; 13 minutes on the shared 2-core machine). `make test` runs a few kills.
crash-test: $(STAMP)
	$(PY) -c 'import sys; from cclab.sweeps.crashtest import main; sys.exit(main())' --kills 200

# Cross-check against ns-3 (not part of `make test`; about 8 minutes; see docs/validation.md):
# ns-3 without SACK as the issue asks (the verdict), then with its default SACK for contrast.
validate: $(STAMP)
	$(PY) bench/validate.py; status=$$?; \
	$(PY) bench/validate.py --ns3-sack --no-independent --out results/validation-sack; \
	exit $$status

# Ideally smooth senders at packet level against the exact 2N-packet method (lower-bounds
# paper): N = 10, 100, 1000 at U = 0.8 and 0.95, 1000 realizations each (about 80 s;
# report in results/validate-smooth/; see docs/protocols.md). The fast version is in `make test`.
validate-smooth: $(STAMP)
	$(PY) bench/validate_smooth.py

clean:
	rm -rf $(VENV) target results
