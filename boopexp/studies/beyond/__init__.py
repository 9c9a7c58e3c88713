"""Beyond the paper (docs/beyond.md; written by the script studies/beyond.py, not a command).

``rows``: one agent against another per budget, a gauntlet's rows, the checks' cost, read
straight from the committed stores.
"""
