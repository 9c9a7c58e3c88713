"""``python -m boopexp`` = the ``boopexp`` command."""

from boopexp.cli import main

main()
