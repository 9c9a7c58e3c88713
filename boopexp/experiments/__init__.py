"""Many games: ``config`` (YAML → plan), ``tournament`` and ``sweep`` (pairings and grid points),
``sprt`` (the sequential test), ``elo`` (the logistic Elo scale it, the ratings and their
bootstrap share), ``store`` (a results folder's files), ``tally`` (its games counted
against the plan), ``runner`` (the pool that plays a plan into a store) and ``status`` (what a
folder holds against its plan).
"""
