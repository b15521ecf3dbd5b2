# The two commands a newcomer needs are `make run` and `make test` (see README.md).
#
# PYTHON: the first of python3, python3.12, python3.11 that is 3.11 or 3.12 (the
# embedded PostgreSQL and Redis wheels cover those), else any python3 >= 3.11.
# Override with `make run PYTHON=/path/to/python3.12`.
PYTHON ?= $(shell \
	for p in python3 python3.12 python3.11; do \
		$$p -c 'import sys; sys.exit(not (3, 11) <= sys.version_info < (3, 13))' 2>/dev/null && { echo $$p; exit; }; \
	done; \
	python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run status service test test-fast lint fmt migrate shell manage backup restore clean

$(STAMP): requirements/base.txt requirements/dev.txt
	@test -n "$(PYTHON)" || { echo "Python 3.11+ is required (python3 is $$(python3 --version 2>&1))." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@touch $(STAMP)

# Web (gunicorn), worker, beat, Flower and the bot (the Procfile), plus embedded PostgreSQL and Redis when
# DATABASE_URL / REDIS_URL are not set, under supervisord: what ends is started again; logs in var/log/.
# Ctrl-C stops everything.
run: $(STAMP)
	$(PY) -m config.devstack run

# What runs, since when, and how often each process was restarted (exit 3: the stack is not running).
status: $(STAMP)
	$(PY) -m config.devstack status

# A systemd unit that runs the stack at boot under a user of its own: `make service` prints it,
# `sudo make service ARGS=--install` installs and starts it (ARGS="--install --user NAME" for another user).
service: $(STAMP)
	$(PY) -m config.devstack service $(ARGS)

# The whole pytest suite against real PostgreSQL and Redis, on every core (pytest-xdist; one process for
# one file or -x); `make test ARGS="-k claims -x"`, `make test ARGS="tests/reminders/test_pace.py"`.
test: $(STAMP)
	$(PY) -m config.devstack test $(ARGS)

# The loop of one change: the suite without the browser, worker-process, bench-sized tests and those that restart
# the shared PostgreSQL (they run alone, after the others). CI runs all.
test-fast: $(STAMP)
	$(PY) -m config.devstack test -m "not browser and not processes and not large" --tests-alone=skip $(ARGS)

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

# Any management command against the local stack: `make manage ARGS="sandbox_stats --json"`.
manage: $(STAMP)
	$(PY) -m config.devstack manage $(ARGS)

# A consistent dump of the database, the media and (in a file of its own) the secrets, into backups/:
# `make backup`, `make backup ARGS="--with-raw /mnt/disk"`. Works while `make run` runs. See docs/operations.md.
backup: $(STAMP)
	$(PY) -m config.devstack backup $(ARGS)

# Puts a backup back (stop `make run` first): `make restore ARGS="backups/stashcast-… [SECRETS_FILE]"`.
restore: $(STAMP)
	$(PY) -m config.devstack restore $(ARGS)

# Deletes the virtualenv and every local datum (database, Redis, secrets, sandbox).
clean:
	rm -rf $(VENV) var
