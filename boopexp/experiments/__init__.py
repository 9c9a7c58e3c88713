"""Many games: ``config`` (YAML → plan), ``tournament`` and ``sweep`` (pairings and grid points),
``sprt`` (the sequential test), ``elo`` (the logistic Elo scale it, the ratings and their
bootstrap share), ``store`` (a results folder's files),
``export`` (games out as text or CSV, and text back in), ``tally`` (its games counted against the
plan), ``summary`` (one row per sealed game, identity and outcome, in Parquet beside its segment),
``pool`` (the pool that plays games: in-process, loky or dask, and ``PoolOptions``),
``interrupts`` (Ctrl-C and SIGTERM while games are played), ``scheduler`` (a dask scheduler's
address and connection), ``sprt_rounds`` (a tested pairing's games in rounds that stop at its
decision), ``runner`` (``run_plan``: a plan played into a store) and ``status`` (what a
folder holds against its plan).
"""
