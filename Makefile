# fairsim: `make experiment` reproduces the DRFH paper's Section VI on the real Google sample,
# `make test` runs the test suite and prints its line coverage, `make bench` the speed/memory
# benchmarks, `make lint` ruff + mypy,
# `make docs` the documentation site (build/site), `make imports` the import contracts,
# `make wheel-check` the installed-wheel smoke test; `.ci/run` runs them all.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# the shared data folder; without its traces/google-2011, `make experiment` and `make reproduce-udrf`
# download the Google sample into $FAIRSIM_DATA_DIR (default ~/.cache/fairsim) (docs/traces.md)
SHARED ?= ../shared
# seeds of `make experiment` and `make reproduce-*`: every numeric claim gets a 95 % interval over
# them, run in parallel over the cores; SEEDS=1 is a quick look without intervals
SEEDS ?= 5
# `make bench` pairs its speed points with this revision (A B A B); e.g. make bench BENCH_VS=main~3
BENCH_VS ?= HEAD~1
STAMP  := $(VENV)/.installed

.PHONY: install experiment reproduce-bonald-roberts reproduce-lmm-mms reproduce-psdsf reproduce-udrf test bench bench-scale lint imports wheel-check docs clean

# fairsim/_version.py holds the version, which the installed metadata copies
$(STAMP): pyproject.toml fairsim/_version.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

experiment: $(STAMP)
	$(VENV)/bin/fairsim -v experiment drfh-google --seeds $(SEEDS) --shared $(SHARED) --out results/drfh-google

reproduce-bonald-roberts: $(STAMP)
	$(VENV)/bin/fairsim -v experiment bonald-roberts --seeds $(SEEDS) --out results/bonald-roberts

reproduce-lmm-mms: $(STAMP)
	$(VENV)/bin/fairsim -v experiment lmm-mms --seeds $(SEEDS) --shared $(SHARED) --out results/lmm-mms

reproduce-psdsf: $(STAMP)
	$(VENV)/bin/fairsim -v experiment psdsf --seeds $(SEEDS) --out results/psdsf

reproduce-udrf: $(STAMP)
	$(VENV)/bin/fairsim -v experiment udrf --seeds $(SEEDS) --shared $(SHARED) --out results/udrf

# prints the line coverage of the whole package and fails below [tool.coverage.report] fail_under
# (pyproject.toml says what is measured)
test: $(STAMP)
	FAIRSIM_SHARED=$(SHARED) $(PY) -m pytest -q -m "not bench" --cov --cov-report=term tests

# every benchmark writes results/bench/<benchmark>.json (its target records, commit and machine);
# the last step copies those records into docs/bench/results.json and regenerates docs/bench.md's
# table from it (commit both)
bench: $(STAMP)
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_online --shared $(SHARED) --out results/bench --vs $(BENCH_VS)
	$(PY) -m benchmarks.bench_dynamic --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_alibaba --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_fairness --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_exact --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_recorded --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_convert --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_memory --shared $(SHARED) --out results/bench
	FAIRSIM_SHARED=$(SHARED) $(PY) -m benchmarks.bench_strategy --shared $(SHARED) --out results/bench
	$(PY) -m benchmarks.targets --results results/bench

# the whole path from raw files (too long for `make bench`): a raw trace of 25 million tasks over
# 29 days resampled from the Google sample, converted, then FF- and BF-DRFH on its 12,583 machines;
# each step's time and peak memory into results/bench/scale.json, then into docs/bench/results.json
# and docs/bench.md's table
bench-scale: $(STAMP)
	$(PY) -m benchmarks.bench_scale --shared $(SHARED) --out results/bench
	$(PY) -m benchmarks.targets --results results/bench

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# import-linter's contracts (pyproject.toml) and the file-cycle / facade check
imports: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(PY) .ci/import_cycles.py

# build a wheel from the committed tree, install it (not editable) into a fresh venv, run it
# from outside the repository
wheel-check: $(STAMP)
	PYTHON=$(abspath $(PY)) .ci/wheel_smoke.sh

# The documentation site (mkdocs.yml) into build/site; --strict: any warning (a docstring that is not
# numpy style, a broken link or cross-reference, a config key without a description) fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -d build/site

clean:
	rm -rf $(VENV) build dist *.egg-info
