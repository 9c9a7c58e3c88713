"""The pre-registered studies: each study's claims tested on its stores, above the generic statistics.

A study is a plan (docs/<study>-plan.md: its claims, designs, tests and families, fixed before
the games), stores written by ``boopexp run`` from configs/<study>-*.yaml, and one command that
reads them and writes its verdicts (``boopexp <study>``, the default folder results/<study>).
What every study shares lives here once:

* ``claims`` — the tests on counts (each an ``Outcome``: estimate, interval, the primary, opposite
  and negligible-effect p-values), conjunctions, Holm over a family, the verdict rules, the
  sensitivity labels;
* ``stores`` — a study's folder checked (``check_study_folder``) and each store's planned games
  read (``read_outcomes``), the planned games listed (``iter_planned``);
* ``report`` — a study's files written (``write_report``: its tables as CSVs and
  ``<study>-tables.md``, then its figures; a folder that cannot be written is one error);
* ``pairs`` and ``pairs_report`` — the paired design of a study played from an opening suite
  (pair i: game i of both orders from position i): the pairs, their counts, the claims tested on
  them, the families judged, a ladder from the complete pairs; and their tables and figures.

One folder per study, each an ``analysis`` (the stores → every claim's test, the families) and a
``report`` (the tables, figures and files): ``robustness`` (``boopexp robustness``,
docs/robustness-plan.md; its ``figures`` too), ``knowledge`` (``boopexp knowledge``,
docs/knowledge-plan.md), ``generality`` (``boopexp generality``, docs/generality-plan.md) and
``seed_games`` (``boopexp seed-games``, docs/seed-games.md: the seed reports' rows beside their
numbers). ``beyond`` holds the ``rows`` of docs/beyond.md (descriptive, no claims;
written by the script studies/beyond.py at the repository's top). docs/architecture.md ("The
studies") says what a new study adds.

The layer sits above ``tuning/`` (a study may read what the tuner confirmed; the tuner needs only
``analysis/``) and below ``interfaces/`` (the commands). Nothing here is loaded by ``boopexp
--help``: the commands import their study inside the function.
"""
