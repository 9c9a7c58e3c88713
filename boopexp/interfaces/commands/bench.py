"""``boopexp bench``: engine throughput on one core (heuristic, objective, solver, random plies);
``boopexp warmup``: the engine compiled into numba's cache (docs/cluster.md "Compile once")."""

from __future__ import annotations

import json

import click

from boopexp.agents.specs import AGENT_KINDS, AGENT_NAMES
from boopexp.games.registry import DEFAULT_GAME, GAMES
from boopexp.interfaces.commands import MEASUREMENTS, POSITIVE_SECONDS


@click.command("bench")
@click.option("--game", "game_name", default=DEFAULT_GAME, show_default=True, metavar="GAME",
              help="The game measured: " + ", ".join(GAMES) + ", or a module of your own game's values "
                   "(docs/games.md): the same metrics through its kernels.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--seconds", type=POSITIVE_SECONDS, default=1.0, show_default=True,
              help="Approximate duration of each timed run.")
@click.option("--repeats", type=MEASUREMENTS, default=5, show_default=True,
              help="Timed runs per measurement; the median is reported.")
@click.option("--compare", "compare", type=click.Path(dir_okay=False), default=None, metavar="FILE.json",
              help="Also print each metric's ratio to a saved 'bench --json' run (e.g. benchmarks/baseline.json).")
def bench(game_name: str, as_json: bool, seconds: float, repeats: int, compare: str | None) -> None:
    """Measure engine throughput (medians over several runs, one core).

    Heuristic evaluations/s, objective evaluations/s (a SIM move + the heuristic), solver
    calls/s (every legal move scored + argmax), random plies/s (as in vanilla playouts), the
    MCTS iterations/s of vanilla, mcts-co, mcts-solver and mcts-prior, and alpha-beta nodes/s, on
    a fixed, seeded set of 200 positions from plies 4-40 of solver/random games. With --game,
    those of another game, through its kernels (docs/games.md "Speed").
    With --compare FILE.json, the ratio of each metric to that saved run of the same game
    (after the table; with --json, under the key "compare").
    """
    import os

    from boopexp import schema
    from boopexp.games import registry

    with schema.within(f"--game {game_name}"):
        game = registry.get(game_name, os.getcwd())  # a user's game: from PYTHONPATH, then here
    from boopexp.interfaces.bench import (  # compiles
        check_same_game,
        compare_ratios,
        format_comparison,
        format_report,
        load_report,
        run_bench,
    )

    saved = load_report(compare) if compare else None  # a bad file fails before the long run
    if saved is not None:
        check_same_game(saved, game.name, compare)

    def progress(name: str) -> None:
        if not as_json:
            click.echo(f"measuring {name} ...", err=True)

    report = run_bench(seconds=seconds, repeats=repeats, progress=progress, game=game)
    if as_json:
        if saved is not None:
            report["compare"] = {"file": compare, "ratios": compare_ratios(report, saved)}
        click.echo(json.dumps(report, sort_keys=False))
    else:
        click.echo(format_report(report))
        if saved is not None:
            click.echo("")
            click.echo(f"compared with {compare}:")
            click.echo(format_comparison(report, saved))


@click.command("warmup")
@click.option("--agents", multiple=True, metavar="AGENT[,AGENT...]",
              help="Only what the games of these agents need: built-in names (" + ", ".join(AGENT_NAMES)
                   + ") or 'plugin' (repeatable; default: every agent).")
def warmup(agents: tuple[str, ...]) -> None:
    """Compile the engine into numba's cache, once per machine (or once per cluster).

    Every kernel the games of these agents call (the search, the solver, the random move, the
    Position API of plugin agents, the rules) is compiled and stored, so that no later run
    compiles them; what the cache already holds is loaded, not compiled again, and the last line
    says which. The cache is $NUMBA_CACHE_DIR when that is set (a folder on a shared file system:
    see docs/cluster.md "Compile once"), else beside the kernels.
    """
    from boopexp.play.warmup import COMPILING, agent_kinds, agent_searches, engine_is_compiled, warm

    names = [name for value in agents for name in value.split(",")] if agents else list(AGENT_NAMES)
    kinds = agent_kinds(names) if agents else AGENT_KINDS
    if not engine_is_compiled(kinds):
        click.echo(COMPILING, err=True)
    done = warm(kinds, agent_searches(names))
    total = len(done.compiled) + len(done.loaded)
    what = f"{total} kernels for {', '.join(kinds)}"
    if done.compiled:
        click.echo(f"compiled {len(done.compiled)} of the {what} in {done.seconds:.0f} s into numba's cache "
                   f"{done.cache}")
    else:
        click.echo(f"nothing to compile: the {what} are in numba's cache {done.cache}")
