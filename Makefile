# Two commands: `make demo` and `make test`. Each installs what it needs.
VENV   ?= .venv
PY     := $(VENV)/bin/python
JURAT  := $(VENV)/bin/jurat
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck bench sysdeps clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Debian packages: bubblewrap for the sandbox, chromium for the report test, jq for the
# receipt-format doc's shell recipe.
# Installed only when running as root and missing; otherwise say what is missing.
sysdeps:
	@if ! command -v bwrap >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1 \
	   || ! command -v jq >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap chromium jq >/dev/null; \
	  else \
	    echo "note: install Debian's bubblewrap, chromium and jq (the tests need them)"; \
	  fi; \
	fi

demo: $(STAMP) sysdeps
	cd examples/quickstart && ../../$(VENV)/bin/python run_demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy src

# Every test, on two xdist workers per core (PYTEST_WORKERS=0 runs them in this process):
# the suite waits on subprocesses, servers and sandboxes more than it computes (one
# worker per core kept 1.2 of 2 cores busy; tests/runner + tests/signer took 328 s on 2
# workers, 271 s on 3, 214 s on 4). The 20 slowest are listed at the end.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: $(STAMP) sysdeps lint
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --durations=20

bench: $(STAMP) sysdeps
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .jurat build *.egg-info
