"""**The** games boopexp plays: :class:`Game` (a game's name, its Python values and its compiled
kernels) and :func:`get` (a built-in game by name, or a user's ``module:attr``, docs/games.md).

A game is two modules: its *values* (plain Python: the start, notation, position strings and
boards; importing it loads no numba) and its *kernels* (the contract's compiled names, docs/games.md
"The contract"), bound to the engine's search templates by :func:`boopexp.engine.binding.bind` the
first time the game is searched. boop. is the reference game: its kernels are the engine's own,
its search :mod:`boopexp.engine.mcts` itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from boopexp import schema
from boopexp.errors import ConfigError, exception_line
from boopexp.game.sides import Colour

__all__ = ["DEFAULT_GAME", "DEFAULT_SIDE_NAMES", "GAMES", "Game", "get", "parse_game", "GameOptions", "PAIRED_BOARDS",
           "options_json", "options_of_json", "board_seed"]

#: the game of a config, a record or a command that names none
DEFAULT_GAME = "boop"
#: the built-in games: name -> the module of its Python values
GAMES = {"boop": "boopexp.games.boop", "connect-four": "boopexp.games.connect_four",
         "pentago-swap": "boopexp.games.pentago_swap", "colosseum": "boopexp.games.colosseum"}
#: the sides' names of a game whose values name none (``SIDE_NAMES``): boop.'s, p1's first
DEFAULT_SIDE_NAMES = (Colour.BLUE.value, Colour.RED.value)
#: **the** export format's headers (:mod:`boopexp.experiments.export`) but its two players', which
#: follow ``Date`` and are named by the game's sides, capitalised (boop.'s ``Blue``, ``Red``), in the
#: order they are written; ``Game`` for a game other than boop. only. A side may not take one of
#: these names, or its player's header would overwrite it (tests/test_export.py holds the list to
#: the headers a block is written with)
EXPORT_HEADERS = ("Event", "Game", "Date", "Result", "Termination", "StartPosition", "Seed", "Settings", "Pairing",
                  "GameIndex", "ConfigHash", "Budget", "Record")


#: A game's options as a task, a setting and a record hold them: ``(key, value)`` pairs sorted by
#: key, each value as the game's check returned it (a list as a tuple: hashable); () = none set.
GameOptions = tuple[tuple[str, Any], ...]

#: The option of every game with a random start (``RANDOM_START``): ``true`` draws game pair ``i``'s
#: board from a seed of (experiment seed, ``i``) alone, not from the game's own seed, so the two
#: seatings of a pair (game ``i`` of "A vs B" and of "B vs A", docs/openings.md) and every other
#: pairing's game ``i`` play the same board and seat advantage cancels. Off by default: the
#: original's autoplay draws a fresh board every game.
PAIRED_BOARDS = "paired_boards"
_PAIRED_HELP = "true or false: game pair i's board drawn from (experiment seed, i), the same in both seatings"

#: Mixed into the seed of a paired board (:func:`board_seed`): a stream no game's or opening's seed is.
_BOARD_TAG = 0x626F6172  # "boar"


def board_seed(seed: int, index: int) -> int:
    """The 63-bit seed of game pair ``index``'s board under experiment ``seed`` (``paired_boards``
    and the random-plies openings of a game with a random start), from SeedSequence of (the seed's
    two words, a tag, ``index``) alone."""
    ss = np.random.SeedSequence([seed & 0xFFFF_FFFF, seed >> 32, _BOARD_TAG, int(index)])
    lo, hi = ss.generate_state(2, dtype=np.uint32)
    return int((int(hi) << 32 | int(lo)) & 0x7FFF_FFFF_FFFF_FFFF)


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def options_json(options: GameOptions) -> dict[str, Any]:
    """The options as a JSON mapping (a record's and a config's ``game_options``; tuples as lists)."""
    return {key: list(value) if isinstance(value, tuple) else value for key, value in options}


def options_of_json(data: Mapping[str, Any] | None) -> GameOptions:
    """:func:`options_json`'s mapping (a record's ``game_options``) back as :data:`GameOptions`."""
    return tuple(sorted((key, _hashable(value)) for key, value in (data or {}).items()))


@dataclass(frozen=True)
class Game:
    """A game boopexp plays (docs/games.md).

    Attributes:
        name: the name configs, records and commands give (``boop``, ``connect-four``; a user's
            game: the module of its values, ``pkg.mod`` or ``pkg.mod:ATTR``).
        values: the module of its Python values (``initial_state``, ``position_string``,
            ``parse_position``, ``move_text``, ``parse_move``, ``board_text``, ``KERNELS`` the
            dotted name of its kernels module, ``TO_MOVE``; optionally ``svg``).
    """

    name: str
    values: ModuleType
    #: a user's game: the folder on ``sys.path`` its module was imported from (a config's folder, or
    #: a ``PYTHONPATH`` entry), which a game's task carries to the worker processes
    #: (``GameTask.game_directory``)
    directory: str | None = None

    def kernels(self) -> ModuleType:
        """The game's compiled kernels (imports numba)."""
        return importlib.import_module(self.values.KERNELS)

    def engine(self, search: str = "mcts") -> ModuleType:
        """The search kernels bound to this game: ``mcts`` (:mod:`boopexp.engine.mcts` for boop.)
        or ``alphabeta`` (:mod:`boopexp.engine.alphabeta`)."""
        if self.name == DEFAULT_GAME:
            return importlib.import_module(f"boopexp.engine.{search}")
        from boopexp.engine import binding

        return binding.bind(self.values.NAME.replace("-", "_"), self.kernels(), search)

    def paper_params(self) -> dict[str, Any]:
        """The game's defaults of the paper-level parameters ``k``, ``m``, ``d`` (its values'
        ``DEFAULT_PARAMS``; boop.: none, the preset's)."""
        defaults = getattr(self.values, "DEFAULT_PARAMS", {})
        return {key: defaults[key] for key in ("k", "m", "d") if key in defaults}

    def device_costs(self) -> dict[str, float]:
        """The game's device-µs of its primitives (its values' ``DEVICE_COSTS``, the keys of
        :data:`boopexp.agents.budget.COST_FIELDS`; boop.: none, the profile's are boop.'s)."""
        return dict(getattr(self.values, "DEVICE_COSTS", {}))

    def initial_state(self, seed: int | None = None, options: GameOptions = ()) -> np.ndarray:
        """The start of a game whose seed is ``seed`` (only a game with a random start reads it)
        under the game's ``options`` (:meth:`check_options`; ``paired_boards`` is the caller's)."""
        return self.values.initial_state(seed, **self._own(options))

    def start_state(self, start: str | None, seed: int | None = None, options: GameOptions = ()) -> np.ndarray:
        """The state a game starts from: ``start`` (a position string) with the options a position
        does not hold applied (the values' optional ``with_options``), or :meth:`initial_state`."""
        if start is None:
            return self.initial_state(seed, options)
        st = self.parse_position(start)
        apply = getattr(self.values, "with_options", None)
        return st if apply is None or not options else apply(st, **self._own(options))

    @property
    def random_start(self) -> bool:
        """Whether the start is drawn from the game's seed (its values' ``RANDOM_START``)."""
        return bool(getattr(self.values, "RANDOM_START", False))

    def option_table(self) -> dict[str, tuple[str, Any]]:
        """The options a config may set: the values' ``OPTIONS`` (name -> (what is allowed, its
        check)) and, for a game with a random start, :data:`PAIRED_BOARDS`."""
        table = dict(getattr(self.values, "OPTIONS", {}))
        if self.random_start:
            table[PAIRED_BOARDS] = (_PAIRED_HELP, schema.boolean)
        return table

    def check_options(self, data: Mapping[str, Any], at: str = "game") -> GameOptions:
        """``data`` (a config's ``game:`` keys besides its name) as :data:`GameOptions`, every value
        checked by the game (``paired_boards: false`` is the default and left out).

        Raises:
            ConfigError: ``unknown key game.<key> …; allowed: <the game's options>``, or ``game.<key> =
                <value> must be <what the game allows>``.
        """
        table = self.option_table()
        note = "" if table else f"; {self.name} takes no options"
        schema.check_keys(data, tuple(table), at, note=note)
        out = []
        with schema.under(at):
            for key, value in data.items():
                checked = table[key][1](value, key)
                if key == PAIRED_BOARDS and not checked:
                    continue
                out.append((key, _hashable(checked)))
        return tuple(sorted(out))

    @staticmethod
    def paired(options: GameOptions) -> bool:
        """Whether ``options`` ask for paired boards (:data:`PAIRED_BOARDS`)."""
        return dict(options).get(PAIRED_BOARDS, False) is True

    @staticmethod
    def _own(options: GameOptions) -> dict[str, Any]:
        """The options the game's values take (all but :data:`PAIRED_BOARDS`)."""
        return {key: value for key, value in options if key != PAIRED_BOARDS}

    @property
    def side_names(self) -> tuple[str, str]:
        """The names a reader of the game knows its sides by, p1's first (colour -1, who moves first
        from the start; its values' ``SIDE_NAMES``: Pentago-Swap ``("white", "black")``; default
        :data:`DEFAULT_SIDE_NAMES`)."""
        first, second = getattr(self.values, "SIDE_NAMES", DEFAULT_SIDE_NAMES)
        return first, second

    def side_name(self, colour: Colour | str | int, capital: bool = False) -> str:
        """The game's name of the side that plays ``colour``: a :class:`Colour` or a record's
        ``winner_colour`` (``blue`` p1's side, ``red`` p2's, in every game), or the kernels' -1 / +1;
        ``capital``: its first letter upper-case, to open a sentence (``Blue``, ``White``).

        Raises:
            ValueError: ``colour`` is none of those.
        """
        side = (Colour.of(colour) if isinstance(colour, int) else Colour(colour)).side
        name = self.side_names[side.seat]
        return name[:1].upper() + name[1:] if capital else name

    def to_move(self, st: np.ndarray) -> int:
        """The side to move of ``st``: -1 the first player, +1 the second."""
        return int(st[self.values.TO_MOVE])

    def position_string(self, st: np.ndarray) -> str:
        return self.values.position_string(st)

    def parse_position(self, text: str) -> np.ndarray:
        return self.values.parse_position(text)

    def move_text(self, code: int) -> str:
        return self.values.move_text(code)

    def board_text(self, st: np.ndarray, winner: int = 0) -> str:
        return self.values.board_text(st, winner)

    def parse_move(self, text: str, st: np.ndarray) -> int:
        """The code of the move ``text`` in ``st``; InvalidMoveError or IllegalMoveError naming it."""
        return self.values.parse_move(text, st)

    def svg(self, st: np.ndarray) -> str | None:
        """The position as an SVG picture (its values' optional ``svg``, docs/games.md "Values"), or
        None: the game draws none (the web viewer shows :meth:`board_text` instead)."""
        draw = getattr(self.values, "svg", None)
        return None if draw is None else draw(st)

    def legal_moves(self, st: np.ndarray) -> list[int]:
        """The codes of the legal moves in ``st``, in the game's order (its kernels'
        ``legal_move_codes``: imports numba)."""
        kernels = self.kernels()
        codes = np.zeros(kernels.N_MOVE_CODES, dtype=np.int64)
        n = int(kernels.legal_move_codes(np.asarray(st, dtype=kernels.STATE_DTYPE), codes))
        return [int(c) for c in codes[:n]]


