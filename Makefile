# boopexp — every target installs what it needs into .venv by itself: pyproject.toml's packages at
# the exact versions of requirements/constraints.txt (the lock the committed outputs are built with).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
LOCK    = requirements/constraints.txt
EXTRAS  = test,dask,slurm,openspiel,lint,web,docs
JOBS   ?= 2
comma  := ,

.DEFAULT_GOAL := help
.PHONY: help install lock lint docs dist test test-golden test-slurm bench run tables robustness knowledge generality seed-games reproduce openspiel clean-cache clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# pip -qq: errors only (no notices, nor warnings such as a pip.conf's); a first install takes ~30 s.
$(STAMP): pyproject.toml $(LOCK)
	@echo "Installing boopexp and its locked dependencies into $(VENV) (once, ~30 s)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -qq --disable-pip-version-check -c $(LOCK) -e '.[$(EXTRAS)]'
	@touch $(STAMP)

install: $(STAMP) ## Create/update .venv: pyproject.toml's packages at the versions of requirements/constraints.txt

# --allow-unsafe: setuptools is pinned too (the docs extra: make dist builds with the locked backend)
lock: ## Re-resolve requirements/constraints.txt to the newest versions pyproject.toml allows (docs/install.md)
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --disable-pip-version-check pip-tools
	.venv-lock/bin/pip-compile --quiet --upgrade --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links \
	  $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) -o $(LOCK) pyproject.toml
	rm -rf .venv-lock
	@echo "$(LOCK) updated: now 'make install test' (a changed output means: rebuild it and say so in the commit)"

lint: $(STAMP) ## ruff (style, imports, likely bugs) and mypy (types, imports, attributes): both must pass (pyproject.toml)
	$(BIN)/ruff check boopexp tests studies examples benchmarks docs
	$(BIN)/mypy

# The site (mkdocs.yml says what it holds and checks): nothing fetched, so it builds offline as CI
# does; open site/index.html, or serve it for its search: python -m http.server -d site
docs: $(STAMP) ## The documentation site into site/, built --strict: a broken link, anchor or reference fails
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# --no-isolation: built by the locked setuptools of .venv (the docs extra), nothing fetched
dist: $(STAMP) ## The sdist and the wheel into dist/ (python -m build; tests/test_wheel.py installs the wheel)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	rm -rf build

# The suite in TEST_JOBS pytest-xdist worker processes (0: all in one process), a test file's tests
# on one worker (--dist loadfile: a module's fixtures built once, its tests in their order), the
# files with a `slow` test first (--no-loadscope-reorder keeps tests/conftest.py's order).
TEST_JOBS ?= 2
test: $(STAMP) ## Run the whole test suite on TEST_JOBS (2) cores (golden data: env BOOP_GOLDEN, default ../shared/golden)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder --durations=30

test-golden: $(STAMP) ## Only the golden-data tests
	$(BIN)/python -m pytest -q -k golden

# The daemons (munged, slurmctld, slurmd on 127.0.0.1) are started and stopped by the tests'
# fixture (tests/slurm_helpers.py); this target only installs the packages when they are missing.
# BOOPEXP_SLURM_REQUIRED: here a missing Slurm fails the tests instead of skipping them.
SLURM_TOOLS = munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo
test-slurm: $(STAMP) ## The Slurm tests on a real one-node Slurm here (as root; installs Debian's slurm-wlm and munge if missing)
	@export PATH="$$PATH:/usr/sbin:/sbin"; missing=; \
	for tool in $(SLURM_TOOLS); do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "make test-slurm: missing$$missing; run it as root to install slurm-wlm and munge"; exit 2; fi; \
	  echo "Installing Debian's slurm-wlm and munge (missing:$$missing)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null; \
	fi
	BOOPEXP_SLURM_REQUIRED=1 $(BIN)/python -m pytest -q tests/test_slurm.py

bench: $(STAMP) ## Engine and MCTS throughput on one core (medians)
	$(BIN)/boopexp bench

run: $(STAMP) ## Small default: play configs/smoke.yaml and print its tables, then what to look at next
	$(BIN)/boopexp run configs/smoke.yaml --jobs $(JOBS)
	$(BIN)/boopexp tables results/smoke --out results/smoke/tables --brief
	@echo
	@echo "That was a smoke test (4 games a pairing: the numbers mean nothing). Next:"
	@echo "  results/smoke/tables/      these tables (.md with their notes, .csv, .tex) and figures (.png)"
	@echo "  make reproduce             the paper's Tables I and II: 1,400 games (those in results/ are kept),"
	@echo "                             then results/tables/"
	@echo "  $(BIN)/boopexp --help   every command (after '. $(BIN)/activate': boopexp --help)"
	@echo "  README.md, docs/tables.md  what the tables and tests mean; docs/runner.md: your own experiment"

tables: $(STAMP) ## Tables I and II (+ telemetry, figures) from results/ablation and results/mirror
	$(BIN)/boopexp tables results/ablation results/mirror --out results/tables

robustness: $(STAMP) ## The robustness study's claims.csv, tables and figures from results/robustness (docs/robustness.md)
	$(BIN)/boopexp robustness results/robustness

knowledge: $(STAMP) ## The knowledge study's pairings, claims, verdicts, ladder and figures from results/knowledge (docs/knowledge-plan.md)
	$(BIN)/boopexp knowledge results/knowledge

generality: $(STAMP) ## The generality study's claims per game, verdicts, ladders, gains and figures from results/generality (docs/generality-plan.md)
	$(BIN)/boopexp generality results/generality

seed-games: $(STAMP) ## The seed reports' rows (Pentago-Swap, Colosseum) beside their numbers from results/seed-games (docs/seed-games.md)
	$(BIN)/boopexp seed-games results/seed-games

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
	rm -rf $(VENV) .venv-lock .pytest_cache .hypothesis site dist build
