"""Game identity and seeds: a game is (settings hash, pairing, game index); its seed derives from it.

The settings hash covers everything that determines a game — the experiment seed, the budget, the
preset and both agents' resolved parameters — and nothing that does not (the experiment's name,
the output folder, the number of workers). Two runs whose settings coincide therefore share games,
and a game can be replayed alone from its record.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import numpy as np

from boopexp.errors import ConfigError


#: The largest experiment seed: seeds are 64-bit (a larger one would alias or overflow elsewhere).
MAX_SEED = 2**64 - 1


def check_seed(seed: Any, where: str = "seed") -> int:
    """``seed`` if it is an integer in 0..2^64-1: the one check of a config's ``seed:`` and of
    the ``--seed`` options.

    Raises:
        ConfigError: ``"<where> = <value> must be an integer from 0 to 2^64-1"``.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        text = " ".join(repr(seed).split())
        text = text if len(text) <= 60 else text[:57] + "..."
        raise ConfigError(f"{where} = {text} must be an integer from 0 to 2^64-1 ({MAX_SEED})")
    return seed


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
