"""**The** binder of the engine's templates to a game (:func:`bind`, :func:`game_of`): the search
kernels compiled once per game, each game's in numba's on-disk cache apart (docs/games.md).

The search kernels (:mod:`boopexp.engine.mcts`, with the generic parts of the contract in
:mod:`boopexp.engine.defaults`) are *templates*: their calls into the game go to module globals
(``apply_move``, ``legal_move_codes``, ``objective``, ``STATE_SIZE``, …) read from
:func:`game_of` when the module is executed. The modules themselves, imported as usual, are bound
to boop. (:mod:`boopexp.engine.boop_game`), so boop.'s engine is what it always was, cached where
it always was. :func:`bind` executes the same source files once more per other game, as the
modules ``boopexp.engine.<template>__<game>``, their globals that game's kernels.

Why not kernels passed as arguments or closures: numba then compiles in every new process (a
function argument's type, a closure's cells, do not survive in the cache's index). A second
module of the same source does compile once per game, but numba's cache index is keyed by the
source file and the function's qualified name, not by its globals: the second game would load
the first's machine code. :class:`GameCacheLocator` keeps each bound copy's cache in its own
folder (``game-<name>`` below the folder numba picks for the template, so ``NUMBA_CACHE_DIR`` and
the read-only fallbacks work as for every kernel) and stamps it with the template's source and
the game's kernels file: a copy is correct and, in a new process, loaded from the cache.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
from numba.core import caching

__all__ = ["bind", "game_of", "CONTRACT", "SEARCHES", "TEMPLATES", "GameCacheLocator", "work_fields", "zero_work"]

#: the templates: the contract's optional kernels, then the searches that call the game
TEMPLATES = ("defaults", "mcts", "alphabeta")
SEARCHES = TEMPLATES[1:]

#: the names a template reads from a game (docs/games.md, "The contract"): constants, then kernels;
#: a game's kernels module supplies the required ones, :mod:`boopexp.engine.defaults` the others
REQUIRED = ("STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "new_work",
            "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective")
OPTIONAL = ("random_move", "expansion_limit", "root_masked", "solve", "score_moves", "best_m_moves",
            "context_value", "lookahead_mask", "MAX_FOLLOWUPS", "hash_key", "is_legal", "place", "follow_up",
            "apply_move_unchecked")
CONTRACT = REQUIRED + OPTIONAL



def work_fields(state_size: int, state_dtype: Any, n_move_codes: int) -> tuple[tuple[str, int, Any], ...]:
    """**The** work buffers the search templates read from a game's ``Work`` (docs/games.md, "The
    contract"), each ``(name, length, dtype)``, for a game of ``state_size`` cells of
    ``state_dtype`` and ``n_move_codes`` move codes. A game's kernels module makes its own named
    tuple of them (numba's cache names the module a type is defined in), and may add fields of its
    own: ``Work = namedtuple("Work", [name for name, _, _ in FIELDS])``, ``new_work = lambda:
    zero_work(Work, FIELDS)``."""
    return (
        ("playout", state_size, state_dtype),  # the state a playout is played on
        ("mask", n_move_codes, np.bool_),  # banned move codes (all False between uses)
        ("la_mask", n_move_codes, np.bool_),  # the caller's mask plus the unsafe moves (two-stage check)
        ("codes", n_move_codes, np.int64),  # legal move codes
        ("values", n_move_codes, np.float64),  # f of each of those moves
        ("best", n_move_codes, np.int64),  # tied nodes of an argmax
        ("tie_moves", n_move_codes, np.int64),  # the optimal moves of a solver call
        ("path", n_move_codes, np.int64),  # the m best moves at the root
        ("la_after", state_size, state_dtype),  # the position after one of our moves (two-stage check)
        ("la_reply", state_size, state_dtype),  # after our move and one reply
        ("la_rng", 4, np.uint64),  # the generator copy of the check
        ("la_unsafe", n_move_codes, np.bool_),  # the moves that allow a winning reply
        ("la_counts", 3, np.int64),  # moves examined, unsafe moves, replies tested
        ("la_codes", n_move_codes, np.int64),  # our legal moves
        ("la_replies", n_move_codes, np.int64),  # the replies to one of them
    )


def zero_work(work_type: Any, fields: tuple[tuple[str, int, Any], ...]) -> Any:
    """A fresh ``work_type`` (a game's ``Work``) of ``fields`` (:func:`work_fields` and the game's
    own), every buffer zero (``mask`` and ``la_mask`` all False)."""
    return work_type(*(np.zeros(length, dtype=dtype) for _, length, dtype in fields))


#: a bound game's name -> the game's contract (its kernels, the defaults where it has none)
_CONTRACTS: dict[str, types.ModuleType] = {}

#: numba's cache locators, tried in order for each function (this module puts its own first)
_LOCATORS: list[Any] = caching.CacheImpl._locator_classes

#: bound module name -> (the game, a module of the contract's names, its code calls; the game's
#: kernels module)
_GAMES: dict[str, tuple[types.ModuleType, types.ModuleType]] = {}


def game_of(module_name: str) -> types.ModuleType:
    """The game a template module's code calls: for a copy :func:`bind` made, its game; for the
    template's own module (``boopexp.engine.mcts``), boop. (:mod:`boopexp.engine.boop_game`)."""
    bound = _GAMES.get(module_name)
    if bound is not None:
        return bound[0]
    return importlib.import_module("boopexp.engine.boop_game")


def missing_names(kernels: types.ModuleType) -> list[str]:
    """The required names of the contract (:data:`REQUIRED`) that ``kernels`` lacks, in order."""
    return [key for key in REQUIRED if not hasattr(kernels, key)]


def bind(name: str, kernels: types.ModuleType, template: str = "mcts") -> types.ModuleType:
    """The search template ``template`` (``mcts``: :mod:`boopexp.engine.mcts`; ``alphabeta``:
    :mod:`boopexp.engine.alphabeta`) bound to game ``name``'s ``kernels`` (a module of the
    contract's names, docs/games.md); made once per process, then the same module.

    Raises:
        ValueError: ``name`` is not a plain identifier, ``template`` not a search template, or
            ``kernels`` lacks a required name.
    """
    if not name.isidentifier():
        raise ValueError(f"game {name!r}: a bound game's name is a Python identifier (letters, digits, _)")
    if template not in SEARCHES:
        raise ValueError(f"template {template!r} is not a search template; allowed: {', '.join(SEARCHES)}")
    done = sys.modules.get(f"boopexp.engine.{template}__{name}")
    if done is not None:
        return done
    game = _CONTRACTS.get(name)
    if game is None:
        missing = missing_names(kernels)
        if missing:
            raise ValueError(f"game {name!r}: its kernels module {kernels.__name__} lacks {', '.join(missing)} "
                             f"(docs/games.md, 'The contract')")
        defaults = _load("defaults", name, kernels, kernels)
        game = types.ModuleType(f"{kernels.__name__} (contract)")
        for key in CONTRACT:
            setattr(game, key, getattr(kernels, key) if hasattr(kernels, key) else getattr(defaults, key))
        _CONTRACTS[name] = game
    return _load(template, name, game, kernels)


def _load(template: str, name: str, game: types.ModuleType, kernels: types.ModuleType) -> types.ModuleType:
    """Execute ``engine/<template>.py`` as ``boopexp.engine.<template>__<name>``, bound to ``game``."""
    module_name = f"boopexp.engine.{template}__{name}"
    spec = importlib.util.spec_from_file_location(module_name, Path(__file__).with_name(f"{template}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    _GAMES[module_name] = game, kernels
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name], _GAMES[module_name]
        raise
    return module


class GameCacheLocator(caching._CacheLocator):
    """numba's cache locator of a bound copy's kernels: numba's own choice of folder for the
    template's file, plus ``game-<name>--<kernels module>``; the source stamp: the template's and
    the game's kernels file's (module docstring). The kernels module's name is in the folder's
    because numba's index pickles the types of a kernel's arguments (a game's ``Work``), which
    name their module: the same game loaded under another module name has its own entries."""

    def __init__(self, base: caching._CacheLocator, name: str, kernels: types.ModuleType) -> None:
        self._base = base
        self._path = os.path.join(base.get_cache_path(), f"game-{name}--{kernels.__name__}")
        self._kernels_file = str(kernels.__file__)

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self):
        stat = os.stat(self._kernels_file)
        return self._base.get_source_stamp(), caching._hash_source_file(self._kernels_file, stat.st_mtime,
                                                                        stat.st_size)

    def get_disambiguator(self) -> str:
        return self._base.get_disambiguator()

    @classmethod
    def from_function(cls, py_func, py_file):
        bound = _GAMES.get(py_func.__module__)
        if bound is None:
            return None
        name = py_func.__module__.rpartition("__")[2]
        for other in _LOCATORS:
            if other is cls:
                continue
            base = other.from_function(py_func, py_file)
            if base is not None:
                self = cls(base, name, bound[1])
                try:
                    self.ensure_cache_path()
                except OSError:
                    continue
                return self
        return None


if GameCacheLocator not in _LOCATORS:
    _LOCATORS.insert(0, GameCacheLocator)
