# Convenience targets; each is also a plain command in README.md or docs/.
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: example test lint bench fuzz-long ci

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

example: $(VENV)/.installed
	$(VENV)/bin/stagegate status && $(VENV)/bin/stagegate check

test: $(VENV)/.installed
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests bench stages
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(VENV)/.installed
	$(PY) bench/run.py

fuzz-long: $(VENV)/.installed
	$(PY) -m pytest -q --fuzz-long tests/example/test_fuzz.py

ci:
	bash .ci/run
