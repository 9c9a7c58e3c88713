"""Settings hash and per-game seeds, the shard of a game (``Shard``, ``run --shard I/N``).

Game identity and seeds: a game is (settings hash, pairing, game index); its seed derives from it.

This module is the one home of a game's identity: the settings hash (:func:`settings_hash`, of
what :meth:`boopexp.play.settings.GameSettings.identity` covers), the pairing's name
(:func:`pairing_name`, :func:`pairing_agents`), the seed (:func:`game_seed`) and the key the
store, the runner and the readers find a game by (:data:`GameKey`, :func:`game_key`,
:func:`record_key`). A task is built from them by
:meth:`boopexp.play.settings.GameSettings.task`.

The settings hash covers everything that determines a game — the experiment seed, the budget, the
preset, both agents' resolved parameters, and the ply cap and start positions when set — and
nothing that does not (the experiment's name, the output folder, the number of workers). Two runs
whose settings coincide therefore share games, and a game can be replayed alone from its record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from boopexp import schema
from boopexp.errors import ConfigError

#: A game's identity: ``(config_hash, pairing, game_index)``, the key of a game in a store.
GameKey = tuple[str, str, int]

#: What separates the two agents of a pairing's name.
PAIRING_SEPARATOR = " vs "


#: The largest experiment seed: seeds are 64-bit (a larger one would alias or overflow elsewhere).
MAX_SEED = 2**64 - 1
#: The largest game index: the store's columns, the shards' and the tallies' arithmetic are 64-bit
#: (a record with a larger one is not a game: :func:`boopexp.experiments.store.check_record`).
MAX_GAME_INDEX = 2**63 - 1


def check_seed(seed: Any, where: str = "seed") -> int:
    """``seed`` if it is an integer in 0..2^64-1: the one check of a config's ``seed:`` and of
    the ``--seed`` options.

    Raises:
        ConfigError: ``"<where> = <value> must be an integer from 0 to 2^64-1"``.
    """
    return schema.integer(seed, where, 0, MAX_SEED, want=f"an integer from 0 to 2^64-1 ({MAX_SEED})")


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no spaces: the byte string that hashes are taken of."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def settings_hash(settings: Mapping[str, Any], p1: Mapping[str, Any], p2: Mapping[str, Any]) -> str:
    """16 hex digits identifying the settings of one pairing (p1 = Blue, moves first): the
    settings as :meth:`boopexp.play.settings.GameSettings.identity` writes them (the seed, the
    budget, the preset, and the ply cap and openings only when set) and both agents' dicts."""
    payload = {**settings, "p1": dict(p1), "p2": dict(p2)}
    return hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()[:16]


def game_seed(config_hash: str, game_index: int) -> int:
    """The 63-bit seed of one game, from SeedSequence(settings hash, game index)."""
    ss = np.random.SeedSequence([int(config_hash, 16), int(game_index)])
    lo, hi = ss.generate_state(2, dtype=np.uint32)
    return int((int(hi) << 32 | int(lo)) & 0x7FFF_FFFF_FFFF_FFFF)


def pairing_name(p1: str, p2: str) -> str:
    """The pairing string of a game: ``"<p1> vs <p2>"`` (p1 = Blue, moves first)."""
    return f"{p1}{PAIRING_SEPARATOR}{p2}"


def pairing_agents(pairing: str) -> tuple[str, str]:
    """The two agent names of a pairing string (the inverse of :func:`pairing_name`).

    Raises:
        ValueError: ``pairing`` is not of the form ``"A vs B"``.
    """
    first, sep, second = pairing.partition(PAIRING_SEPARATOR) if isinstance(pairing, str) else ("", "", "")
    if not sep:
        raise ValueError(f"pairing {pairing!r} is not of the form 'A vs B'")
    return first, second


def game_key(config_hash: str, pairing: str, game_index: int) -> GameKey:
    """The identity of one game (the store's key)."""
    return (config_hash, pairing, game_index)


