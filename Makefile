# The two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint fmt migrate shell stack clean

$(STAMP): requirements/base.txt requirements/dev.txt
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ is required, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	@touch $(STAMP)

run: $(STAMP)
	$(PY) -m config.devstack run

test: $(STAMP)
	$(PY) -m config.devstack test $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

migrate: $(STAMP)
	$(PY) -m config.devstack manage migrate

shell: $(STAMP)
	$(PY) -m config.devstack manage shell

clean:
	rm -rf $(VENV) var