_LOADED: dict[str, Game] = {}

#: the names a game's values supply (docs/games.md, "Values")
VALUES = ("NAME", "KERNELS", "TO_MOVE", "initial_state", "position_string", "parse_position", "move_text",
          "parse_move", "board_text")
#: what ``game`` may be besides a built-in name
USER_GAME = "a module of your own game's values, 'package.module' or 'package.module:ATTR' (docs/games.md)"


def get(name: Any, directory: str | None = None) -> Game:
    """The game ``name`` names: a built-in one (:data:`GAMES`), or a user's, ``{module: "pkg.mod"}``
    or the module's name (``pkg.mod``, ``pkg.mod:ATTR``), imported from ``sys.path`` then from
    ``directory`` (a config's folder) and checked against the contract (:func:`check_game`) the
    first time it is asked for.

    Raises:
        ConfigError: ``game = <name> is not allowed; allowed: <the games>``, or one line naming a
            user's game and what in it breaks the contract.
    """
    if isinstance(name, Mapping):
        schema.check_keys(name, ("module",), "game", note=f"; a game of your own is {{module: {USER_GAME}}}")
        name = name.get("module")
        if not isinstance(name, str) or not name:
            raise schema.invalid("game.module", name, USER_GAME)
    game = _LOADED.get(name) if isinstance(name, str) else None
    if game is not None:
        return game
    if not isinstance(name, str) or not ("." in name or ":" in name):
        schema.choice(name, "game", GAMES)
        game = _LOADED[name] = Game(name, importlib.import_module(GAMES[name]))
        return game
    values = _user_values(name, directory)
    game = Game(name, values, _import_root(name.partition(":")[0]))
    check_game(game)
    _LOADED[name] = game
    return game