def record_key(record: Mapping[str, Any]) -> GameKey:
    """The identity ``(config_hash, pairing, game_index)`` of a game record."""
    return game_key(record["config_hash"], record["pairing"], record["game_index"])


#: The most shards a plan is dealt into (``--shard I/N``): far more than any cluster runs at
#: once, and small enough for every integer column that meets it.
MAX_SHARDS = 10**7


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based, as ``--shard I/N`` and Slurm's ``--array=1-N``): a
    deterministic 1/N of every plan, chosen by game identity alone.

    Game ``i`` of a pairing belongs to shard ``1 + (i + offset) mod N``, where ``offset`` is a
    stable hash of the pairing's ``(config_hash, pairing)`` (SHA-256, never Python's ``hash()``).
    So each pairing's games are dealt round-robin (every shard gets its share of every pairing,
    within one game), the offset spreads pairings of few games (a sweep of one game per point)
    over the shards, the shards of any N are disjoint and together the whole plan, and which
    shard holds a game depends neither on ``--jobs`` nor on the other pairings planned. A game's
    record does not depend on its shard: its seed comes from its identity (:func:`game_seed`).
    """

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, option: str = "--shard") -> Shard:
        """``"I/N"`` with 1 ≤ I ≤ N.

        Raises:
            ConfigError: one line naming the option, the value and what is allowed.
        """
        first, sep, second = str(text).partition("/")
        index, count = schema.decimal(first), schema.decimal(second)  # ASCII digits only: not '３/４'
        if not sep or index is None or count is None or count < 1:
            raise ConfigError(f"{option} {text}: expected I/N, shard I of N shards (N >= 1, I in 1..N), e.g. "
                              f"{option} 1/4 (with Slurm: {option} $SLURM_ARRAY_TASK_ID/4 and --array=1-4)")
        if count > MAX_SHARDS:  # before any int64 column meets it (the tallies count shards with numpy)
            raise ConfigError(f"{option} {text}: N must be at most {MAX_SHARDS} shards (a Slurm array has at "
                              "most its MaxArraySize jobs, 4000001 at the largest)")
        if not 1 <= index <= count:
            raise ConfigError(f"{option} {text}: I must be in 1..N (shard I of N, 1-based like "
                              f"sbatch --array=1-{count})")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def first_index(self, config_hash: str, pairing: str) -> int:
        """The smallest game index of pairing ``(config_hash, pairing)`` in this shard (then every
        ``count``-th)."""
        digest = hashlib.sha256(f"{config_hash}\n{pairing}".encode()).hexdigest()
        offset = int(digest[:16], 16) % self.count
        return (self.index - 1 - offset) % self.count

    def holds(self, config_hash: str, pairing: str, game_index: int) -> bool:
        """Whether game ``game_index`` of the pairing is this shard's."""
        return game_index % self.count == self.first_index(config_hash, pairing)

    def share(self, config_hash: str, pairing: str, games: int) -> int:
        """How many of a pairing's ``games`` (indices 0..games-1) this shard plays."""
        first = self.first_index(config_hash, pairing)
        return 0 if first >= games else (games - 1 - first) // self.count + 1

    def indices(self, config_hash: str, pairing: str, games: int) -> range:
        """The game indices of this shard among 0..games-1, in order."""
        return range(self.first_index(config_hash, pairing), games, self.count)

    def to_dict(self) -> dict[str, int]:
        """The ``shard:`` of a shard's config.yaml."""
        return {"index": self.index, "count": self.count}

    @classmethod
    def from_dict(cls, data: Any, source: str) -> Shard:
        """The ``shard:`` of a config.yaml.

        Raises:
            ConfigError: not ``{index: I, count: N}`` with 1 ≤ I ≤ N.
        """
        try:
            return cls.parse(f"{int(data['index'])}/{int(data['count'])}", f"{source}: shard")
        except (TypeError, KeyError, ValueError):
            raise ConfigError(f"{source}: shard = {data!r} must be {{index: I, count: N}} with 1 <= I <= N") from None
