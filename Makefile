# `make demo` and `make test` work from nothing: they create .venv, install, then run.
VENV ?= .venv
PY := $(VENV)/bin/python
# On our machines pip takes these from local disk (capped versions); override elsewhere.
TORCH_SPEC ?= torch==2.14.1 torchvision==0.29.1
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench conformance fuzz mutate clean

# `make mutate`: mutation testing of the core modules ([tool.mutmut] in pyproject.toml), then
# docs/mutation.md lists the survivors. MUTANTS narrows the run (fnmatch patterns of mutant names,
# e.g. MUTANTS='torch_dali.functional.crop_window.*'); MUTATE_JOBS is the number of workers.
MUTANTS ?=
MUTATE_JOBS ?= 2

# Set-up prints a line before each step; pip shows its progress (torch's CUDA build is ~6 GB:
# README, "What set-up installs"; a CPU build: make test TORCH_SPEC="... --index-url .../whl/cpu").
$(STAMP): pyproject.toml
	@echo "== set-up 1/3: virtual environment $(VENV)"
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "== set-up 2/3: torch and torchvision: $(TORCH_SPEC) (the big step: README, \"What set-up installs\")"
	$(PY) -m pip install $(TORCH_SPEC)
	@echo "== set-up 3/3: torch_dali (editable) with its test tools"
	$(PY) -m pip install -e ".[test]"
	touch $(STAMP)
	@echo "== set-up done"

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/torch-dali demo

test: $(STAMP)
	$(PY) -m pytest tests

# DALI's own tests against torch_dali, real DALI (../dali-venv, or $$DALI_PYTHON) as the control when
# it is there, else the committed baseline; writes docs/conformance.md and docs/dali_coverage.md.
conformance: $(STAMP)
	$(PY) -m pip install -q -e ".[conformance]"
	$(PY) -m conformance run --command "make conformance"
	$(PY) -m conformance coverage --extract

bench: $(STAMP)
	$(PY) bench/cpu_vs_dataloader.py

# Fuzz the data entry points (tests/_fuzz.py) for FUZZ_SECONDS per target, the C helpers built with
# ASan + UBSan (FUZZ_ASAN=0: plain builds); `make test` runs a short seeded pass of the same targets.
FUZZ_SECONDS ?= 60
FUZZ_ASAN ?= 1
fuzz: $(STAMP)
	$(PY) -m tests._fuzz --seconds $(FUZZ_SECONDS) $(if $(filter 1,$(FUZZ_ASAN)),--asan)

mutate: $(STAMP)
	$(PY) -m pip install -q -e ".[mutate]"
	$(PY) -m mutmut run --max-children $(MUTATE_JOBS) $(MUTANTS) || true
	$(PY) -m tests.reference.mutation_report --scope "$(MUTANTS)" > docs/mutation.md.new
	mv docs/mutation.md.new docs/mutation.md

clean:
	rm -rf $(VENV) build *.egg-info mutants
