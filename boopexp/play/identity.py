"""Game identity and seeds: a game is (settings hash, pairing, game index); its seed derives from it.

This module is the one home of a game's identity: the settings hash (:func:`settings_hash`,
:func:`pairing_hash`), the pairing's name (:func:`pairing_name`, :func:`pairing_agents`), the
seed (:func:`game_seed`) and the key the store, the runner and the readers find a game by
(:data:`GameKey`, :func:`game_key`, :func:`record_key`). A task is built from them by
:meth:`boopexp.play.contract.GameTask.new`.

The settings hash covers everything that determines a game — the experiment seed, the budget, the
preset and both agents' resolved parameters — and nothing that does not (the experiment's name,
the output folder, the number of workers). Two runs whose settings coincide therefore share games,
and a game can be replayed alone from its record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from boopexp import schema

if TYPE_CHECKING:
    from boopexp.agents.budget import Budget
    from boopexp.agents.specs import AgentSpec

#: A game's identity: ``(config_hash, pairing, game_index)``, the key of a game in a store.
GameKey = tuple[str, str, int]

#: What separates the two agents of a pairing's name.
PAIRING_SEPARATOR = " vs "


#: The largest experiment seed: seeds are 64-bit (a larger one would alias or overflow elsewhere).
MAX_SEED = 2**64 - 1


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


def settings_hash(
    seed: int, budget: Mapping[str, Any], preset: str, p1: Mapping[str, Any], p2: Mapping[str, Any],
    max_plies: int | None = None,
) -> str:
    """16 hex digits identifying the settings of one pairing (p1 = Blue, moves first).

    ``max_plies`` (a ply cap other than the default) is hashed only when given, so the hashes of
    every pairing with the default cap are the ones they always were.
    """
    payload = {"seed": int(seed), "budget": dict(budget), "preset": preset, "p1": dict(p1), "p2": dict(p2)}
    if max_plies is not None:
        payload["max_plies"] = int(max_plies)
    return hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()[:16]


def game_seed(config_hash: str, game_index: int) -> int:
    """The 63-bit seed of one game, from SeedSequence(settings hash, game index)."""
    ss = np.random.SeedSequence([int(config_hash, 16), int(game_index)])
    lo, hi = ss.generate_state(2, dtype=np.uint32)
    return int((int(hi) << 32 | int(lo)) & 0x7FFF_FFFF_FFFF_FFFF)


def pairing_hash(seed: int, budget: Budget, preset: str, p1: AgentSpec, p2: AgentSpec,
                 max_plies: int | None = None) -> str:
    """The settings hash of the pairing ``p1 vs p2`` (resolved agents) under these settings."""
    return settings_hash(seed, budget.to_dict(), preset, p1.to_dict(), p2.to_dict(), max_plies)


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
