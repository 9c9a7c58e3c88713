"""``boopexp game`` (one game between two agents), ``boopexp calibrate`` (host rates), ``boopexp replay``
(a stored game walked or played again), ``boopexp play`` (a human against an agent) and ``boopexp engine``
(an agent speaking the text protocol btp on stdin/stdout, docs/protocol.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from boopexp import schema
from boopexp.agents.budget import BUDGET_MODES, DEFAULT_PROFILE, DEVICE_PROFILES, Budget
from boopexp.agents.specs import (
    AGENT_NAMES,
    ALPHABETA_PARAMETERS,
    DEFAULT_PRESET,
    MCTS_PARAMETERS,
    PRESETS,
    AgentSpec,
    resolve_agent,
)
from boopexp.errors import BoopError, ConfigError, StoreError
from boopexp.game.sides import Colour, Side
from boopexp.games import registry as games
from boopexp.games.registry import DEFAULT_GAME, GAMES
from boopexp.interfaces.commands import FOLDER, MEASUREMENTS, POSITIVE_SECONDS
from boopexp.play.contract import check_max_plies, first_mover, is_draw, mover
from boopexp.play.identity import check_seed
from boopexp.play.openings import Openings, line_forms, normalise_line

if TYPE_CHECKING:
    from boopexp.experiments.interrupts import Interrupts
    from boopexp.interfaces.play_store import PlaySettings, Saved
    from boopexp.play.session import PlaySession


def _parse_overrides(items: tuple[str, ...], option: str) -> dict:
    """``KEY=VALUE`` pairs, values read as YAML scalars (``true``, ``0.3``, ``21``)."""
    from boopexp.experiments.config import load_yaml

    out = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"{option} {item!r} must look like KEY=VALUE, e.g. uct_c=0.5")
        key, value = item.split("=", 1)
        out[key.strip()] = load_yaml(value, f"{option} {key.strip()}")
    return out


#: The end of a ``--param`` option's help: the keys an MCTS agent and alphabeta take (docs/agents.md has the tables).
_PARAM_KEYS_HELP = (f"KEY: {', '.join(MCTS_PARAMETERS)} (MCTS agents); {', '.join(ALPHABETA_PARAMETERS)} "
                    "(alphabeta) (docs/agents.md).")


def _settings_options(command):
    """The options ``game`` and ``play`` share: seed, budget and preset."""
    for option in reversed(_SETTINGS_OPTIONS):
        command = option(command)
    return command


_SETTINGS_OPTIONS = [
    click.option("--seed", type=int, default=0, show_default=True,
                 help="Experiment seed, 0..2^64-1 (the game seed derives from it and the settings)."),
    click.option("--budget", "mode", type=click.Choice(BUDGET_MODES), default="device", show_default=True,
                 help="How thinking per move is limited: device = the paper's emulated device, deterministic on any "
                      "machine; cpu = host CPU seconds x --throttle; wall = real seconds; iterations = a fixed "
                      "count (docs/budget.md)."),
    click.option("--seconds", type=float, default=1.0, show_default=True, help="Seconds per move (device/cpu/wall)."),
    click.option("--iterations", type=int, default=80, show_default=True,
                 help="Iterations per move (iterations mode)."),
    click.option("--profile", default=DEFAULT_PROFILE, show_default=True, type=click.Choice(sorted(DEVICE_PROFILES)),
                 help="device mode: the emulated device, i.e. the cost of each primitive (node, playout ply, solver "
                      "call), calibrated to the paper's ~80 vanilla playouts/s (docs/budget.md)."),
    click.option("--throttle", default="auto", show_default=True, help="cpu mode: host CPU s per emulated s, or auto."),
    click.option("--preset", default=DEFAULT_PRESET, show_default=True, type=click.Choice(sorted(PRESETS)),
                 help="code-0.6.2: the constants of the reference code, which produced the paper's tables (k = 21); "
                      "paper: those of the paper's prose (k = 20). docs/agents.md."),
]


_start_option = click.option(
    "--start", default=None, metavar="POSITION",
    help="Start from this position: a one-line position string ('....../..b.../... 7,0 7,0 r 0,0 3') or a move "
         "list from the empty board ('c3 D4 a1'); default: the empty board, or game pair 0's position of --config's "
         "openings (docs/openings.md). Part of the settings hash and of the record.")


#: ``--game`` of ``game``, ``play`` and ``engine``: None (boop., or ``--config``'s game) unless typed
_game_option = click.option(
    "--game", "game_name", default=None, metavar="GAME",
    help="The game played: " + ", ".join(GAMES) + ", or your own game's module (docs/games.md); default: boop., or "
         "--config's game. Part of the settings hash and of the record when not boop.")


@click.command("game")
@_game_option
@click.option("--game-option", "game_option", multiple=True, metavar="KEY=VALUE",
              help="Set an option of the game (repeatable), e.g. board_size=8, 'size_range=[6, 11]', "
                   "separation=union-find, paired_boards=true for colosseum (docs/games.md \"Values\"). Part of the "
                   "settings hash and of the record when set.")
@click.option("--p1", required=True, metavar="AGENT",
              help="Moves first (boop.'s Blue, Pentago-Swap's White, ...): " + ", ".join(AGENT_NAMES))
@click.option("--p2", required=True, metavar="AGENT", help="Moves second (boop.'s Red).")
@_settings_options
@click.option("--max-plies", type=int, default=None,
              help="Ply cap: a game that reaches it ends without a winner (default 1000; a config's max_plies).")
@click.option("--p1-param", multiple=True, metavar="KEY=VALUE",
              help="Override a parameter of p1 (repeatable). " + _PARAM_KEYS_HELP)
@click.option("--p2-param", multiple=True, metavar="KEY=VALUE",
              help="Override a parameter of p2 (repeatable; the keys of --p1-param).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Take agents (variants, plugins, overrides), seed, budget and preset from this experiment "
                   "config; options given explicitly still win (the game is game 0 of the pairing).")
@_start_option
@click.option("--show", is_flag=True, help="Render the board after each ply.")
@click.option("--json", "as_json", is_flag=True, help="Print the game record as JSON.")
def game(game_name, game_option, p1, p2, seed, mode, seconds, iterations, profile, throttle, preset, max_plies,
         p1_param, p2_param, config_path, start, show, as_json):
    """Play one game between two agents (p1 moves first) and print the result."""
    from boopexp.experiments.interrupts import Interrupts
    from boopexp.play.warmup import compile_engine

    played = _settings(
        [("--p1", p1, "--p1-param", _parse_overrides(p1_param, "--p1-param")),
         ("--p2", p2, "--p2-param", _parse_overrides(p2_param, "--p2-param"))],
    )
    a, b = played.agents
    task = played.settings.task(a, b, 0)
    played_game = games.get(task.game)
    opener = [Side.P1]

    def on_ply(ply, st, text, winner):
        if show:
            click.echo(f"ply {ply}: {_mover_word(played_game, opener[0], ply)} plays {text}", err=as_json)
            click.echo(played_game.board_text(st, winner if winner in (-1, 1) else 0) + "\n", err=as_json)

    plies = [-1]  # -1: the engine is compiling

    def counted(ply, st, text, winner):
        plies[0] = ply
        on_ply(ply, st, text, winner)

    def stopped() -> str:
        when = "while compiling the engine" if plies[0] < 0 else f"during ply {plies[0] + 1} of {task.pairing!r}"
        return (f"{when}: nothing is stored (game keeps no record); the same command plays the game again from its "
                "first move.")

    with _stopping(Interrupts(), stopped):
        if task.game == DEFAULT_GAME:  # another game's kernels compile in its first move (docs/games.md)
            compile_engine(_notice, (a.kind, b.kind), (a.mcts, b.mcts))  # not counted as the game's host CPU time
        plies[0] = 0
        from boopexp.play.match import play_game

        if task.start is not None:  # resolved here: a --start the rules refuse is one line, before the game
            from boopexp.play.starts import checked_start

            resolved = checked_start(task.start, play_game, game=task.game)
            assert resolved is not None  # a start resolves to a position
            task = dataclasses.replace(task, start=resolved)
            opener[0] = first_mover({"start": resolved, "game": task.game})
            if show:
                board = played_game.board_text(played_game.parse_position(resolved))
                click.echo(f"start: {resolved}\n{board}\n", err=as_json)
        record = play_game(task, on_ply=counted)
    _relay_plugin_output(record)
    if as_json:
        click.echo(json.dumps(record, indent=1))
        return
    mcts_moves = [t for t in record["telemetry"] if t["iterations"] > 0]
    if is_draw(record):
        click.echo(f"{task.pairing}: drawn after {record['plies']} plies (half a point each)")
    elif record["winner"] is None:
        click.echo(f"{task.pairing}: no winner after {record['plies']} plies: {_no_winner(record)}")
    else:
        click.echo(f"{task.pairing}: {_winner_words(played_game, record)} in {record['plies']} plies"
                   + _forfeit_note(record))
    click.echo("moves: " + " ".join(record["moves"]))
    if mcts_moves:
        its = sorted(t["iterations"] for t in mcts_moves)
        click.echo(f"MCTS iterations per move: median {its[len(its) // 2]}, min {its[0]}, max {its[-1]}")
    searched = [t for t in record["telemetry"] if t.get("search_nodes", 0) > 0]  # alphabeta's moves
    if searched:
        depths = sorted(t["search_depth"] for t in searched)
        nodes = sorted(t["search_nodes"] for t in searched)
        click.echo(f"alpha-beta depth per move: median {depths[len(depths) // 2]}, min {depths[0]}, max {depths[-1]}; "
                   f"nodes per move: median {nodes[len(nodes) // 2]}")
    click.echo(f"seed {record['seed']}, host CPU {record['host_seconds']:.2f} s")


def _game_options(name: str, base: Mapping[str, Any], items: tuple[str, ...]) -> tuple:
    """``--game-option KEY=VALUE`` items over ``base`` (a config's options), checked by game ``name``.

    Raises:
        ConfigError: ``--game-option: <key> = <value> must be <what the game allows>``.
    """
    with schema.within("--game-option"):
        return games.get(name).check_options({**base, **_parse_overrides(items, "--game-option")}, at="")


def _no_winner(record: Mapping[str, Any]) -> str:
    """Why a game without a winner stopped, as far as its moves show: the ply cap, and a position
    cycle only when a position came back."""
    from boopexp.play.replay import first_repeat

    repeat = first_repeat(record)
    cycle = f"; a position cycle (the position after ply {repeat[0]} is that after ply {repeat[1]})" if repeat else ""
    return f"stopped at the ply cap ({record['plies']}){cycle}"


def _notice(text: str) -> None:
    """A notice on stderr (stdout is the game's)."""
    click.echo(text, err=True)


def _relay_plugin_output(record: Mapping[str, Any]) -> None:
    """What plugin agents printed (kept in the record's ``plugin_output``), on stderr, each line
    marked with the agent and side that printed it: stdout is the command's own."""
    for side, text in record.get("plugin_output", {}).items():
        for line in text.splitlines():
            click.echo(f"{record[side]} ({side}): {line}", err=True)


@contextlib.contextmanager
def _stopping(stop: Interrupts, what: Callable[[], str]) -> Iterator[None]:
    """SIGINT and SIGTERM stop the block: one line (``what()``: when, what is stored, how to go
    on) and the run's exit codes, 130 for Ctrl-C and 143 for SIGTERM.

    An exception once a signal has come is the signal's doing, not a bug to show: numba, cut
    in the middle of compiling the engine, fails on the half-built kernel.
    """
    from boopexp.interfaces.commands.runs import EXIT_SIGNAL_BASE

    try:
        with stop:
            yield
    except KeyboardInterrupt:
        pass
    except Exception:
        if stop.signum is None:
            raise
    else:
        return
    signum = stop.signum or signal.SIGINT
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    click.echo(f"Interrupted by {name} {what()}", err=True)
    sys.exit(EXIT_SIGNAL_BASE + signum)


def _settings(agents: list[tuple[str, str, str, dict]]) -> PlaySettings:
    """The settings and agents of ``game`` / ``play`` / ``engine``: their options (``--seed``, the
    budget's, ``--preset``, ``--max-plies``, ``--start``) parsed through the checks of a config's
    keys, with the same messages, over ``--config``'s settings when it is given (options typed
    explicitly win).

    Args:
        agents: (option, agent name, option of its parameters, parameter overrides) of each agent.
    """
    from boopexp.interfaces.play_store import PlaySettings, agent_spec
    from boopexp.play.settings import GameSettings

    ctx = click.get_current_context()
    option = ctx.params

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)

    throttle = option["throttle"]
    if throttle != "auto":
        try:
            throttle = float(throttle)
        except ValueError:
            raise ConfigError(f"--throttle {throttle!r} must be a positive number or 'auto'") from None
    typed: dict[str, Any] = {}
    with schema.within(f"--seed {option['seed']}"):
        typed["seed"] = check_seed(option["seed"])
    with schema.within(f"--max-plies {option.get('max_plies')}"):
        typed["max_plies"] = check_max_plies(option.get("max_plies"))
    if option.get("game_name") is not None:
        with schema.within(f"--game {option['game_name']}"):
            typed["game"] = games.get(option["game_name"]).name
    budget_options = {"seconds": option["seconds"], "iterations": option["iterations"], "profile": option["profile"],
                      "throttle": throttle}
    typed_budget = {key: value for key, value in budget_options.items() if given(key)}
    typed["budget"] = _budget_from_options(option["mode"], typed_budget)
    config_path = option.get("config_path")
    if config_path is None:
        if option.get("game_option"):
            typed["game_options"] = _game_options(typed.get("game", DEFAULT_GAME), {}, option["game_option"])
        game_params = games.get(typed.get("game", DEFAULT_GAME)).paper_params()

        def from_registry(name: str, overrides: Mapping[str, Any]) -> AgentSpec:
            return resolve_agent(name, option["preset"], params=game_params, overrides=overrides)

        specs = tuple(agent_spec(from_registry, name, flag, over) for _, name, flag, over in agents)
        assert ctx.command.name is not None  # a command of the group always has its name
        settings = GameSettings(ctx.command.name, preset=option["preset"],
                                openings=_start_openings(option.get("start"), typed.get("game", DEFAULT_GAME)),
                                **typed)
        return PlaySettings(settings, specs, build=from_registry)
    from boopexp.experiments.config import load_config

    config = load_config(config_path)
    if given("preset"):
        raise ConfigError(f"--preset cannot be combined with --config (the config {config_path} sets the preset)")
    if typed.get("game", config.settings.game) != config.settings.game:  # its agents are resolved for its game
        raise ConfigError(f"--game {option['game_name']} cannot be combined with --config {config_path}, whose game is "
                          f"{config.settings.game}: leave out --game, or name a config of that game")
    if not given("mode"):  # the config's budget, with the options typed on top
        budget = config.settings.budget
        typed["budget"] = _budget_from_options(budget.mode, typed_budget, budget.to_dict())
    played = PlaySettings.of_config(config, agents)  # the agents as the config declares them
    typed = {key: value for key, value in typed.items() if key == "budget" or given(key)}
    if option.get("game_option"):  # over the config's options of the same game
        name = typed.get("game", config.settings.game)
        base = dict(config.settings.game_options) if name == config.settings.game else {}
        typed["game_options"] = _game_options(name, base, option["game_option"])
    if option.get("start") is not None:
        typed["openings"] = _start_openings(option["start"], typed.get("game", config.settings.game))
    return dataclasses.replace(played, settings=played.settings.replace(**typed))


def _budget_from_options(mode: str, typed: dict, base: dict | None = None) -> Budget:
    """The budget of ``--budget MODE`` and the budget options typed, checked as a config's
    ``budget:`` mapping: an option the mode does not use is refused, as the config key would be."""
    data = {**(base or {}), "mode": mode, **typed}
    try:
        return Budget.from_mapping(data)
    except ConfigError as exc:
        # The error's key says which option: budget.seconds is --seconds (budget.costs.… and the
        # mode are --budget's).
        field = (exc.key or "").removeprefix("budget.").split(".")[0]
        option = _BUDGET_OPTION.get(field, "--budget")
        raise exc.within(f"{option} {mode if option == '--budget' else exc.value}") from None


_BUDGET_OPTION = {"mode": "--budget", "seconds": "--seconds", "iterations": "--iterations", "profile": "--profile",
                  "throttle": "--throttle"}


@click.command("calibrate")
@click.option("--seconds", type=POSITIVE_SECONDS, default=2.0, show_default=True, help="Measuring time per agent.")
@click.option("--device", "fit_device", is_flag=True, help="Also re-fit the device profile from seeded games.")
@click.option("--games", type=MEASUREMENTS, default=8, show_default=True, help="Games per measurement with --device.")
@click.option("--lookahead", "lookahead_only", is_flag=True,
              help="Only measure r, the two-stage check's cost per step in objective evaluations.")
def calibrate(seconds, fit_device, games, lookahead_only):
    """Measure this host's MCTS rates and the cpu-mode throttle (docs/budget.md)."""
    from boopexp.agents.budget import LOOKAHEAD_RATIO
    from boopexp.play import calibrate as cal
    from boopexp.play.throttle import PAPER_VANILLA_ITERATIONS_PER_S, host_iteration_rate

    if games < 1:
        raise ConfigError(f"--games {games} must be >= 1")
    if lookahead_only:
        la = cal.measure_lookahead_ratio()
        click.echo(f"objective evaluation: {la.evaluation_ns:.1f} ns ({la.evaluations_per_call:.1f} per solver call); "
                   f"two-stage check step: {la.step_ns:.1f} ns ({la.steps_per_check:.0f} per check)")
        click.echo(f"r = {la.ratio:.3f} (the device profiles use {LOOKAHEAD_RATIO})")
        return
    van = host_iteration_rate("vanilla", seconds)
    co = host_iteration_rate("mcts-co", seconds)
    throttle = PAPER_VANILLA_ITERATIONS_PER_S / van
    click.echo(f"host vanilla iterations per CPU second: {van:,.0f}")
    click.echo(f"host mcts-co iterations per CPU second: {co:,.0f}")
    click.echo(f"cpu-mode throttle (auto): {throttle:.6f} host CPU s per emulated s "
               f"(vanilla gets {PAPER_VANILLA_ITERATIONS_PER_S:.0f} iterations per emulated second)")
    if fit_device:
        shipped = DEVICE_PROFILES[DEFAULT_PROFILE]
        v = cal.measure_primitives("vanilla", "vanilla", 80, games)
        fitted = cal.fit_device_profile(v)
        m = cal.measure_primitives("mcts-co", "heuristics", 100, games)
        click.echo(f"vanilla per move at 80 iterations: {v.plies:.1f} playout plies, {v.nodes:.1f} nodes")
        click.echo(f"fitted random_ply cost: {fitted.random_ply} device-us (shipped: {shipped.random_ply})")
        for label, prof in (("shipped", shipped), ("fitted", fitted)):
            r = cal.predicted_rate(m, prof)
            per_game = r["equivalent_moves_per_device_s"] * cal.PAPER_MCTS_CO_MOVES_PER_GAME
            cands = r["equivalent_candidates_per_device_s"] * cal.PAPER_MCTS_CO_MOVES_PER_GAME
            click.echo(
                f"{label}: mcts-co {r['iterations_per_device_s']:.1f} iterations, "
                f"{r['solver_calls_per_device_s']:.0f} solver calls, "
                f"{r['equivalent_moves_per_device_s']:.0f} equivalent moves per device-second; per game of "
                f"{cal.PAPER_MCTS_CO_MOVES_PER_GAME} moves ~{per_game:,.0f} tie events, ~{cands:,.0f} tied "
                f"candidates (paper: {cal.PAPER_EQUIVALENT_MOVES_PER_GAME:,})"
            )


__all__ = ["game", "calibrate", "replay", "play"]


def _start_openings(start: str | None, game: str = DEFAULT_GAME) -> Openings | None:
    """``--start`` as a suite of one position of ``game`` (its identity is what the settings hash covers).

    Raises:
        ConfigError: ``--start <text>: <why>; a line of a <game> suite is …`` when it is not a
            position (or boop.'s move list).
    """
    if start is None:
        return None
    try:
        line = normalise_line(start, games.get(game))
    except (BoopError, ValueError) as exc:  # ValueError: a user's game's parse_position
        raise ConfigError(f"--start {start!r}: {exc}; {line_forms(game)}") from None
    return Openings(positions=(line,), file="--start", lines=(1,))


def _mover_word(played: games.Game, first: Side, ply: int) -> str:
    """The game's name of the side that made move ``ply`` of a game whose first move was
    ``first``'s, capitalised (boop.: ``Blue`` or ``Red``; Pentago-Swap: ``White`` or ``Black``)."""
    return played.side_name(mover(first, ply).colour, capital=True)


def _winner_words(played: games.Game, record: Mapping[str, Any]) -> str:
    """``p1 (mcts-co, white) wins``: a won game's winner, its agent and the game's name of its side."""
    return f"{record['winner']} ({record['winner_agent']}, {played.side_name(record['winner_colour'])}) wins"


def _forfeit_note(record: Mapping[str, Any]) -> str:
    """`` by forfeit: greedy (p1) illegal_move: ...`` for a forfeited game, else ""."""
    forfeit = record.get("forfeit")
    if not isinstance(forfeit, dict):
        return ""
    return (f" by forfeit: {forfeit.get('agent')} ({forfeit.get('player')}) {record.get('termination')}: "
            f"{forfeit.get('error')}")


@click.command("replay")
@click.argument("results_dir", type=FOLDER)
@click.option("--pairing", required=True, help='The pairing, p1 first, e.g. "mcts-co vs vanilla" (aliases allowed).')
@click.option("--game", "game_index", type=click.IntRange(min=0), required=True, help="The game index (0-based).")
@click.option("--config-hash", default=None, help="Settings hash (or a prefix), when the folder holds several.")
@click.option("--show", is_flag=True, help="Render the board after each ply.")
@click.option("--search", is_flag=True,
              help="Also re-run both agents from the record's settings and check the same game comes out "
                   "(device and iterations budgets are exactly reproducible).")
@click.option("--root-at", "root_at", type=int, default=None, metavar="PLY",
              help="Show the root of the MCTS search that chose move PLY (1-based): each move's visits and mean "
                   "value, re-run from the record's settings (device and iterations budgets).")
def replay(results_dir, pairing, game_index, config_hash, show, search, root_at):
    """Replay a stored game: walk its moves on the board (checking every one), or re-play it."""
    from boopexp.agents.specs import ALIASES
    from boopexp.experiments.config import parse_pairing
    from boopexp.experiments.status import require_results_folder
    from boopexp.experiments.store import StoreReader, has_games_files
    from boopexp.game import notation
    from boopexp.play.identity import record_key
    from boopexp.play.replay import (
        check_root_search,
        check_searchable,
        find_game,
        first_difference,
        game_of,
        moves_problem,
        root_search,
        start_position,
        walk,
    )

    require_results_folder(results_dir)  # exit code 2, as in status and tables
    if not has_games_files(results_dir):
        raise ConfigError(f"no games.jsonl (nor sealed games-NNNN.jsonl.zst) in {str(results_dir)!r}")
    with schema.within("--pairing"):  # aliases as in configs ("mcts+SEP" is "mcts-co"); declared agents keep theirs
        pairing = parse_pairing(pairing, canonical=lambda name: ALIASES.get(name, name))
    scan = StoreReader(results_dir).records()
    record = find_game(scan.records, pairing, game_index, config_hash, where=repr(str(results_dir)))
    problem = moves_problem(record)
    if problem:  # a damaged line: say where it is, before any walk or search
        path, line = scan.origin(record_key(record)) or (scan.path, 0)
        raise StoreError(f"{path} line {line}: game {pairing!r} #{game_index} {problem}; repair or remove that line")
    if search:
        check_searchable(record)  # before the walk: a human's game is one line, at once
    if root_at is not None:
        check_root_search(record, root_at)

    opener, played = first_mover(record), game_of(record)

    def on_ply(ply, text, position):
        if show:
            click.echo(f"ply {ply}: {_mover_word(played, opener, ply)} plays {text}")
            click.echo(position.render() + "\n")

    if show and record.get("start") is not None:
        board = (notation.render(start_position(record).state) if played.name == DEFAULT_GAME
                 else played.board_text(played.parse_position(record["start"])))
        click.echo(f"start: {record['start']}\n{board}\n")
    walk(record, on_ply)
    winner = record["winner_colour"]
    if "forfeit" in record:
        outcome = f"{record['winner']} ({record['winner_agent']}) wins{_forfeit_note(record)}"
    elif is_draw(record):
        outcome = "a draw"
    else:
        outcome = ("no winner (ply limit)" if winner is None
                   else _winner_words(played, record))
    click.echo(f"{pairing} #{game_index}: {len(record['moves'])} legal moves replayed; {outcome}, as recorded.")
    if search:
        mode = record.get("budget", {}).get("mode")
        if mode in ("cpu", "wall"):
            click.echo(f"Note: a {mode}-mode game depends on the host's speed; the re-play may differ.")
        first = first_difference(record)
        if first is None:
            click.echo("Re-played from the record's settings and seed: the same game, move for move.")
        else:
            raise StoreError(f"{pairing!r} #{game_index}: the re-played game differs from the record from ply {first}")
    if root_at is not None:
        _echo_root(root_search(record, root_at))


def _echo_root(found) -> None:
    """``replay --root-at``: the root of one search (:class:`boopexp.play.replay.RootSearch`), its
    moves as the search ranked them; the moves it could not select counted, not listed."""
    shown = [c for c in found.children if c.selectable or c.visits]
    click.echo(f"ply {found.ply}: {found.side.value} ({found.agent}) played {found.move}; the root of its search, "
               f"re-run ({found.visits} visits of {len(found.children)} moves):")
    click.echo(f"  {'move':<6} {'visits':>6} {'value':>9}")
    for c in shown:
        value = "" if c.value is None else f"{c.value:+.4f}"
        note = ("  <- played" if c.move == found.chosen else "") + {1: "  (wins)", -1: "  (loses)"}.get(c.proven, "")
        click.echo(f"  {c.move:<6} {c.visits:>6} {value:>9}{note}")
    masked = len(found.children) - len(shown)
    if masked:
        click.echo(f"  ({masked} moves not selectable: left out by the Selection injection or the early border mask)")


@click.command("play")
@_game_option
@click.option("--agent", "agent_name", default="mcts-co", show_default=True, metavar="AGENT",
              help="Your opponent: " + ", ".join(AGENT_NAMES) + ", or an agent of --config.")
@click.option("--first/--second", "human_first", default=True, show_default=True,
              help="Play Blue and move first, or Red and move second.")
@_settings_options
@click.option("--max-plies", type=int, default=None,
              help="Ply cap: a game that reaches it ends without a winner (default 1000; a config's max_plies).")
@click.option("--param", multiple=True, metavar="KEY=VALUE",
              help="Override a parameter of the agent (repeatable). " + _PARAM_KEYS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Take the agent (variants, plugins), seed, budget, preset and ply cap from this experiment config; "
                   "options given explicitly still win.")
@_start_option
@click.option("--hint", "hint_every_move", is_flag=True, help="Show what mcts-co would play before each of your moves.")
@click.option("--out", type=FOLDER, default=Path("results/play"),
              show_default=True, help="The store the finished game is saved in (boopexp replay reads it); checked "
                             "before the first move.")
def play(game_name, agent_name, human_first, seed, mode, seconds, iterations, profile, throttle, preset, max_plies,
         param, config_path, start, hint_every_move, out):
    """Play against an agent in the terminal; the finished game is saved as a game record.

    Type moves in the game's notation (boop.: c3 a small piece, C3 a large one; Connect Four: a
    column, a..g); undo, hint, moves, help and quit are commands.
    """
    from boopexp.experiments.interrupts import Interrupts
    from boopexp.interfaces import play_store
    from boopexp.play.warmup import compile_engine

    played = _settings([("--agent", agent_name, "--param", _parse_overrides(param, "--param"))])
    spec = played.agents[0]
    play_store.check_out(out)  # before the first move: a game that could not be saved is not begun
    stop = Interrupts()
    session: PlaySession | None = None
    saved: play_store.Saved | None = None

    def save() -> play_store.Saved:
        nonlocal saved
        assert session is not None
        with stop.held():  # a signal during the save waits for it
            kept = saved = play_store.save_or_rescue(session, out)
        return kept

    def stopped() -> str:
        """What a signal left: a finished game is saved even when the signal came after its last move."""
        if session is None:
            return f"before the first move: nothing is saved ({out} is untouched)."
        if session.over:
            if saved is None:
                with contextlib.suppress(KeyboardInterrupt), stop:  # a second signal waits for the save
                    save()
            assert saved is not None
            if saved.folder is None:
                _print_unsaved(saved)
                return "after the last move: the finished game could not be saved; its record is on stdout."
            instead = "" if saved.problem is None else f" instead ({saved.problem})"
            return (f"after the last move: the finished game is saved in {saved.folder} as "
                    f"{_game_name(saved.record)}{instead}.")
        ply = len(session.moves) + 1
        when = (f"at your move (ply {ply})" if session.human_to_move
                else f"during ply {ply} ({session.agent.name} was thinking)")
        return (f"{when}: the unfinished game is not saved ({out} is untouched); run the same command to start a "
                "new game.")

    with _stopping(stop, stopped):
        if played.settings.game == DEFAULT_GAME:  # another game's kernels compile in its first move (docs/games.md)
            compile_engine(_notice, (spec.kind,), (spec.mcts,))  # not counted as the agent's first move
        from boopexp.interfaces import interactive

        openings = played.settings.openings  # --start's suite of one: its line starts every game
        session = play_store.new_session(played.settings, spec, Colour.BLUE if human_first else Colour.RED, out,
                                         None if start is None or openings is None else openings.positions[0])
        outcome = interactive.run_dialogue(session, input, click.echo, sys.stderr, hint_every_move)
    if not outcome.finished:
        click.echo(f"Game abandoned after {outcome.plies} plies; not saved.")
        return
    with _stopping(stop, stopped):
        kept = save()
    record = kept.record
    if kept.folder is None:
        _print_unsaved(kept)
        sys.exit(1)
    if kept.problem is not None:  # --out broke during the game: the game is in a rescue store
        click.echo(f"Error: {kept.problem}; the finished game is saved in {str(kept.folder)!r} instead", err=True)
    click.echo(f"Saved in {kept.folder} as {_game_name(record)}; watch it again with:")
    click.echo(f"  boopexp replay {kept.folder} --pairing {record['pairing']!r} --game {record['game_index']} "
               f"--config-hash {record['config_hash']} --show")
    if kept.problem is not None:
        sys.exit(1)


def _print_unsaved(kept: Saved) -> None:
    """The last resort when no folder could be written: the record as one JSON line on stdout
    (a store's games.jsonl reads it as is), and one line on stderr saying so."""
    click.echo(f"Error: {kept.problem}; nowhere else could be written either: the finished game's record "
               "follows on stdout, one JSON line to append to a store's games.jsonl", err=True)
    click.echo(json.dumps(kept.record))


def _game_name(record: Mapping[str, Any]) -> str:
    return f"{record['pairing']!r} #{record['game_index']}"


@click.command("engine")
@_game_option
@click.option("--agent", "agent_name", required=True, metavar="AGENT",
              help="The agent that plays: " + ", ".join(AGENT_NAMES) + ", or an agent of --config.")
@_settings_options
@click.option("--param", multiple=True, metavar="KEY=VALUE",
              help="Override a parameter of the agent (repeatable; also 'setoption name KEY value VALUE').")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Take the agent (variants, plugins), seed, budget and preset from this experiment config.")
def engine(game_name, agent_name, seed, mode, seconds, iterations, profile, throttle, preset, param, config_path):
    """Speak btp, the boop. text protocol (docs/protocol.md), on stdin/stdout for one agent and one game.

    The seed and budget options are the defaults of 'newgame' and 'go' without arguments; a host
    sends 'newgame seed S side p1|p2' and 'go iterations N' (or devicetime/movetime MS); 'stop',
    'quit' or the end of the input end a running search with its best move so far.
    """
    from boopexp.play.btp import EngineSession, serve
    from boopexp.play.warmup import compile_engine

    overrides = _parse_overrides(param, "--param")
    played = _settings([("--agent", agent_name, "--param", overrides)])
    agent = played.build  # the registry's, or --config's read once by _settings
    assert agent is not None  # _settings always says how it builds agents

    def build(options: Mapping[str, str]) -> AgentSpec:  # setoption values read as --param's
        typed = _parse_overrides(tuple(f"{key}={value}" for key, value in options.items()), "setoption")
        return agent(agent_name, {**overrides, **typed})
    played_game = games.get(played.settings.game)
    if played_game.name == DEFAULT_GAME:  # before the host's first line: the first move is not the compilation's
        compile_engine(lambda line: click.echo(line, err=True), kinds=[played.agents[0].kind],
                       searches=[played.agents[0].mcts])
    session = EngineSession(build, played.settings.budget, played.settings.seed, game=played_game)
    serve(session, sys.stdin.buffer, sys.stdout)