#: how a config's ``game:`` mapping names its game
_GAME_KEYS = ("name", "module")


def parse_game(data: Any, directory: str | None = None) -> tuple[Game, GameOptions]:
    """A config's ``game:``: a name (:func:`get`), ``{module: ...}``, or a mapping of ``name`` (a
    built-in game or a user's module) or ``module`` and the game's options
    (``{name: colosseum, board_size: 8}``, :meth:`Game.check_options`).

    Raises:
        ConfigError: one line naming the bad key or value and what is allowed.
    """
    if not isinstance(data, Mapping):
        return get(data, directory), ()
    named = [key for key in _GAME_KEYS if key in data]
    if len(named) != 1:
        raise ConfigError(template="game = {value} must name its game once: {{name: GAME, OPTION: VALUE, ...}} "
                                   f"(GAME: {', '.join(GAMES)}) or {{module: ...}} for {USER_GAME}", value=dict(data))
    key = named[0]
    game = get(data[key] if key == "name" else {"module": data[key]}, directory)
    return game, game.check_options({k: v for k, v in data.items() if k != key})


def _import_root(module_name: str) -> str | None:
    """The folder on ``sys.path`` that the imported module ``module_name`` was found in (a pool
    worker imports it from there: ``GameTask.game_directory``), derived from the module's file, so
    it is right however the module was first found (``PYTHONPATH``, a config's folder, a cache)."""
    module = sys.modules.get(module_name)
    where = getattr(module, "__file__", None)
    if where is None:
        return None
    depth = module_name.count(".") + (1 if hasattr(module, "__path__") else 0)
    return str(Path(where).resolve().parents[depth])


