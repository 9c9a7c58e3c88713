"""A stored game walked move by move (``walk``), played again (``first_difference``), or played
again up to one search, whose root it reads (``root_search``: ``replay --root-at``, the viewer's
"The search").

``boopexp replay`` and the tests use these; a record alone is enough (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from boopexp.agents.specs import ALIASES
from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import new_rng_state
from boopexp.errors import BoopError, ConfigError, StoreError, show_value
from boopexp.game.position import Position
from boopexp.game.sides import Colour, Side
from boopexp.games import registry as games
from boopexp.games.position import GamePosition
from boopexp.games.registry import DEFAULT_GAME, Game
from boopexp.play.contract import (
    FORFEITS,
    first_mover,
    mover,
    pack_record,
    same_game,
    task_from_record,
    termination_of,
    unpack_record,
    without_host_timing,
)
from boopexp.play.identity import PAIRING_SEPARATOR, pairing_name
from boopexp.play.match import play_game

#: ``on_ply(ply, move_text, position_after)``
OnPly = Callable[[int, str, Position], None]


def _name(record: Mapping) -> str:
    return f"{record.get('pairing')!r} #{record.get('game_index')}"


def find_game(records: Iterable[Mapping], pairing: str, game_index: int, config_hash: str | None = None,
              where: str = "the store") -> dict:
    """The one record of ``pairing`` #``game_index`` (under a settings hash starting ``config_hash``).

    Raises:
        ConfigError: no such game (the message lists the pairings there), or several under
            different settings (the message lists their hashes).
    """
    records = list(records)
    found = [
        r for r in records
        if r.get("pairing") == pairing and r.get("game_index") == game_index
        and (config_hash is None or str(r.get("config_hash", "")).startswith(config_hash))
    ]
    if not found:
        if config_hash is not None:
            hashes = sorted({str(r.get("config_hash")) for r in records
                             if r.get("pairing") == pairing and r.get("game_index") == game_index})
            there = f"its settings hashes there: {', '.join(hashes)}" if hashes else "no such game under any settings"
            raise ConfigError(f"no game {pairing!r} #{game_index} with a settings hash starting {config_hash!r}"
                              f" in {where}; {there}")
        pairings = sorted({str(r.get("pairing")) for r in records})
        raise ConfigError(f"no game {pairing!r} #{game_index} in {where}; pairings there: {', '.join(pairings)}")
    if len(found) > 1:
        choices = ", ".join(str(r.get("config_hash")) for r in found)
        raise ConfigError(
            f"{pairing!r} #{game_index} exists under several settings; choose --config-hash from: {choices}"
        )
    return dict(found[0])


def moves_problem(record: Mapping) -> str | None:
    """Why ``record`` holds no moves to walk (``"has no 'moves' key ..."``), or None if it does."""
    if "moves" not in record:
        return "has no 'moves' key (the list of its moves)"
    moves = record["moves"]
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        return f"has 'moves' = {show_value(moves)}, not a list of move strings"
    return None


def game_of(record: Mapping) -> Game:
    """The game a record's moves are of (its ``game``; boop. when it names none).

    Raises:
        StoreError: a ``game`` that is not a game boopexp plays.
    """
    try:
        return games.get(record.get("game", DEFAULT_GAME))
    except ConfigError as exc:
        raise StoreError(f"{_name(record)}: {exc}") from None


def start_position(record: Mapping) -> Position:
    """The position a record's game started from: its ``start`` (docs/openings.md), else the empty board.

    Raises:
        StoreError: a ``start`` that is not a valid position string.
    """
    start = record.get("start")
    if start is None:
        return Position.initial()
    try:
        return Position.from_string(start)
    except BoopError as exc:
        raise StoreError(f"{_name(record)}: its start is not a position: {exc}") from None


def walk(record: Mapping, on_ply: OnPly | None = None) -> Position:
    """Play ``record['moves']`` on the board from its start (REAL rules; a ``:group`` suffix
    replays the recorded promotion choice) and check the record's outcome; return the final position.

    Raises:
        StoreError: no list of moves, an unreadable start, an illegal or unreadable move, a victory before the
            last ply, or a counted field other than the replayed game's (:func:`check_counted_fields`).
    """
    problem = moves_problem(record)
    if problem:
        raise StoreError(f"game {_name(record)} {problem}")
    moves = list(record["moves"])
    if "plies" in record and record["plies"] != len(moves):
        raise StoreError(f"{_name(record)}: the record says {record['plies']} plies but holds {len(moves)} moves")
    game = game_of(record)
    if game.name != DEFAULT_GAME:
        return _walk_game(record, game, moves, on_ply)  # type: ignore[return-value]
    position = start_position(record)
    winner = None
    # one generator for the walk's promotion tie-breaks (a record names the group where that
    # matters): seeded, so a walk is the same every time, and made once, not per move
    rng = new_rng_state(0)
    for ply, text in enumerate(moves, start=1):
        try:
            result = position.play(text, rng=rng)
        except BoopError as exc:
            raise StoreError(f"{_name(record)}: ply {ply} ({text!r}): {exc}") from None
        position, winner = result.position, result.winner
        if on_ply is not None:
            on_ply(ply, text, position)
        if winner is not None and ply != len(moves):
            raise StoreError(f"{_name(record)}: {winner} already won at ply {ply} of {len(moves)}")
    check_counted_fields(record, winner)
    return position


def _walk_game(record: Mapping, game: Game, moves: list[str], on_ply) -> GamePosition:
    """:func:`walk` for a game other than boop.: each move read with the game's notation, played
    with its kernels' ``apply_move``; the outcome (a colour, a draw) is the last move's."""
    start = record.get("start")
    try:
        st = game.initial_state() if start is None else game.parse_position(start)
    except BoopError as exc:
        raise StoreError(f"{_name(record)}: its start is not a position: {exc}") from None
    kernels = game.kernels()
    work = kernels.new_work()
    rng = new_rng_state(0)
    outcome = 0
    for ply, text in enumerate(moves, start=1):
        try:
            code = game.values.parse_move(text, st)
        except BoopError as exc:
            raise StoreError(f"{_name(record)}: ply {ply} ({text!r}): {exc}") from None
        st = st.copy()
        outcome, _ = kernels.apply_move(st, code, rng, work)
        if on_ply is not None:
            on_ply(ply, text, GamePosition(game, st, int(outcome)))
        if outcome != 0 and ply != len(moves):
            raise StoreError(f"{_name(record)}: the game ended at ply {ply} of {len(moves)}")
    check_counted_fields(record, Colour.of(int(outcome)) if outcome in (-1, 1) else None, draw=outcome == DRAW)
    return GamePosition(game, st, int(outcome))


def first_repeat(record: Mapping) -> tuple[int, int] | None:
    """The first position of ``record``'s game that is one it had already reached, as
    ``(ply, earlier ply)`` (ply 0: the start position), or None: whether a game without a
    winner went round a position cycle, rather than only running out of plies.

    Raises:
        StoreError: as :func:`walk`.
    """
    seen: dict[Position, int] = {start_position(record): 0}
    found: list[tuple[int, int]] = []

    def note(ply: int, text: str, position: Position) -> None:
        if not found and position in seen:
            found.append((ply, seen[position]))
        seen.setdefault(position, ply)

    walk(record, note)
    return found[0] if found else None


#: The fields of a game's outcome (:func:`check_counted_fields`): decided by its last ply.
_OUTCOME_KEYS = ("winner", "winner_colour", "winner_agent", "termination")


def check_counted_fields(record: Mapping, colour: Colour | None, draw: bool = False) -> None:
    """Check every field that ``status`` and the tables count against the game's moves and agents:
    the winner (side, colour, agent), the termination, the number of plies, the agent names and
    the pairing, and the telemetry's ply, player and agent per move. (The telemetry's counts come from the search:
    :func:`first_difference` checks them.)

    Args:
        colour: the winner of the walked moves, or None.
        draw: the walked moves ended the game drawn (no ``colour``; boop. has no draw, a game
            with one does: Connect Four's full board).

    Raises:
        StoreError: the first field that disagrees, with the recorded and the replayed values.
    """
    side = None if colour is None else colour.side
    termination: str = termination_of(side, draw)
    forfeit = record.get("forfeit")
    if isinstance(forfeit, Mapping):
        # A plugin's forfeit (docs/agents.md) ends the game before any victory on the board; the
        # opponent of the forfeiting side wins.
        if colour is not None:
            raise StoreError(f"{_name(record)}: the record says a forfeit, but {colour} won on the board")
        side = Side.P2 if forfeit.get("player") == Side.P1 else Side.P1
        colour = side.colour
        termination = record["termination"] if record.get("termination") in FORFEITS else "a forfeit"
    names: dict[Side, Any] = {s: (record.get(f"{s.value}_spec") or {}).get("name", record.get(s.value)) for s in Side}
    expected = {
        "winner": side,
        "winner_colour": colour,
        "winner_agent": None if side is None else names[side],
        "termination": termination,
        "plies": len(record["moves"]),
        "p1": names[Side.P1],
        "p2": names[Side.P2],
        "pairing": pairing_name(names[Side.P1], names[Side.P2]),
    }
    for key, want in expected.items():
        got = record.get(key)
        if key == "pairing" and isinstance(got, str):  # an alias names the same agent ("mcts+SEP")
            got = pairing_name(*(ALIASES.get(n, n) for n in got.split(PAIRING_SEPARATOR, 1)))
        if key in record and got != want:
            # the outcome is the last ply's: say which, as a move's error says its ply
            at = f" (the game's end, ply {len(record['moves'])})" if key in _OUTCOME_KEYS else ""
            raise StoreError(f"{_name(record)}: the record says {key} = {record[key]!r}; its moves and agents "
                             f"give {want!r}{at}")
    telemetry = record.get("telemetry")
    if isinstance(telemetry, list):
        if len(telemetry) != len(record["moves"]):
            raise StoreError(f"{_name(record)}: {len(telemetry)} telemetry entries for {len(record['moves'])} moves")
        first = first_mover(record)
        for ply, entry in enumerate(telemetry, start=1):
            player = mover(first, ply)
            want = {"ply": ply, "player": player, "agent": names[player]}
            for key, value in want.items():
                if isinstance(entry, Mapping) and key in entry and entry[key] != value:
                    raise StoreError(f"{_name(record)}: telemetry of ply {ply} says {key} = {entry[key]!r}, "
                                     f"not {value!r}")


def check_searchable(record: Mapping) -> None:
    """Raise ConfigError for a game with a human player (``boopexp play``): its moves can be
    walked, not searched again."""
    if any((record.get(side) or {}).get("kind") == "human" for side in ("p1_spec", "p2_spec")):
        raise ConfigError(f"{_name(record)} was played by a human (boopexp play): it cannot be re-played "
                          "by search; without --search its moves are checked")


def first_difference(record: Mapping) -> int | None:
    """Play the game again from the record's settings and seed (:func:`boopexp.play.match.play_game`);
    None when it is the same game move for move (host timings and the code version aside),
    else the first ply (1-based) where it differs: its move, or with the same moves, the
    telemetry of the search that chose it.

    Device and iterations budgets reproduce exactly; cpu and wall budgets depend on the host.

    Raises:
        ConfigError: the record cannot be turned into a task (a missing field, a human player).
    """
    check_searchable(record)
    again = play_game(task_from_record(dict(record)))
    # the version may differ: a record of older code is checked against the current one
    if same_game(again, record):
        return None
    a, b = again["moves"], list(record["moves"])
    if a == b:  # the same moves: the first ply whose telemetry (the search's counts) differs
        ta, tb = (without_host_timing(r).get("telemetry") or [] for r in (unpack_record(pack_record(again)),
                                                                          unpack_record(pack_record(record))))
        return 1 + next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb), len(a)))
    return 1 + next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


#: The budgets whose games replay exactly, searches included (cpu and wall depend on the host).
REPRODUCIBLE_MODES = ("device", "iterations")
#: The agent kinds whose games :func:`check_replays` plays again by search: the project's own.
#: A plugin's module or an engine's command named by a record read from a file is not run.
SEARCHED_KINDS = ("mcts", "heuristics", "random", "alphabeta")


def reproducible(record: Mapping) -> bool:
    """Whether playing ``record``'s game again by search must give it back exactly: a device or
    iterations budget (:data:`REPRODUCIBLE_MODES`) and both agents of :data:`SEARCHED_KINDS`."""
    kinds = [(record.get(f"{side.value}_spec") or {}).get("kind") for side in Side]
    return (record.get("budget") or {}).get("mode") in REPRODUCIBLE_MODES and all(k in SEARCHED_KINDS for k in kinds)


def check_replays(record: Mapping, search: bool = True) -> None:
    """Play a game record through the rules (:func:`walk`: every move legal, the outcome and the
    counted fields the moves' own) and, with ``search``, where its game is :func:`reproducible`,
    play it again by search from its settings and seed (:func:`first_difference`, as ``replay
    --search``): what ``import`` checks of every game before it is stored.

    Raises:
        StoreError: one line naming the game and the ply where it does not replay.
    """
    walk(record)
    if not (search and reproducible(record)):
        return
    try:
        ply = first_difference(record)
    except ConfigError as exc:
        raise StoreError(f"{_name(record)}: cannot be played again from its settings: {exc}") from None
    if ply is not None:
        raise StoreError(f"{_name(record)}: played again by search from its settings and seed, the game differs "
                         f"from the record at ply {ply} (its move, or its search's telemetry)")


@dataclass(frozen=True)
class RootMove:
    """A move at the root of a search (:func:`root_search`)."""

    move: str  # the placement, in the notation (``c3`` a small piece, ``C3`` a large one)
    visits: int
    value: float | None  # its mean value for the side that searched (score / visits); None unvisited
    selectable: bool  # False: left out by the Selection injection (m best) or the early border mask
    proven: int  # +1 a proven win, -1 a proven loss (a terminal move, or MCTS-Solver's proof), 0 not known


@dataclass(frozen=True)
class RootSearch:
    """The root of the search that chose one move of a stored game, re-played."""

    ply: int
    side: Side
    agent: str
    move: str  # the move the record holds at that ply (with its promotion, if any)
    chosen: str  # the placement the search chose: the record's move without its promotion
    #: in the order :func:`boopexp.engine.mcts.final_choice` prefers them (:func:`_final_choice_order`)
    children: tuple[RootMove, ...]

    @property
    def visits(self) -> int:
        """The visits of the root's children (each iteration visits one; a newly expanded child's
        own first visit is not counted, QUIRK-A8)."""
        return sum(c.visits for c in self.children)

    def to_dict(self) -> dict[str, Any]:
        """As ``/api/game/search`` returns it."""
        return {"ply": self.ply, "side": self.side.value, "agent": self.agent, "move": self.move,
                "chosen": self.chosen, "visits": self.visits, "children": [vars(c) for c in self.children]}


class _Stop(Exception):
    """The search wanted was found: the re-play stops there."""


class _Differs(Exception):
    def __init__(self, ply: int) -> None:
        self.ply = ply


def check_root_search(record: Mapping, ply: int) -> tuple[Side, str]:
    """The side and agent that chose move ``ply`` of a stored game, if :func:`root_search` can
    show its search (else its ConfigError): before any move is walked or played."""
    check_searchable(record)
    game = record.get("game", DEFAULT_GAME)
    if game != DEFAULT_GAME:
        raise ConfigError(f"{_name(record)}: a game of {game}: the search that chose a move is re-run for boop.'s "
                          "games only, so far")
    moves = list(record.get("moves") or ())
    if not isinstance(ply, int) or not 1 <= ply <= len(moves):
        raise ConfigError(f"{_name(record)}: ply {show_value(ply)} is not a move of the game "
                          f"(it has {len(moves)}: 1 to {len(moves)})")
    side = mover(first_mover(record), ply)
    spec = record.get(f"{side.value}_spec") or {}
    agent = str(spec.get("name", side.value))
    if spec.get("kind") != "mcts":
        raise ConfigError(f"{_name(record)}: ply {ply} was played by {agent} ({spec.get('kind')}), not by an MCTS "
                          "search: there is no search tree to show")
    mode = (record.get("budget") or {}).get("mode")
    if mode not in REPRODUCIBLE_MODES:
        raise ConfigError(f"{_name(record)}: a {mode}-budget game depends on the host's speed, so its searches "
                          f"cannot be re-run exactly (only {' and '.join(REPRODUCIBLE_MODES)} games can)")
    return side, agent


def root_search(record: Mapping, ply: int) -> RootSearch:
    """The root of the search that chose move ``ply`` (1-based) of a stored game: the game is
    played again from the record's settings and seed (as :func:`first_difference` plays it), each
    move checked against the record, up to that search, whose root's children it returns (their
    visits and mean values: what the agent weighed). Nothing is stored with the game: a device or
    iterations game replays exactly, so its searches can be re-run at will (``boopexp replay
    --root-at``, the viewer of ``boopexp serve``).

    Raises:
        ConfigError: ``ply`` is not a move of the game; the move was not chosen by an MCTS search
            (another kind of agent, a human); a cpu or wall game (its searches depend on the host).
        StoreError: the re-played game differs from the record before that ply (the record is of
            other code, or damaged).
    """
    return root_searches(record, ply)[ply]


def root_searches(record: Mapping, ply: int) -> dict[int, RootSearch]:
    """:func:`root_search` of move ``ply`` and of every earlier move an MCTS search chose, by
    ply, from the one re-play that reaches ``ply`` (a viewer keeps them: each search it shows
    then costs no re-play).

    Raises:
        ConfigError, StoreError: as :func:`root_search` (for ``ply``).
    """
    from boopexp.engine.mcts import root_children

    check_root_search(record, ply)
    moves = list(record["moves"])
    found: dict[int, RootSearch] = {}
    played = 0

    def on_ply(n: int, state: Any, text: str, winner: int) -> None:
        nonlocal played
        played = n
        if text != moves[n - 1]:
            raise _Differs(n)

    task = task_from_record(dict(record))

    def on_tree(tree: Any) -> None:
        n = played + 1
        side = mover(first_mover(record), n)
        cfg = task.player(side).mcts
        if cfg is not None:
            agent = str((record.get(f"{side.value}_spec") or {}).get("name", side.value))
            found[n] = _root(moves[n - 1], n, side, agent, root_children(tree, cfg), bool(cfg.solver))
        if n == ply:
            raise _Stop

    try:
        play_game(task, on_ply, on_tree)
    except _Stop:
        pass
    except _Differs as exc:
        raise StoreError(f"{_name(record)}: the re-played game differs from the record from ply {exc.ply}, so its "
                         f"search at ply {ply} cannot be shown (a record of other code, or damaged)") from None
    if ply not in found:  # the game ended before: only a record that differs from its re-play
        raise StoreError(f"{_name(record)}: the re-played game ended after {played} plies, before ply {ply}")
    return found


def _root(move: str, ply: int, side: Side, agent: str, children: list[tuple[int, int, float, bool, int, bool]],
          solver: bool) -> RootSearch:
    """The :class:`RootSearch` of the search that chose ``move`` at ``ply`` from its root's children."""
    from boopexp.engine.state import decode_move
    from boopexp.game.notation import format_move, parse_move

    ranked = _final_choice_order(children, solver)
    shown = [RootMove(format_move(*decode_move(code)), visits, score / visits if visits else None, selectable,
                      proven) for code, visits, score, selectable, proven, _ in ranked]
    size, square, _ = parse_move(move)
    return RootSearch(ply, side, agent, move, format_move(size, square), tuple(shown))


def _final_choice_order(children: list[tuple[int, int, float, bool, int, bool]], solver: bool) -> list:
    """The root's children (:func:`boopexp.engine.mcts.root_children`) in the order the search's
    :func:`~boopexp.engine.mcts.final_choice` prefers them (AGENTS.md §B.10): the moves that win at
    once (the first of them is taken); with MCTS-Solver, then the moves proven a win (best mean
    first; an unvisited one by its score) and the visited moves not proven lost; then the visited
    moves by mean value, best first; then the moves never visited. Equal values keep the legal
    order (the search draws among them). Checked against the recorded moves at every ply of
    stored games (tests/test_cli_play.py)."""

    def key(child: tuple[int, int, float, bool, int, bool]) -> tuple:
        _, visits, score, _, proven, wins = child
        mean = score / visits if visits else score
        if wins:
            return (0, 0.0)
        if solver and proven == 1:
            return (1, -mean)
        if solver and proven >= 0 and visits:
            return (2, -mean)
        return (3, -mean) if visits else (4, 0.0)

    return sorted(children, key=key)
