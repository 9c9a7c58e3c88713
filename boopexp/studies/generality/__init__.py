"""The generality study (docs/generality-plan.md; ``boopexp generality``).

``analysis`` (the sixteen stores → pairs → every claim per game and across games, G2's slope, the
families, the ladders, the first-mover advantage) and ``report`` (the tables, figures and files).
"""
