"""The robustness study (docs/robustness-plan.md, docs/robustness.md; ``boopexp robustness``).

``analysis`` (the six stores and the committed × 1 run → every claim's test, the families),
``report`` (claims.csv, the tables and the files written) and ``figures`` (the budget ladder and
the profile sensitivity).
"""
