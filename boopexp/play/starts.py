"""Start positions, played: **the** resolution of a task's start (``resolve_start``, in the game's
worker), a suite checked against the rules (``check_suite``), **the** draw of random-plies position
i (``draw_opening``) and its reference evaluation (``balance_score``).

The engine side of start positions (docs/openings.md): a task's start turned into the position
its game starts from, a suite checked against the rules, a random-plies position drawn and judged.

:mod:`boopexp.play.openings` describes the openings without the engine (the config and the
runner use it); this module plays: :func:`resolve_start` runs in the game's worker
(:func:`boopexp.play.match.play_game`), :func:`check_suite` before a run plays anything, and
``boopexp openings`` writes suites with :func:`draw_opening`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from boopexp.agents.specs import resolve_agent
from boopexp.engine import rules
from boopexp.engine.buffers import new_work
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import decode_move, initial_state
from boopexp.errors import BoopError, ConfigError, InvalidPositionError
from boopexp.game import notation
from boopexp.game.position import Position
from boopexp.game.sides import Colour
from boopexp.games import registry
from boopexp.games.registry import DEFAULT_GAME, GameOptions
from boopexp.play.contract import GameRecord, GameTask
from boopexp.play.openings import (
    BALANCE_PLY_CAP,
    MAX_DRAWS,
    Balance,
    Draw,
    Openings,
    is_position,
    line_forms,
)
from boopexp.play.settings import GameSettings

#: How a game is played: :func:`boopexp.play.match.play_game`, which resolves its tasks' starts
#: here and so hands itself in (this module does not import it: no import cycle).
PlayGame = Callable[[GameTask], GameRecord]

#: Mixed into the seed of every opening draw, so that its stream is no game's (game seeds are
#: SeedSequence([settings hash, game index])).
_DRAW_TAG = 0x6F70656E  # "open"


def resolve_start(start: str | Draw | None, play: PlayGame, game: str = DEFAULT_GAME,
                  options: GameOptions = ()) -> str | None:
    """The position string a game of ``game`` starts from: None (the empty board), a suite line
    played (:func:`play_line`; boop.'s, or another game's position string as it is), or a
    :class:`~boopexp.play.openings.Draw` drawn (:func:`draw_opening`, its reference games played
    by ``play``; a game with a random start: from game pair ``i``'s board under its ``options``).

    Raises:
        BoopError: a line whose moves are illegal or whose game is already won.
    """
    if start is None:
        return None
    if isinstance(start, Draw):
        return draw_opening(start.seed, start.plies, start.index, start.balanced, play, game, options)
    if game != DEFAULT_GAME:
        played = registry.get(game)
        return played.position_string(played.parse_position(start))
    return play_line(start)


def checked_start(start: str | Draw | None, play: PlayGame, where: str = "--start",
                  game: str = DEFAULT_GAME) -> str | None:
    """:func:`resolve_start` for a start a person typed (``game``/``play --start``): a start the
    rules refuse is a ConfigError (one line, exit 2) naming ``where``.

    Raises:
        ConfigError: ``<where>: <why>``.
    """
    try:
        return resolve_start(start, play, game)
    except ConfigError:
        raise
    except BoopError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def play_line(text: str) -> str:
    """A normalised suite line (:func:`boopexp.play.openings.normalise_line`) as the full position
    string of its position: a position string as it is, a move list played from the empty board
    (REAL rules; the promotion heuristic chooses among several groups unless the move names one,
    ``c4:a4b4c4``, its ties by a fixed generator). A game already won is refused.

    Raises:
        InvalidPositionError, InvalidMoveError, IllegalMoveError: the line, and why.
    """
    if is_position(text):
        position = Position.from_string(text)
    else:
        position = Position.initial()
        for ply, move in enumerate(text.split(), start=1):
            result = position.play(move, rng=0)
            if result.winner is not None:
                raise InvalidPositionError(f"{text!r}: {result.winner} wins at ply {ply}: a start must be a game "
                                           "in progress")
            position = result.position
    for colour in ("blue", "red"):
        if position.has_won(colour):
            raise InvalidPositionError(f"{text!r}: {colour} has already won there: a start must be a game in progress")
    return position.to_string()


def check_suite(openings: Openings | None, game: str = DEFAULT_GAME) -> None:
    """Check every line of a file suite of ``game`` against the rules (boop.: legal moves; every
    game: a game in progress), so that a bad line is one line before any game and not a failed
    game mid-run.

    Raises:
        ConfigError: ``<file>:<line>: <why>; a line of a <game> suite is …``.
    """
    if openings is None or openings.random_plies is not None:
        return
    for number, line in zip(openings.lines, openings.positions):
        try:
            if game == DEFAULT_GAME:
                play_line(line)
            else:
                _in_progress(line, game)
        except BoopError as exc:
            raise ConfigError(f"{openings.file}:{number}: {exc}; {line_forms(game)}") from None


def _in_progress(text: str, game: str) -> None:
    """Refuse a position of ``game`` that is over: a side has won, or no move is left (a draw).

    Raises:
        InvalidPositionError: the position, and why.
    """
    played = registry.get(game)
    kernels = played.kernels()
    st = np.asarray(played.parse_position(text), dtype=kernels.STATE_DTYPE)
    for colour in (-1, 1):
        if kernels.has_won(st, colour):
            raise InvalidPositionError(f"{text!r}: {Colour.of(colour).side.value} has already won there: a start "
                                       "must be a game in progress")
    if kernels.legal_move_count(st) == 0:
        raise InvalidPositionError(f"{text!r}: no move is left (the game is over): a start must be a game in progress")


@lru_cache(maxsize=4096)
def draw_opening(seed: int, plies: int, index: int, balanced: Balance | None = None,
                 play: PlayGame | None = None, game: str = DEFAULT_GAME, options: GameOptions = ()) -> str:
    """Position ``index`` of the suite ``{random_plies: plies, balanced: …}`` under experiment
    ``seed``: from a generator of (seed, plies, index) alone, ``plies`` moves of the ``random``
    agent (its random move and random promotion) from the empty board, drawn again while a side
    wins within them or, with ``balanced``, while the reference evaluation (:func:`balance_score`)
    calls it uneven (its games played by ``play``, needed with ``balanced``). Cached: the
    pairings of a config in one worker ask the same positions. Another ``game``'s: the random
    agent's moves (its kernels' ``random_move`` and ``apply_move``), drawn again while the game
    ends within them; a game with a random start plays them from game pair ``index``'s board
    (:func:`boopexp.games.registry.board_seed`, the game's ``options``), the board
    ``paired_boards`` gives that pair.

    Raises:
        ConfigError: no draw of :data:`~boopexp.play.openings.MAX_DRAWS` passes ``balanced``.
    """
    ss = np.random.SeedSequence([seed & 0xFFFF_FFFF, seed >> 32, _DRAW_TAG, plies, index])
    draw_ss, balance_ss = ss.spawn(2)
    rng = new_rng_state(draw_ss)
    for _attempt in range(MAX_DRAWS):
        text = _random_plies(game, plies, rng, registry.board_seed(seed, index), options)
        if text is None:
            continue
        if balanced is None:
            return text
        (games_ss,) = balance_ss.spawn(1)  # a fresh stream per candidate, in draw order
        assert play is not None, "a balanced draw plays reference games: pass play_game"
        if balanced.accepts(balance_score(text, balanced.games, int(games_ss.generate_state(1, np.uint64)[0]), play,
                                          game, options)):
            return text
    if balanced is None:  # a game whose random games end sooner than boop.'s (Connect Four's: ~21 plies)
        raise ConfigError(f"openings: {plies} random plies of {game} ended the game in all {MAX_DRAWS} draws "
                          f"(game pair {index}): draw fewer plies")
    raise ConfigError(f"openings: no position of {plies} random plies out of {MAX_DRAWS} draws (game pair {index}) "
                      f"passes balanced {balanced.to_dict()}: widen the margin")


def _random_plies(game: str, plies: int, rng: np.ndarray, board: int = 0, options: GameOptions = ()) -> str | None:
    """The position string after ``plies`` moves of the random agent from ``game``'s start (a game
    with a random start: the one seed ``board`` draws under ``options``), or None when the game
    ends within them (boop.: its random move and random promotion, REAL)."""
    if game == DEFAULT_GAME:
        w = new_work()
        st = initial_state()
        for _ in range(plies):
            code = rules.random_move(st, w.mask, rng, w.squares)
            size, square = decode_move(code)
            winner, _, _ = rules.apply_move_inplace(st, size, square, rules.REAL, rules.PROMO_RANDOM, rng, w.groups,
                                                    w.scores, w.ties)
            if winner != 0:
                return None
        return notation.format_position(st)
    played = registry.get(game)
    engine = played.engine()
    work = engine.new_work()
    st = played.initial_state(board, options) if played.random_start else played.initial_state()
    for _ in range(plies):
        code = engine.random_move(st, work.mask, rng, work)
        outcome, _ = engine.apply_move(st, code, rng, work)
        if outcome != 0:
            return None
    return played.position_string(st)


def balance_score(start: str, games: int, seed: int, play: PlayGame, game: str = DEFAULT_GAME,
                  options: GameOptions = ()) -> float:
    """The reference evaluation of a start: the side to move's score (a win 1, a game stopped at
    :data:`BALANCE_PLY_CAP` ½) over ``games`` games of ``heuristics`` (the paper's greedy CO
    agent: one solver call a move, ties broken at random) against itself from ``start``, game
    ``g`` seeded by (``seed``, ``g``), played by ``play``. Deterministic, no budget to choose,
    a few ms a game."""
    settings = GameSettings("openings-balance", max_plies=BALANCE_PLY_CAP, game=game, game_options=options)
    agent = resolve_agent("heuristics", settings.preset)
    played = registry.get(game)
    me = Colour.of(played.to_move(played.parse_position(start))).side
    key = f"{seed & (2**64 - 1):016x}"  # the reference games' "settings hash": game g's seed derives from it
    total = 0.0
    for g in range(games):
        winner = play(settings.task(agent, agent, g, config_hash=key, start=start))["winner"]
        total += 0.5 if winner is None else float(winner == me)
    return total / games


#: Mixed into the seed of a suite's summary evaluation: other games than the draw's.
_SUMMARY_TAG = 0x73756D6D  # "summ"


def summary_seed(seed: int, index: int) -> int:
    """The seed of position ``index``'s reference games in a suite's summary (``boopexp openings``):
    a stream of its own, so the summary judges a balanced suite again, not with the draw's games."""
    ss = np.random.SeedSequence([seed & 0xFFFF_FFFF, seed >> 32, _SUMMARY_TAG, index])
    return int(ss.generate_state(1, np.uint64)[0])


def suite_summary(positions: list[str], scores: list[float], balance: Balance, game: str = DEFAULT_GAME) -> str:
    """What ``boopexp openings`` says of a suite's balance: the distribution of the side to move's
    reference score, the share within the margin, and who moves first (boop.: Blue or Red; another
    game: p1, the first player, or p2)."""
    values = np.array(scores, dtype=float)
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    even = sum(balance.accepts(s) for s in scores)
    played = registry.get(game)
    second = sum(1 for p in positions if played.to_move(played.parse_position(p)) == Colour.RED.code)
    first_name, second_name = ("Blue", "Red") if game == DEFAULT_GAME else ("p1", "p2")
    return "\n".join([
        f"Reference evaluation (the side to move's score over {balance.games} games of heuristics against itself, "
        f"fresh seeds): mean {values.mean():.3f}, quartiles {q1:.3f} / {median:.3f} / {q3:.3f}, "
        f"min {values.min():.3f}, max {values.max():.3f}",
        f"Judged even (0.5 +- {balance.margin:g}): {even} of {len(scores)} ({100 * even / len(scores):.0f} %)",
        f"Side to move: {first_name} in {len(positions) - second}, {second_name} in {second}",
    ])
