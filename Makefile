# Two entry points a new user needs: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.cclab-installed
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: install demo test test-rust test-python fuzz bench bench-sweeps crash-test validate validate-ns2 validate-smooth testbed settling clean

# The stamp takes the time the build started (a file saved during the build is newer
# than it, so the next `make install` builds again).
$(STAMP): $(SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	touch $@.started
	$(PY) -m pip install --quiet --upgrade pip "maturin>=1.7,<2"
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras test
	mv $@.started $@

install: $(STAMP)

# The main job: the reference scenario of the background-transfer paper (section IV-A).
demo: $(STAMP)
	$(VENV)/bin/cclab run scenarios/background/single-link.toml --out results/single-link

# The cargo tests build and run beside the install (whose fat-LTO link keeps one core
# busy for most of a minute), each in its own target folder so that neither waits on
# the other's lock; pytest starts once the install is done. Output is grouped by target.
test:
	$(MAKE) --no-print-directory -j2 -Otarget test-rust test-python

test-rust:
	cargo test --profile test-opt --workspace --exclude cclab-py --target-dir target/tests

# Three workers, each taking whole test files (module fixtures are built once): on the
# 2-core CI machine the suite takes 110 s instead of 180 s in one process; the gain comes
# from tests that wait on the network (the transfer manager, the testbed), which a third
# worker overlaps with the others' computing. PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 3
test-python: $(STAMP)
	$(PY) -m pytest -q $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile)

# Property-based campaign (hypothesis, tests/test_properties.py): random valid scenarios
# conserve packets and are deterministic, random invalid ones are refused naming a key
# and never crash; 800 valid and 4,000 invalid examples with random seeds (about 5 minutes). Failures
# are kept in .hypothesis/ and replayed first next time. `make test` runs a fast subset.
fuzz: $(STAMP)
	$(PY) -m pytest -q tests/test_properties.py --hypothesis-profile=fuzz --hypothesis-show-statistics

# cclab and ns-3 side by side (installs the harness's ns-3 on first use; see docs/performance.md).
bench: $(STAMP)
	$(PY) bench/engine.py

# Sweeps and the result store: overhead per run, a 10,000-run sweep, LocalCluster
# against the local pool (15 minutes on the shared 2-core machine; docs/performance.md).
bench-sweeps: $(STAMP)
	$(PY) bench/sweeps.py

# The settling time of every packet-level entry of the background papers at its full
# length (MSER-5 on the access limit, the waiting and the active chunks of its slowest
# points, 2 seeds): the warm-ups of docs/reproduction.md rest on it (about 2 h on the
# shared 2-core machine; the runs stay in results/settling-store).
settling: $(STAMP)
	$(PY) bench/settling.py

# The long crash campaign of the result store: 200 sweeps killed with SIGKILL at random
# instants (half in-process, half `cclab sweep` with its pool), resumed, every result
# checked (docs/sweeps.md; 13 minutes on the shared 2-core machine). `make test` runs a few kills.
crash-test: $(STAMP)
	$(PY) -c 'import sys; sys.path.insert(0, "bench"); from crashtest import main; sys.exit(main())' --kills 200

# The Linux testbed (root, network namespaces, tbf; docs/testbed.md): vanilla, access
# control and FAIRBAT measured on a 10 Mbit/s tbf bottleneck with cclab bg fetch as the
# background, beside the simulator's prediction (3 x 400 s plus draining: about 25 minutes).
testbed: $(STAMP)
	$(VENV)/bin/cclab testbed run scenarios/testbed/single-link.toml --out results/testbed/single-link $(TESTBED_ARGS)

# Cross-check against ns-3 (not part of `make test`; see docs/validation.md for the time it
# takes): cclab with SACK, PRR and timestamps against ns-3's defaults (the headline), mixed
# LEDBAT / TCP-LP classes, RED against ns-3's RedQueueDisc (dropping and marking), and SACK
# off in both for contrast. Fails when a headline, mixed or RED verdict fails.
validate: $(STAMP)
	$(PY) bench/validate.py $(VALIDATE_ARGS)

# Cross-check against ns-2.35, the papers' own simulator (docs/validation.md, "against ns-2.35"):
# NewReno, Reno and Sack1 with cclab's ns2 preset, RED, Vegas, TFRC, TCP-LP, CBR and Pareto on
# identical flow lists, 5 seeds. Installs Debian's ns2 with apt-get when run as root and `ns` is
# missing. Fails when a gating verdict fails.
validate-ns2: $(STAMP)
	$(PY) bench/validate_ns2.py $(VALIDATE_NS2_ARGS)

# Ideally smooth senders at packet level against the exact 2N-packet method (lower-bounds
# paper): N = 10, 100, 1000 at U = 0.8 and 0.95, 1000 realizations each (about 80 s;
# report in results/validate-smooth/; see docs/protocols.md). The fast version is in `make test`.
validate-smooth: $(STAMP)
	$(PY) bench/validate_smooth.py

clean:
	rm -rf $(VENV) target results
