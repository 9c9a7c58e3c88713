"""Start positions, engine-free: a config's ``openings:`` (``Openings``: drawn random plies,
optionally balanced, or a suite file read and checked as text), a task's start before it is played
(a suite line, or a ``Draw``), suite files (``read_suite``, ``suite_text``).

Start positions: a config's ``openings:`` and the suites of ``boopexp openings`` (docs/openings.md).

Tournament tools (fastchess, cutechess, OpenBench) play paired games from a suite of start
positions, so that deterministic agents do not replay one game and the pair cancels the opening's
bias. Here game pair ``i`` — game ``i`` of "A vs B" and game ``i`` of "B vs A" (the pentanomial
SPRT's pair), or game ``i`` of a mirror — starts from position ``i`` of the suite:

- ``{random_plies: N}``: position ``i`` is ``N`` plies of the ``random`` agent from the empty
  board, drawn from a generator seeded by (experiment seed, ``N``, ``i``) alone
  (:func:`boopexp.play.starts.draw_opening`): the same for every pairing of the config, whatever the worker, shard
  or order; a draw in which a side wins is drawn again. With ``balanced: {games, margin}``, a
  drawn position is kept only if the reference evaluation (:func:`balance_score`: ``games``
  games of ``heuristics`` against itself from the position) scores the side to move within
  ``0.5 ± margin``; else the next draw is tried.
- ``{file: PATH}``: position ``i`` is line ``i`` of the file (:func:`read_suite`): a one-line
  position string or a move list from the empty board; ``#`` comments and blank lines skipped.
  A plan with more game pairs than positions is refused (no position is reused silently).

This module is engine-free, like the config that parses it: a task's start is a suite line (a
position string, or a move list still to be played) or a :class:`Draw` (which position to
draw), and :mod:`boopexp.play.starts` — the engine side, run by the game's worker — turns it into
the position the game starts from and the record keeps. A file's lines are checked here as text
(a malformed position or move is one line naming ``file:line``) and against the rules by
:func:`boopexp.play.starts.check_suite` before a run plays anything.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boopexp import schema
from boopexp.engine.state import MOVE_NUMBER
from boopexp.errors import BoopError, ConfigError, InvalidPositionError
from boopexp.game import notation
from boopexp.games import registry
from boopexp.games.registry import DEFAULT_GAME, Game

#: The keys of ``openings:`` and of its ``balanced:``.
OPENINGS_KEYS: tuple[str, ...] = ("random_plies", "file", "balanced")
BALANCED_KEYS: tuple[str, ...] = ("games", "margin")
#: The largest ``random_plies``: past it a random game is mostly over (random games of boop. last
#: a few dozen plies), and drawing a start that no side has won gets slow.
MAX_RANDOM_PLIES = 40
#: The most positions ``boopexp openings --count`` draws into a suite (a typo of a few digits
#: would draw for ever).
MAX_SUITE_POSITIONS = 100_000
#: The largest move number a game may start at: the state counts plies in 16 bits
#: (:data:`boopexp.game.notation.MAX_MOVE_NUMBER`, 32,767), and a game may then play up to the
#: longest ply cap (:data:`boopexp.play.contract.MAX_PLIES_LIMIT`, 16,000) without the count
#: wrapping to negative numbers (MCTS's early-ply rule reads it).
MAX_START_MOVE_NUMBER = 16_767
#: ``balanced:`` defaults: 16 reference games, side-to-move score within 0.5 ± 0.125.
DEFAULT_BALANCE_GAMES = 16
DEFAULT_BALANCE_MARGIN = 0.125
MAX_BALANCE_GAMES = 1000
#: A reference game stops here without a winner (half a point): heuristics against itself can
#: cycle (docs/agents.md), and a short cap keeps a balance check cheap.
BALANCE_PLY_CAP = 200
#: Draws tried for one balanced position before giving up (a margin nothing passes).
MAX_DRAWS = 1000
#: What a line of a boop. openings file may be (messages; another game's: :func:`line_forms`).
LINE_FORMS = ("a one-line position string (ROWS BLUE_POOL RED_POOL SIDE [L MOVE_NUMBER], see docs/openings.md) "
              "or a move list from the empty board like 'c3 D4 a1'; '#' starts a comment")


def line_forms(game: str = DEFAULT_GAME) -> str:
    """What a line of ``game``'s suite may be, naming the game (messages)."""
    if game == DEFAULT_GAME:
        return f"a line of a {game} suite is {LINE_FORMS}"
    return f"a line of a {game} suite is one {game} position string (docs/games.md); '#' starts a comment"


