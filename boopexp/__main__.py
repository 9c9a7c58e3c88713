"""``python -m boopexp`` = the ``boopexp`` command."""

from boopexp.interfaces.cli import main

main()
