"""A game's settings as one value: ``GameSettings`` (experiment, seed, budget, preset, ply cap,
openings; a setting declared with ``optional_setting`` is hashed only when not its default), which
names a pairing (``pairing_hash``) and builds **every** game's task (``task``): the config's,
``game``'s, a session's, the calibration's and the openings' reference games.

What every game of a pairing is played with — the experiment's name, the seed, the budget, the
agents' preset, the ply cap and the start positions — travels as one frozen value (python-chess's
``chess.engine.Limit``; mctx's ``chex.dataclass``): an experiment config holds one
(:attr:`boopexp.experiments.config.ExperimentConfig.settings`), ``boopexp game``, ``play``,
``serve``'s /play, the calibration and the openings' reference games build one, and every task is
made by :meth:`GameSettings.task`. Engine-free, like the config and the contract.

The settings hash (:func:`boopexp.play.identity.settings_hash`) covers :meth:`GameSettings.identity`:
every field but the experiment's name, where a field declared with :func:`optional_setting` (the ply
cap, the openings) enters only when it differs from its default. A new setting declared that way
(a ``game:`` whose default is boop.) leaves the hash of every config without it as it always was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from boopexp.agents.budget import Budget
from boopexp.agents.specs import DEFAULT_PRESET, AgentSpec
from boopexp.games import registry
from boopexp.games.registry import DEFAULT_GAME, GameOptions, options_json
from boopexp.play.contract import GameTask
from boopexp.play.identity import settings_hash
from boopexp.play.openings import Draw, Openings

__all__ = ["GameSettings", "optional_setting"]

#: A setting's metadata: whether it is hashed (``"hashed"``), only when not its default
#: (``"optional"``), and how it is written as JSON (``"json"``: the hash's and the web's form).
_HASHED, _OPTIONAL, _JSON = "hashed", "optional", "json"


def _plain(value: Any) -> Any:
    return value


def optional_setting(default: Any, json: Callable[[Any], Any] = _plain) -> Any:
    """A setting hashed only when it differs from ``default`` (the hashes of every game played
    before it was a setting stay the ones they were); ``json`` writes a value other than None."""
    return field(default=default, metadata={_OPTIONAL: True, _JSON: json})


@dataclass(frozen=True)
class GameSettings:
    """What every game of a pairing is played with (p1 = Blue moves first).

    Attributes:
        experiment: the name written in each game's record (a config's name, ``game``, ``play``);
            not part of the settings hash.
        seed: the experiment seed, 0..2^64-1; a game's seed derives from the pairing's settings
            hash and the game's index (:func:`boopexp.play.identity.game_seed`).
        budget: the thinking budget of every agent.
        preset: the preset the agents are resolved under (``code-0.6.2`` or ``paper``).
        max_plies: the ply cap (None: :data:`boopexp.play.contract.MAX_PLIES`); hashed and
            recorded only when set.
        openings: the start positions (docs/openings.md): game pair ``i`` starts from position
            ``i``; None: the empty board. Hashed (its identity) only when set.
        game: the game played (:mod:`boopexp.games`, docs/games.md); hashed and recorded only
            when not boop.
        game_options: the game's options (a config's ``game: {name: colosseum, board_size: 8}``,
            :meth:`boopexp.games.registry.Game.check_options`); hashed and recorded only when set.
    """

    experiment: str = field(metadata={_HASHED: False})
    seed: int = field(default=0, metadata={_JSON: int})
    budget: Budget = field(default_factory=Budget, metadata={_JSON: Budget.to_dict})
    preset: str = DEFAULT_PRESET
    max_plies: int | None = optional_setting(None, int)
    openings: Openings | None = optional_setting(None, Openings.identity)
    game: str = optional_setting(DEFAULT_GAME)
    game_options: GameOptions = optional_setting((), options_json)

    def to_dict(self) -> dict[str, Any]:
        """Every setting but the experiment's name, as JSON values (``serve``'s /api/opponents)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.metadata.get(_HASHED, True):
                value = getattr(self, f.name)
                out[f.name] = None if value is None else f.metadata.get(_JSON, _plain)(value)
        return out

    def identity(self) -> dict[str, Any]:
        """What the settings hash covers besides the agents: :meth:`to_dict` without the optional
        settings left at their defaults."""
        defaults = {f.name: f.default for f in dataclasses.fields(self) if f.metadata.get(_OPTIONAL)}
        values = self.to_dict()
        return {name: value for name, value in values.items()
                if name not in defaults or getattr(self, name) != defaults[name]}

    def pairing_hash(self, p1: AgentSpec, p2: AgentSpec) -> str:
        """The settings hash of the pairing ``p1 vs p2`` (resolved agents) under these settings."""
        return settings_hash(self.identity(), p1.to_dict(), p2.to_dict())

    def start(self, game_index: int) -> str | Draw | None:
        """Where game ``game_index`` of any pairing starts: game pair ``i`` starts from position
        ``i`` of the openings (a suite's line, or the :class:`Draw` the game's worker resolves),
        game pair ``i``'s board (``paired_boards``: the same in both seatings), or None: the empty
        board (a game with a random start: its own seed draws it in its worker).

        Raises:
            ConfigError: a file suite with no position for the game.
        """
        if self.openings is not None:
            return self.openings.start(self.seed, game_index)
        if registry.Game.paired(self.game_options):  # paired boards: game pair i's, drawn here
            game = registry.get(self.game)
            return game.position_string(game.initial_state(registry.board_seed(self.seed, game_index),
                                                           self.game_options))
        return None

    def task(self, p1: AgentSpec, p2: AgentSpec, game_index: int, *, config_hash: str | None = None,
             sweep: tuple = (), start: str | Draw | None = None, seed: int | None = None) -> GameTask:
        """Game ``game_index`` of the pairing ``p1 vs p2`` under these settings.

        Args:
            config_hash: the pairing's settings hash when the caller holds it (a planned pairing
                computes it once for all its games), or the key that stands in for it (the
                openings' reference games, seeded by the draw's stream); None: :meth:`pairing_hash`.
            sweep: the sweep point the game belongs to (recorded, not hashed).
            start: the game's start as the caller resolved it (a session's checked position);
                None: :meth:`start` of ``game_index``.
            seed: the game's seed, for games seeded by hand outside any store (the calibration's
                fixed games); None: the seed of its identity (settings hash, game index).
        """
        chash = self.pairing_hash(p1, p2) if config_hash is None else config_hash
        task = GameTask.new(self.experiment, chash, p1, p2, game_index, self.budget, self.preset, self.max_plies,
                            sweep, self.start(game_index) if start is None else start, self.game, self.game_options,
                            None if self.game == DEFAULT_GAME else registry.get(self.game).directory)
        return task if seed is None else dataclasses.replace(task, seed=seed)

    def replace(self, **changes: Any) -> GameSettings:
        """A copy with ``changes`` (an option typed over a config's settings)."""
        return dataclasses.replace(self, **changes)