@dataclass(frozen=True)
class Balance:
    """``balanced:``: keep a drawn position only if ``games`` reference games from it score the
    side to move within ``0.5 ± margin`` (:func:`balance_score`)."""

    games: int = DEFAULT_BALANCE_GAMES
    margin: float = DEFAULT_BALANCE_MARGIN

    def accepts(self, score: float) -> bool:
        """Whether the side to move's score (0..1) is even within the margin."""
        return abs(score - 0.5) <= self.margin + 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {"games": self.games, "margin": self.margin}


@dataclass(frozen=True)
class Draw:
    """Position ``index`` of the suite ``{random_plies: plies, balanced: …}`` under experiment
    ``seed``: what :func:`boopexp.play.starts.draw_opening` draws (a task's start, before the
    worker resolves it)."""

    seed: int
    plies: int
    index: int
    balanced: Balance | None = None


@dataclass(frozen=True)
class Openings:
    """The start positions of a config's games (``openings:``): drawn or read from a file.

    Attributes:
        random_plies: draw each position as this many random plies (None: a file suite).
        balanced: keep only drawn positions that the reference evaluation calls even.
        positions: a file suite's lines, normalised (:func:`normalise_line`): position strings and
            move lists.
        file: the file as the config names it (messages and config.yaml).
        path: the file as read (its folder resolved), and ``lines``: the line number of each position.
    """

    random_plies: int | None = None
    balanced: Balance | None = None
    positions: tuple[str, ...] = ()
    file: str | None = None
    path: str | None = field(default=None, compare=False)
    lines: tuple[int, ...] = field(default=(), compare=False)

    def identity(self) -> dict[str, Any]:
        """What the settings hash covers (:func:`boopexp.play.identity.settings_hash`): the draw's
        settings, or the digest of a file's positions (not its path or comments: a moved or
        commented file plays the same games)."""
        if self.random_plies is not None:
            out: dict[str, Any] = {"random_plies": self.random_plies}
            if self.balanced is not None:
                out["balanced"] = self.balanced.to_dict()
            return out
        return {"positions": len(self.positions), "sha256": suite_digest(self.positions)}

    def to_dict(self) -> dict[str, Any]:
        """The ``openings:`` of a store's config.yaml (the file's digest beside its name)."""
        if self.random_plies is not None:
            return self.identity()
        return {"file": self.file, **self.identity()}

    def start(self, seed: int, index: int) -> str | Draw:
        """The start of game pair ``index`` under experiment ``seed``: the suite's line ``index``
        (a position string or a move list), or the :class:`Draw` of a random-plies suite.

        Raises:
            ConfigError: a file suite with no position ``index``.
        """
        if self.random_plies is not None:
            return Draw(seed, self.random_plies, index, self.balanced)
        if index >= len(self.positions):
            raise ConfigError(f"openings: {self.file} holds {len(self.positions)} positions; game pair {index} "
                              f"needs position {index} (0-based)")
        return self.positions[index]

    def check_games(self, games: int, pairing: str) -> None:
        """Refuse a pairing of ``games`` games when a file suite has fewer positions (game pair ``i``
        starts from position ``i``; none is reused).

        Raises:
            ConfigError: one line naming the file, its size and the pairing.
        """
        if self.random_plies is None and games > len(self.positions):
            raise ConfigError(f"openings: {self.file} holds {len(self.positions)} positions, fewer than the {games} "
                              f"games of pairing {pairing!r} (game pair i starts from position i; none is reused): "
                              "add positions or play fewer games")


def suite_digest(positions: Iterable[str]) -> str:
    """The SHA-256 (16 hex digits) of a suite's positions, one a line: its identity."""
    return hashlib.sha256("\n".join(positions).encode("ascii")).hexdigest()[:16]


def parse_openings(data: Any, directory: str | None = None, game: Game | None = None) -> Openings | None:
    """The config's ``openings:`` (None when absent); a file is read at once (:func:`read_suite`),
    relative to ``directory`` (the config's folder) when its path is relative, its lines
    positions of ``game`` (None: boop.).

    Raises:
        ConfigError: one line naming the key, the bad value and what is allowed.
    """
    if data is None:
        return None
    schema.mapping(data, "openings", "a mapping like {random_plies: 4} or {file: openings.txt}")
    schema.check_keys(data, OPENINGS_KEYS, "openings")
    sources = [key for key in ("random_plies", "file") if key in data]
    if len(sources) != 1:
        raise ConfigError(template="{key} = {value} must name one source: random_plies or file", key="openings",
                          value=dict(data))
    balanced = parse_balance(data["balanced"], "openings.balanced") if "balanced" in data else None
    if "random_plies" in data:
        plies = schema.integer(data["random_plies"], "openings.random_plies", 0, MAX_RANDOM_PLIES)
        return Openings(random_plies=plies, balanced=balanced)
    if balanced is not None:
        raise ConfigError(template="{key} = {value} has no place with openings.file (a file's positions are played "
                                   "as they are: balance a suite when writing it, boopexp openings --balanced)",
                          key="openings.balanced", value=data["balanced"])
    name = data["file"]
    if not isinstance(name, str) or not name.strip():
        raise schema.invalid("openings.file", name, "the path of a suite file (one position a line)")
    path = Path(name).expanduser()
    if not path.is_absolute() and directory is not None:
        path = Path(directory) / path
    lines, positions = read_suite(path, name, game)
    return Openings(positions=positions, file=name, path=str(path), lines=lines)


