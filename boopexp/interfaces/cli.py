"""The click group ``main``: ``BoopGroup`` maps ``BoopError`` to one line and an exit code;
``commands/__init__.py`` registers the commands, one module per family (the rows below), and
``BoopGroup`` also turns click's usage errors into one line.

The ``boopexp`` command line: a thin click layer over the library.

Library errors (:class:`boopexp.errors.BoopError`) become one line on stderr and exit code 2
for configuration/usage errors, 1 otherwise; no traceback for a user's mistake. A Ctrl-C or
SIGTERM that no command handled is one line and 130 or 143 too (python -m boopexp:
:mod:`boopexp.__main__`), and so is a mistake click finds in the command line itself (an unknown
option or command, a value out of its range): one line and where the command's help is, exit 2.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

import click

from boopexp import __version__
from boopexp.errors import BoopError, ConfigError


class UsageLine(click.UsageError):
    """A usage mistake shown as one line (click shows a usage error as four: the usage, a hint, a
    blank line and the error)."""

    def __init__(self, exc: click.UsageError) -> None:
        super().__init__(exc.format_message(), exc.ctx)

    def show(self, file: Any = None) -> None:
        where = self.ctx.command_path if self.ctx is not None else "boopexp"
        click.echo(f"Error: {self.format_message()} (see '{where} --help')", file=file, err=True)


class BoopGroup(click.Group):
    """A click group that turns BoopError, and click's usage errors, into one clear line and a
    non-zero exit."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:  # the group's own options
            raise UsageLine(exc) from None

    def invoke(self, ctx: click.Context):  # noqa: D401 - click API
        terminated: list[int] = []
        previous = _stop_on_sigterm(terminated)
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # an unknown command, a command's options and arguments
            raise UsageLine(exc) from None
        except ConfigError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except BoopError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            # Ctrl-C (or SIGTERM) outside a command's own handling of it (run, game, play, tune:
            # what they keep, how to go on): click would print "Aborted!" and exit 1, and SIGTERM
            # killed the command without a word (import, merge, export: issue 33). Files being
            # written are cleaned up on the way out (their context managers), as for Ctrl-C.
            command = " ".join(["boopexp", *([ctx.invoked_subcommand] if ctx.invoked_subcommand else [])])
            signum = terminated[-1] if terminated else signal.SIGINT
            name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
            click.echo(f"Interrupted by {name}: {command} stopped before it finished; run it again.", err=True)
            sys.exit(128 + signum)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _stop_on_sigterm(terminated: list[int]) -> Any:
    """SIGTERM stops a command as Ctrl-C does (a KeyboardInterrupt, the signal noted in
    ``terminated``), where the command does not handle it itself; the previous handler, or None
    off the main thread (where no handler can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: Any) -> None:
        terminated.append(signum)
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)


@click.group(cls=BoopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="boopexp")
def main() -> None:
    """boopexp: reproduce Richoux's MCTS + CO agents for the board game boop."""


def _register() -> None:
    # The commands live in boopexp/interfaces/commands/, one module per family (its registry says
    # which); this is the one place they meet the group.
    from boopexp.interfaces.commands import register

    register(main)


_register()


if __name__ == "__main__":  # python -m boopexp.interfaces.cli
    main()
