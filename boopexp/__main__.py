"""``python -m boopexp`` and the ``boopexp`` command (pyproject's ``[project.scripts]``): ``main``
imports the command line, a Ctrl-C or SIGTERM meanwhile being one line and 130 / 143, and runs it."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    """Import the command line and run it; Ctrl-C or SIGTERM while importing it (the first
    ~0.1-1 s: click, numpy, numba, ...) ends the command with one line, not a traceback from
    whichever module was being imported, and the exit code of the signal (130, 143). Once the
    command line is imported, the signals are back to their usual handling (each command's)."""
    stopped: list[int] = []

    def starting(signum: int, frame: object) -> None:
        stopped.append(signum)
        raise KeyboardInterrupt

    previous = {signum: signal.signal(signum, starting) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        from boopexp.interfaces.cli import main as cli

        _restore(previous)
        if stopped:  # raised inside the import system's lock callback, which ignores it (issue 33)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        _restore(previous)
        signum = stopped[-1] if stopped else signal.SIGINT
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        print(f"Interrupted by {name} while starting: nothing was done.", file=sys.stderr)
        sys.exit(128 + signum)
    cli()


def _restore(previous: dict) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


if __name__ == "__main__":
    main()