def parse_balance(data: Any, key: str = "balanced") -> Balance:
    """A ``balanced:`` mapping ``{games: G, margin: M}`` (both optional).

    Raises:
        ConfigError: not a mapping, an unknown key, a bad number, or a margin no score of G games passes.
    """
    data = schema.mapping({} if data is True else data, key, "a mapping like {games: 16, margin: 0.125}")
    schema.check_keys(data, BALANCED_KEYS, key)
    games = schema.integer(data.get("games", DEFAULT_BALANCE_GAMES), f"{key}.games", 1, MAX_BALANCE_GAMES)
    margin = float(schema.number(data.get("margin", DEFAULT_BALANCE_MARGIN), f"{key}.margin", 0, 0.5))
    balance = Balance(games, margin)
    # G decided games score a multiple of 1/G (only a game stopped at the ply cap, rare, scores 1/2).
    if not any(balance.accepts(k / games) for k in range(games + 1)):
        raise ConfigError(template="{key} = {value} admits no score of {allowed}", key=f"{key}.margin", value=margin,
                          allowed=f"{games} decided games (multiples of 1/{games}): use a wider margin or an "
                                  "even number of games")
    return balance


def read_suite(path: str | os.PathLike, name: str | None = None,
               game: Game | None = None) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The line numbers and the lines of a suite file's positions of ``game`` (None: boop.),
    normalised (:func:`normalise_line`): comments (from ``#``) and blank lines skipped.

    Raises:
        ConfigError: the file cannot be read, holds no position, or a line is not a position (or
            boop.'s move list) of the game (``<file>:<line>: …; a line of a <game> suite is …``,
            and which built-in game's position it is when it is another's).
    """
    shown = str(path) if name is None else name
    game_name = DEFAULT_GAME if game is None else game.name
    text = schema.read_text(path, "openings file", shown)
    numbers, out = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        try:
            out.append(normalise_line(content, game))
        except (BoopError, ValueError) as exc:  # ValueError: a user's game's parse_position
            raise ConfigError(f"{shown}:{number}: {exc}{_other_game(content, game_name)}; "
                              f"{line_forms(game_name)}") from None
        numbers.append(number)
    if not out:
        raise ConfigError(f"openings file {shown} holds no position; {line_forms(game_name)}")
    return tuple(numbers), tuple(out)


def _other_game(line: str, game: str) -> str:
    """`` (a position of <other>, not of <game>)`` when ``line`` is a built-in game's position
    other than ``game``'s, else nothing: a suite of the wrong game said so."""
    for other in registry.GAMES:
        if other == game:
            continue
        try:
            registry.get(other).parse_position(line)
        except (BoopError, ValueError):
            continue
        return f" (it is a position of {other}, not of {game}: a suite of another game)"
    return ""


def is_position(line: str) -> bool:
    """Whether a normalised suite line is a position string (a grid has '/'), not a move list."""
    return "/" in line


def normalise_line(text: str, game: Game | None = None) -> str:
    """A suite line in its one form, checked as text: a position string with its optional fields
    filled in, or (boop.) a move list as its moves separated by one space (commas allowed in the
    file); another ``game``'s line is its position string, written as the game writes it.
    Whether the moves are legal, and that nobody has won, the rules tell
    (:func:`boopexp.play.starts.check_suite`).

    Raises:
        InvalidPositionError, InvalidMoveError: the line, and why (a user's game: what its
            ``parse_position`` raises).
    """
    if game is not None and game.name != DEFAULT_GAME:
        return game.position_string(game.parse_position(text))
    if is_position(text):
        st = notation.parse_position(text)
        if st[MOVE_NUMBER] > MAX_START_MOVE_NUMBER:
            raise InvalidPositionError(f"{text!r}: a game starts at move number {MAX_START_MOVE_NUMBER} at the "
                                       f"latest, not {st[MOVE_NUMBER]} (room for the longest ply cap)")
        return notation.format_position(st)
    moves = text.replace(",", " ").split()
    for move in moves:
        notation.parse_move(move)
    if not moves:
        raise InvalidPositionError(f"{text!r} holds no move")
    return " ".join(moves)


def suite_text(positions: Iterable[str], header: Mapping[str, Any]) -> str:
    """A suite file: ``# key: value`` comment lines (how it was made), then one position a line."""
    lines = [f"# {key}: {value}" for key, value in header.items()]
    return "\n".join([*lines, *positions]) + "\n"
