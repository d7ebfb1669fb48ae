# Two entry points: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install perf clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,fast]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/benchmark demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

perf: $(STAMP)
	$(BIN)/benchmark perf

clean:
	rm -rf $(VENV) results .pytest_cache
