# boopexp — every target installs what it needs from pyproject.toml into .venv by itself.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
JOBS   ?= 2

.DEFAULT_GOAL := help
.PHONY: help install test test-golden bench run tables robustness reproduce openspiel clean-cache clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask,openspiel]'
	@touch $(STAMP)

install: $(STAMP) ## Create/update the virtual environment from pyproject.toml

test: $(STAMP) ## Run the whole test suite (golden data: env BOOP_GOLDEN, default ../shared/golden)
	$(BIN)/python -m pytest -q

test-golden: $(STAMP) ## Only the golden-data tests
	$(BIN)/python -m pytest -q -k golden

bench: $(STAMP) ## Engine and MCTS throughput on one core (medians)
	$(BIN)/boopexp bench

run: $(STAMP) ## Small default: play configs/smoke.yaml and print its tables
	$(BIN)/boopexp run configs/smoke.yaml --jobs $(JOBS)
	$(BIN)/boopexp tables results/smoke --out results/smoke/tables

tables: $(STAMP) ## Tables I and II (+ telemetry, figures) from results/ablation and results/mirror
	$(BIN)/boopexp tables results/ablation results/mirror --out results/tables

robustness: $(STAMP) ## The robustness study's claims.csv, tables and figures from results/robustness (docs/robustness.md)
	$(BIN)/boopexp robustness results/robustness

reproduce: $(STAMP) ## The paper's 1,400 games (resumable), then the tables
	$(BIN)/boopexp run configs/ablation.yaml --jobs $(JOBS)
	$(BIN)/boopexp run configs/mirror.yaml --jobs $(JOBS)
	$(MAKE) tables

OS_STAGES ?= 5 10 25 50 100
openspiel: $(STAMP) ## vanilla vs OpenSpiel's MCTSBot at 40/80/320 iterations, in stages of games per side (resumable)
	for n in $(OS_STAGES); do for it in 40 80 320; do \
	  $(BIN)/boopexp run configs/openspiel-$$it.yaml --games-per-side $$n --out results/openspiel/$$it --jobs $(JOBS) -q \
	  || exit 1; done; done
	$(BIN)/boopexp status results/openspiel/40
	$(BIN)/boopexp status results/openspiel/80
	$(BIN)/boopexp status results/openspiel/320

clean-cache: ## Drop numba's compiled cache (needed after editing a kernel another kernel calls)
	find boopexp -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache ## Remove the virtual environment and caches (results are kept)
	rm -rf $(VENV) .pytest_cache .hypothesis
