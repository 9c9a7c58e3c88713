"""The seed reports reproduced (docs/seed-games.md; ``boopexp seed-games``).

``analysis`` (the Pentago-Swap and Colosseum Survival reports' rows, their numbers, and each row
counted and tested on its store) and ``report`` (rows.csv and seed-games-tables.md written).
"""
