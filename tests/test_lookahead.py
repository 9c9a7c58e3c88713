"""The two-stage CO constraint (boopexp/lookahead.py) against brute force.

Brute force: for every legal move, play it with the engine (``rules.apply_move``, REAL, the
promotion heuristic on a copy of the same generator), then play every reply of the opponent
with the engine and see whether it wins. A plain double loop in Python, sharing nothing with
the kernel but the rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from boopexp import rules
from boopexp.game import Position
from boopexp.lookahead import N_LEGAL, N_REPLIES, N_UNSAFE, LookaheadWork, safe_mask, winning_reply
from boopexp.notation import parse_position, parse_square
from boopexp.rng import new_rng_state
from boopexp.state import N_MOVE_CODES, N_SQUARES, TO_MOVE


def _codes(st) -> list[int]:
    out = np.empty(N_MOVE_CODES, dtype=np.int64)
    n = rules.legal_move_codes(st, out)
    return [int(c) for c in out[:n]]


def brute_unsafe(st, rng, mask=None) -> set[int]:
    """The moves after which the opponent has a reply that wins at once (engine moves only)."""
    mover = int(st[TO_MOVE])
    unsafe = set()
    for code in _codes(st):
        if mask is not None and mask[code]:
            continue
        size, sq = code // N_SQUARES + 1, code % N_SQUARES
        after, winner, _, _ = rules.apply_move(st, size, sq, rules.REAL, rules.PROMO_HEURISTIC, rng.copy())
        if winner == mover:
            continue
        for reply in _codes(after):
            _, w, _, _ = rules.apply_move(after, reply // N_SQUARES + 1, reply % N_SQUARES, rules.REAL,
                                          rules.PROMO_HEURISTIC, rng.copy())
            if w == -mover:
                unsafe.add(code)
                break
    return unsafe


def expected_mask(st, rng, mask=None) -> np.ndarray:
    mask = np.zeros(N_MOVE_CODES, dtype=np.bool_) if mask is None else mask
    legal = [c for c in _codes(st) if not mask[c]]
    unsafe = brute_unsafe(st, rng, mask)
    out = mask.copy()
    if len(unsafe) < len(legal):  # some move is safe: the unsafe ones are excluded
        for c in unsafe:
            out[c] = True
    return out


def code_of(text: str) -> int:
    sq = parse_square(text.lower())
    return (36 if text[0].isupper() else 0) + sq


RNG = new_rng_state(7)

# Red has larges on a6 and b6 and two in its pool: a large on c6 wins it the game. Blue can block
# c6, or push b6 off the board with its large from b5; most Blue moves ignore the threat.
THREAT = "RR..../b...../....../....../....../.b.... 5,1 4,2 b"
# Red larges on b6 and c6 threaten a6 and d6; Blue only has smalls, which cannot push a large:
# one piece blocks one square, every move loses.
LOST = ".RR.../....../b...../....../....../.b.... 6,0 4,2 b"


def test_hand_built_threat_only_safe_moves_remain():
    st = parse_position(THREAT)
    out, counts = safe_mask(st, rng=RNG)
    expected = expected_mask(st, RNG)
    assert (out == expected).all()
    assert counts[N_UNSAFE] > 0 and counts[N_UNSAFE] < counts[N_LEGAL]
    assert out[code_of("f1")]  # a small in the far corner does nothing about the threat
    allowed = [c for c in _codes(st) if not out[c]]
    # Every allowed move leaves Red without a winning reply (checked move by move).
    for c in allowed:
        after, winner, _, _ = rules.apply_move(st, c // 36 + 1, c % 36, rules.REAL, rules.PROMO_HEURISTIC, RNG.copy())
        assert winner == -1 or winning_reply(after, after.copy())[0] < 0


def test_hand_built_every_move_loses_then_the_mask_is_unchanged():
    st = parse_position(LOST)
    mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
    mask[code_of("a1")] = True  # a caller's own exclusions are kept
    out, counts = safe_mask(st, mask=mask, rng=RNG)
    assert counts[N_UNSAFE] == counts[N_LEGAL] == len(_codes(st)) - 1
    assert (out == mask).all()
    assert brute_unsafe(st, RNG, mask) == {c for c in _codes(st) if not mask[c]}


def test_a_move_that_wins_at_once_is_safe():
    # Blue has larges on a1 and b1 and one in the pool: C1 wins at once, whatever Red could reply.
    st = parse_position(".RR.../....../....../....../....../BB.... 5,1 4,2 b 3,4 10")
    out, counts = safe_mask(st, rng=RNG)
    assert not out[code_of("C1")]
    assert (out == expected_mask(st, RNG)).all()


def test_winning_reply_finds_the_win_and_counts_replies():
    st = parse_position(THREAT.replace(" b", " r"))  # Red to move: it can win at once
    buf = st.copy()
    code, tested = winning_reply(st, buf)
    assert code == code_of("C6")
    assert 1 <= tested <= len(_codes(st))
    quiet = Position.initial().state
    assert winning_reply(quiet, quiet.copy()) == (-1, len(_codes(quiet)))


def test_the_callers_generator_is_not_advanced():
    st = parse_position(THREAT)
    rng = new_rng_state(3)
    before = rng.copy()
    safe_mask(st, rng=rng)
    assert (rng == before).all()


def _random_positions(n: int, seed: int) -> list[np.ndarray]:
    """Positions from seeded games where each side plays the solver's move or a random one."""
    gen = np.random.default_rng(seed)
    rng = new_rng_state(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        pos = Position.initial()
        for ply in range(120):
            if ply >= 8 and gen.random() < 0.3:
                out.append(np.array(pos.state))
            if gen.random() < 0.6:
                mv, _ = pos.best_move(rng=rng)
            else:
                moves = pos.legal_moves()
                mv = moves[int(gen.integers(len(moves)))]
            res = pos.play(mv, rng=rng)
            if res.winner is not None or len(out) >= n:
                break
            pos = res.position
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_random_positions_against_brute_force(seed):
    positions = _random_positions(40, seed)
    work = LookaheadWork()
    gen = np.random.default_rng(seed)
    some_unsafe = all_unsafe = 0
    for st in positions:
        rng = new_rng_state(int(gen.integers(2**32)))
        mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
        if gen.random() < 0.3:  # sometimes a caller's mask (e.g. the border mask) is already set
            mask[gen.choice(N_MOVE_CODES, size=10, replace=False)] = True
        out, counts = safe_mask(st, mask=mask, rng=rng, work=work)
        assert (out == expected_mask(st, rng, mask)).all(), Position(st).to_string()
        assert counts[N_UNSAFE] == len(brute_unsafe(st, rng, mask))
        assert counts[N_REPLIES] >= counts[N_LEGAL] - counts[N_UNSAFE] - 1 or counts[N_LEGAL] == 0
        some_unsafe += 0 < counts[N_UNSAFE] < counts[N_LEGAL]
        all_unsafe += counts[N_UNSAFE] == counts[N_LEGAL] > 0
    assert some_unsafe >= 3  # the sample holds real threats, not only quiet positions
