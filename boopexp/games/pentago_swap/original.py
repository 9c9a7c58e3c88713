"""The COMP 424 framework's behaviours that the search does not use but a faithful port keeps
(plain Python, no numba): its ``isLegal`` (QUIRK-PS2, QUIRK-PS3), its ``gameOver()`` that is true
one ply early (QUIRK-PS7), and the per-state ``java.util.Random(2019)`` of its random player
(QUIRK-PS9) (spec ../shared/spec/games/PENTAGO-SWAP.md §3, §6, §9).
"""

from __future__ import annotations

import numpy as np

from boopexp.games.pentago_swap.notation import cell
from boopexp.games.pentago_swap.state import BLACK, MOVE_NUMBER, N_CELLS, N_SWAPS, SIDE, TO_MOVE, WINNER

#: the seed every state object of the framework gives its own generator (QUIRK-PS9)
FRAMEWORK_SEED = 2019
#: the player ids of the original: White 0, Black 1
PLAYER_ID = {-1: 0, 1: 1}


def is_legal(st: np.ndarray, x: int, y: int, a: int, b: int, player: int) -> bool:
    """The original's ``isLegal``: two different quadrants in either order (QUIRK-PS2), a cell on
    the board, ``player`` (0 White, 1 Black) to move, the cell empty; nothing else, not even
    whether the game is over (QUIRK-PS3)."""
    return (a != b and 0 <= x < SIDE and 0 <= y < SIDE and player == PLAYER_ID[int(st[TO_MOVE])]
            and cell(st, x, y) == 0)


def game_over(st: np.ndarray) -> bool:
    """The original's public ``gameOver()``: ``turnNumber >= 17`` with Black to move, or a winner
    set. True one ply early (QUIRK-PS7): with 35 pieces and Black to move it holds while Black
    still has six moves and nobody has won; the server never asks it (it plays on to ply 36)."""
    turn_number = int(st[MOVE_NUMBER]) // 2
    return (turn_number >= N_CELLS // 2 - 1 and int(st[TO_MOVE]) == BLACK) or int(st[WINNER]) != 0


class JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator and its ``nextInt(bound)``,
    bit for bit (the framework's random player and the golden traces' move choice)."""

    _MULTIPLIER = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ self._MULTIPLIER) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULTIPLIER + 0xB) & self._MASK
        return self._seed >> (48 - bits)

    def next_int(self, bound: int) -> int:
        """A uniform int in [0, bound), as Java draws it for a ``bound`` that is not a power of two
        (rejection on the 31-bit draw); the framework's bounds, 6 x the empty cells, never are.

        Raises:
            ValueError: ``bound`` is a power of two (Java takes the top bits instead: not ported).
        """
        m = bound - 1
        if bound & m == 0:
            raise ValueError(f"JavaRandom.next_int({bound}): a power of two is not ported")
        u = self._next(31)
        r = u % bound
        while u - r + m >= 1 << 31:  # Java's int overflow: u - r + m < 0
            u = self._next(31)
            r = u % bound
        return r


def framework_random_move(st: np.ndarray, rng: JavaRandom) -> int:
    """The code of ``getRandomMove()``: ``moves.get(rand.nextInt(moves.size()))`` over the full
    move list (QUIRK-PS4). The framework makes a fresh ``JavaRandom(FRAMEWORK_SEED)`` in every state
    object, clones included (QUIRK-PS9): pass one per state object to reproduce it."""
    empty = [i for i in range(N_CELLS) if not cell(st, i // SIDE, i % SIDE)]
    k = rng.next_int(N_SWAPS * len(empty))
    i = empty[k // N_SWAPS]
    return N_SWAPS * i + k % N_SWAPS


__all__ = ["FRAMEWORK_SEED", "JavaRandom", "framework_random_move", "game_over", "is_legal"]
