# Two entry points: `make demo` and `make test`. Both create .venv on first use.
# The packages are installed at the exact versions of constraints.txt (docs/install.md); `make lock` refreshes it.
# The packages are installed by uv (from PyPI, into .venv; pip installs uv first): it fetches and
# unpacks them in parallel, in half pip's time (18.5–23 s against 46 s, measured side by side).
# uv does not byte-compile; compileall does it on every core, leaving out the packages' own test suites (a quarter
# of the modules, never imported here). Not left to the first imports: with
# PYTHONDONTWRITEBYTECODE set, every process would compile its imports again.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK_VENV := .lock-venv
EXTRAS := test,fast
UV_VERSION := 0.13.9

.PHONY: demo test install compile perf lock clean

$(STAMP): pyproject.toml constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip uv==$(UV_VERSION)
	@echo "Installing atlas-bench and $$(grep -c '==' constraints.txt) packages at the versions of constraints.txt" \
	      "(under a minute on a fresh machine; uv lists them when done)"
	$(BIN)/uv pip install --python $(BIN)/python -c constraints.txt -e '.[$(EXTRAS)]'
	@echo "Byte-compiling the installed packages on every core"
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib || true  # as pip, a module that does not compile is skipped
	$(MAKE) --no-print-directory compile
	touch $(STAMP)

# Compile the cluster simulator's loop of every built-in cluster policy into numba's cache (on 2
# processes; `make install` does it once), so that the first `make demo` / `make test` load them
# instead of compiling them; prints the time each took
compile:
	$(BIN)/python -m schedulers.cluster.warmup

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/benchmark demo

# the suite on TEST_WORKERS processes (pytest-xdist; 1: one process, as `python -m pytest -q`), each test
# file's tests on one of them, so that a file's shared (module) fixtures are built once, not once per process.
# Bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set: otherwise each worker rewrites
# the ~270 test modules' asserts again (about 3.5 s of a core each) and each command a test starts
# compiles the checkout's modules again.
TEST_WORKERS ?= 2
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

perf: $(STAMP)
	$(BIN)/benchmark perf

# Re-resolve every dependency at its newest version allowed by pyproject.toml in a throwaway venv
# and pin what got installed; the header comment of constraints.txt is kept.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/pip install -e '.[$(EXTRAS)]'
	{ grep '^#' constraints.txt; $(LOCK_VENV)/bin/pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(LOCK_VENV)
	@echo "constraints.txt rewritten: review 'git diff constraints.txt', run 'make test', regenerate the figures"

clean:
	rm -rf $(VENV) results .pytest_cache
