"""The knowledge study (docs/knowledge-plan.md, docs/knowledge.md; ``boopexp knowledge``).

``analysis`` (the six stores → pairs of games from one opening → every claim's sign test, the
families, the ladder) and ``report`` (pairings.csv, claims.csv, verdicts.csv, ladder.csv, the
figures and the files written).
"""