def _user_values(target: str, directory: str | None) -> Any:
    """The values object ``target`` (``module`` or ``module:ATTR``) names."""
    module_name, _, attr = target.partition(":")
    try:
        module = schema.import_user_module(module_name, directory, "game module")
    except ConfigError:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module failed to import: say why
        raise ConfigError(f"game {target!r}: importing {module_name!r} raised {exception_line(exc)}") from None
    values = module
    for part in filter(None, attr.split(".")):
        if not hasattr(values, part):
            raise ConfigError(f"game {target!r}: module {module_name!r} has no {attr!r}")
        values = getattr(values, part)
    return values


def check_game(game: Game) -> None:
    """Check a user's game against the contract before any game is played: its values
    (:data:`VALUES`), its kernels' names (:data:`boopexp.engine.binding.REQUIRED`), and one seeded
    random game played through its kernels, every move its own generator lists legal and in range,
    every outcome, H and f of the contract's form (docs/games.md).

    Raises:
        ConfigError: one line naming the game and what breaks the contract.
    """
    where = f"game {game.name!r}"
    missing = [key for key in VALUES if not hasattr(game.values, key)]
    if missing:
        raise ConfigError(f"{where}: its values lack {', '.join(missing)} (docs/games.md, 'The contract')")
    name = game.values.NAME
    if not isinstance(name, str) or name in GAMES or not name.replace("-", "_").isidentifier():
        raise ConfigError(f"{where}: NAME = {name!r} must be a name of letters, digits, '-' or '_' that is not a "
                          f"built-in game's ({', '.join(GAMES)})")
    sides = getattr(game.values, "SIDE_NAMES", DEFAULT_SIDE_NAMES)
    if not (isinstance(sides, (tuple, list)) and len(sides) == 2 and all(_is_word(n) for n in sides)
            and sides[0].lower() != sides[1].lower()):
        raise ConfigError(f"{where}: SIDE_NAMES = {sides!r} must be two different words of ASCII letters or digits "
                          "(p1's first, e.g. ('white', 'black'); docs/games.md, 'Values')")
    taken = [game.side_name(c, capital=True) for c in (Colour.BLUE, Colour.RED)]
    if any(h in EXPORT_HEADERS for h in taken):
        raise ConfigError(f"{where}: SIDE_NAMES = {sides!r} would name a player's export header "
                          f"{', '.join(h for h in taken if h in EXPORT_HEADERS)}, which the export format has "
                          f"already ({', '.join(EXPORT_HEADERS)}); choose other names")
    from boopexp.engine import binding
    from boopexp.engine.outcome import DRAW

    try:
        kernels = game.kernels()
    except BaseException as exc:  # noqa: BLE001 - the user's kernels failed to import: say why
        raise ConfigError(f"{where}: importing its kernels {game.values.KERNELS!r} raised "
                          f"{exception_line(exc)}") from None
    missing = binding.missing_names(kernels)
    if missing:
        raise ConfigError(f"{where}: its kernels {kernels.__name__} lack {', '.join(missing)} "
                          "(docs/games.md, 'The contract')")
    rng = np.random.default_rng(0)
    kernel = "initial_state"
    try:
        st = np.asarray(game.initial_state(0), dtype=kernels.STATE_DTYPE)
        work = kernels.new_work()
        words = np.arange(1, 5, dtype=np.uint64)
        codes = np.zeros(kernels.N_MOVE_CODES, dtype=np.int64)
        for ply in range(1, 1001):
            kernel = "legal_move_codes"
            n = int(kernels.legal_move_codes(st, codes))
            legal = [int(c) for c in codes[:n]]
            if not 0 < n <= kernels.N_MOVE_CODES or len(set(legal)) != n or not all(
                    0 <= c < kernels.N_MOVE_CODES for c in legal):
                raise ConfigError(f"{where}: legal_move_codes gave {legal} at ply {ply} of a game not over: "
                                  f"1 to {kernels.N_MOVE_CODES} distinct codes in 0..{kernels.N_MOVE_CODES - 1}")
            kernel = "heuristic"
            _in_range(where, kernel, kernels.heuristic(st, int(st[kernels.TO_MOVE])))
            code = legal[int(rng.integers(n))]
            kernel = "objective"
            _in_range(where, kernel, kernels.objective(st, code, words, work))
            kernel = "apply_move"
            mover = int(st[kernels.TO_MOVE])
            outcome, _ = kernels.apply_move(st, code, words, work)
            if outcome not in (0, -1, 1, DRAW) or int(st[kernels.TO_MOVE]) != -mover:
                raise ConfigError(f"{where}: apply_move gave the outcome {outcome!r} and the side to move "
                                  f"{int(st[kernels.TO_MOVE])} after {mover}'s move: an outcome is 0, -1, 1 or "
                                  f"{DRAW} (a draw), and the side to move flips")
            if outcome != 0:
                return
    except ConfigError:
        raise
    except BaseException as exc:  # noqa: BLE001 - a kernel of the user's game raised: say which
        raise ConfigError(f"{where}: its kernel {kernel} raised {exception_line(exc)}") from None
    raise ConfigError(f"{where}: a random game did not end in 1,000 plies (apply_move never gave an outcome)")


def _is_word(name: Any) -> bool:
    """A side's name: a word of ASCII letters or digits that starts with a letter (an export's header key)."""
    return isinstance(name, str) and name.isascii() and name.isalnum() and name[:1].isalpha()


def _in_range(where: str, kernel: str, value: Any) -> None:
    """Refuse a value of H or f that is not a number in [-1, 1]."""
    if not (isinstance(value, (float, int, np.floating, np.integer)) and -1.0 <= float(value) <= 1.0):
        raise ConfigError(f"{where}: {kernel} gave {value!r}: H and f are numbers in [-1, 1]")
