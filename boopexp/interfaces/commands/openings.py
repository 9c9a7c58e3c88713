"""``boopexp openings``: write a suite of start positions and say how balanced it is (docs/openings.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from boopexp.errors import ConfigError
from boopexp.games.registry import DEFAULT_GAME, GAMES
from boopexp.interfaces.commands import FiniteFloat
from boopexp.play.identity import check_seed
from boopexp.play.openings import (
    DEFAULT_BALANCE_GAMES,
    DEFAULT_BALANCE_MARGIN,
    MAX_RANDOM_PLIES,
    MAX_SUITE_POSITIONS,
    parse_balance,
    suite_text,
)


@click.command("openings")
@click.option("--game", "game_name", default=DEFAULT_GAME, show_default=True, metavar="GAME",
              help="The game whose positions the suite holds: " + ", ".join(GAMES) + ", or a module of your own "
                   "game's values (docs/games.md); a config with game: GAME plays the suite.")
@click.option("--plies", type=click.IntRange(0, MAX_RANDOM_PLIES), required=True,
              help="Random plies from the empty board per position (the random agent's moves).")
@click.option("--count", type=click.IntRange(1, MAX_SUITE_POSITIONS), required=True, help="Positions in the suite.")
@click.option("--balanced", is_flag=True,
              help="Keep only positions the reference evaluation calls even (heuristics against itself; "
                   "docs/openings.md).")
@click.option("--games", type=int, default=DEFAULT_BALANCE_GAMES, show_default=True,
              help="Reference games per position (the evaluation of --balanced and of the summary).")
@click.option("--margin", type=FiniteFloat(), default=DEFAULT_BALANCE_MARGIN, show_default=True,
              help="Even: the side to move scores within 0.5 +- margin.")
@click.option("--seed", type=str, default="0", show_default=True,
              help="The suite's seed: the same as a config's seed, whose openings {random_plies: N} "
                   "(balanced: {games, margin} with --balanced) are these positions.")
@click.option("--out", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), required=True,
              help="The suite file to write (one position a line); an existing file is not overwritten; a link is "
                   "written through; - is standard output.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def openings(game_name: str, plies: int, count: int, balanced: bool, games: int, margin: float, seed: str, out: Path,
             force: bool) -> None:
    """Write a suite of COUNT start positions of PLIES random plies of a game, deterministic from
    the seed, and print a summary of its balance (a config's ``openings: {file: OUT}`` plays it).

    Position i is the position i of a config with ``seed: SEED`` and ``openings: {random_plies:
    PLIES}`` (with ``balanced:`` under --balanced; ``game: GAME`` with --game). The summary judges
    every position again with fresh reference games (another seed than the draw's): the share
    called even, and the distribution of the side to move's score.
    """
    from boopexp import schema
    from boopexp.games import registry

    with schema.within(f"--game {game_name}"):
        game = registry.get(game_name, os.getcwd()).name  # a user's game: from PYTHONPATH, then here
    with schema.within(f"--seed {seed}"):
        try:
            value: object = int(seed)
        except ValueError:
            value = seed
        seed_value = check_seed(value)
    try:
        balance = parse_balance({"games": games, "margin": margin}, "balanced")
    except ConfigError as exc:
        field = (exc.key or "").rpartition(".")[2]
        raise exc.replace(key=field, where=f"--{field} {exc.value}") from None
    from boopexp.experiments.store import is_stream, write_atomically, writes_standard_output

    if out.exists() and not force and not is_stream(out):  # a device or a FIFO is written into, not over
        raise ConfigError(f"--out {out} exists: choose another file, or pass --force to overwrite it")
    parent = Path(os.path.realpath(out)).parent if out.is_symlink() else out.parent  # a link: its target's
    if not parent.is_dir():
        raise ConfigError(f"--out {out}: the folder {parent} does not exist")
    from boopexp.play.match import play_game
    from boopexp.play.starts import balance_score, draw_opening, suite_summary, summary_seed

    positions = [draw_opening(seed_value, plies, i, balance if balanced else None, play_game, game)
                 for i in range(count)]
    scores = [balance_score(p, balance.games, summary_seed(seed_value, i), play_game, game)
              for i, p in enumerate(positions)]
    other = game != DEFAULT_GAME  # boop.'s header as it always was
    header = {
        "boopexp openings": (f"--game {game} " if other else "")
                            + f"--plies {plies} --count {count} --seed {seed_value}"
                            + (f" --balanced --games {balance.games} --margin {balance.margin:g}" if balanced else ""),
        "config": (f"game: {game}, " if other else "") + f"seed: {seed_value}, openings: {{random_plies: {plies}"
                  + (f", balanced: {{games: {balance.games}, margin: {balance.margin:g}}}" if balanced else "") + "}",
    }
    try:
        write_atomically(out, suite_text(positions, header).encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot write it: {exc.strerror or exc}") from None
    err = writes_standard_output(out)  # the suite went to standard output: what is said of it, to stderr
    click.echo(f"Wrote {count} positions of {plies} random plies" + (f" of {game}" if other else "")
               + f" to {out} (seed {seed_value}"
               + (f", balanced: {balance.games} games, margin {balance.margin:g}" if balanced else "") + ").", err=err)
    click.echo(suite_summary(positions, scores, balance, game), err=err)
