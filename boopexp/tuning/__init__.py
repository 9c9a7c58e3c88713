"""Parameter tuning of an MCTS agent (``boopexp tune``): the paper's "extensive parameter tuning".

* :mod:`boopexp.tuning.config` — the tune config (YAML → frozen dataclasses), no engine, no Optuna;
* :mod:`boopexp.tuning.search` — the Optuna study (seeded TPE, ask/tell, SQLite, resumable) whose
  trials are games played through the runner and its store;
* :mod:`boopexp.tuning.confirm` — the confirmation stage (fresh games against the baseline, exact
  one-sided binomial tests, Holm across candidates);
* :mod:`boopexp.tuning.outputs` — trials.csv, the figure, confirmed.yaml and the summary line;
* :mod:`boopexp.tuning.pipeline` — the three as one library call (what ``boopexp tune`` runs).
"""
