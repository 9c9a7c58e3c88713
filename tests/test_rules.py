"""The rules (RULES.md): every worked example of §11, the TREE/SIM divergences of §10, the
promotion choice and the errors of illegal or malformed moves.

Positions are written as one-line position strings (boopexp.game.notation): rows rank 6..1, then
Blue's pool and Red's pool as ``smalls,larges`` (the spec writes ``{large, small}``), the side
to move, and optionally the large counters ``L_blue,L_red`` and the ply.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from engine_helpers import ref_line

from boopexp.engine.heuristic import heuristic_raw
from boopexp.errors import BoopError, IllegalMoveError, InvalidMoveError
from boopexp.game.notation import parse_square
from boopexp.game.position import Move, Position


def sq(*names: str) -> tuple[int, ...]:
    return tuple(parse_square(n) for n in names)


def play(before: str, move: str, variant: str = "REAL", **kw):
    return Position.from_string(before).play(move, variant=variant, **kw)


# --------------------------------------------------------------------------------------------
# RULES.md §11, REAL unless noted: (before, move, after, winner, candidate groups, chosen index)
EXAMPLES = {
    # Example 1 (paper Fig. 2a): b2 slides to a1; own d4 blocked by e5.
    "ex1_push_and_block": (
        "....../....r./...b../....../.r..../...... 7,0 6,0 b",
        "c3",
        "....../....r./...b../..b.../....../r..... 6,0 6,0 r 0,0 1",
        None, (), None,
    ),
    # Example 2: a small cannot push the large on c4; d3 slides to e3. Red L = 1.
    "ex2_small_cannot_push_large": (
        "....../....../..R.../...r../....../...... 8,0 6,0 b",
        "c3",
        "....../....../..R.../..b.r./....../...... 7,0 6,0 r 0,1 1",
        None, (), None,
    ),
    # Example 2, second reading: a large on c3 pushes c4 up to c5.
    "ex2_large_pushes_large": (
        "....../....../..R.../...r../....../...... 7,1 6,0 b",
        "C3",
        "....../..R.../....../..B.r./....../...... 7,0 6,0 r 1,1 1",
        None, (), None,
    ),
    # Example 3: R a6 and r a5 ejected with their sizes, own c5 slides to d5, b4 blocked by b3.
    "ex3_ejections_keep_size": (
        "R...../r.b.../.r..../.b..../....../...... 5,1 4,1 b",
        "B5",
        "....../.B.b../.r..../.b..../....../...... 5,0 5,2 r 1,2 1",
        None, (), None,
    ),
    # Example 4: a single line of three smalls is promoted automatically; L_Blue = 3.
    "ex4_single_line_promoted": (
        "....../....../..bb../....../....../...... 6,0 8,0 b",
        "e4",
        "....../....../....../....../....../...... 5,3 8,0 r 3,0 1",
        None, (sq("c4", "d4", "e4"),), 0,
    ),
    # Example 5: four in a row, G0 (score 4) beats G1 (score 3); d4 stays.
    "ex5_four_in_a_row": (
        "....../....../bb.br./....../....../...... 5,0 7,0 b",
        "c4",
        "....../....../...br./....../....../...... 4,3 7,0 r 3,0 1",
        None, (sq("a4", "b4", "c4"), sq("b4", "c4", "d4")), 0,
    ),
    # Example 6: three larges in a row win at once; the line stays; no promotion step.
    "ex6_three_large_win": (
        "....../....../..bb../....../....../BB.... 3,1 8,0 b",
        "C1",
        "....../....../..bb../....../....../BBB... 3,0 8,0 r 3,0 1",
        "blue", (), None,
    ),
    # Example 7 (REAL): Blue pushes d5 to c6 and completes RED's line: nobody wins yet.
    "ex7_push_opponent_into_line_real": (
        "RR..../...R../....../....../....../...... 7,1 5,0 b",
        "E4",
        "RRR.../....../....B./....../....../...... 7,0 5,0 r 1,3 1",
        None, (), None,
    ),
    # Example 9: V2, Blue's last piece is a large and all 8 are large on the board.
    "ex9_all_large_v2": (
        "....../.BB.../....../..B.B./.B..B./...B.. 0,1 8,0 b",
        "C4",
        "B.B.../....../..B.../....B./.BB.B./...B.. 0,0 8,0 r 8,0 1",
        "blue", (), None,
    ),
    # Example 10: Red's mixed line c4-c3-c2: the small is promoted, both larges come back.
    "ex10_mixed_line": (
        "....../....../..r.../..Rb../....../...... 7,0 5,1 r",
        "C2",
        "....../....../....b./....../....../...... 7,0 5,3 b 0,3 1",
        None, (sq("c4", "c3", "c2"),), 0,
    ),
    # Example 11: a small on the ring pushed outward by a small is ejected.
    "ex11_ring_small_ejected": (
        "....../....../....../r...../....../...... 8,0 7,0 b",
        "b3",
        "....../....../....../.b..../....../...... 7,0 8,0 r 0,0 1",
        None, (), None,
    ),
    # Example 11: a large next to the placed large, with a piece two squares away, stays put.
    "ex11_large_blocked": (
        "....../....../....../...Rr./....../...... 7,1 6,0 b",
        "C3",
        "....../....../....../..BRr./....../...... 7,0 6,0 r 1,1 1",
        None, (), None,
    ),
    # A large on the ring pushed outward by a large is ejected as a large (no change of L).
    "ex11_large_ejected_as_large": (
        "....../....../....../R...../....../...... 7,1 7,0 b",
        "B3",
        "....../....../....../.B..../....../...... 7,0 7,1 r 1,1 1",
        None, (), None,
    ),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_worked_example(name):
    before, move, after, winner, groups, chosen = EXAMPLES[name]
    res = play(before, move, rng=0)
    assert res.position.to_string() == after
    assert res.winner == winner
    assert res.groups == groups
    assert res.chosen == chosen


def test_example1_details_pools_and_counters():
    res = play("....../....r./...b../....../.r..../...... 7,0 6,0 b", "c3")
    p = res.position
    assert p.pool("blue") == (6, 0) and p.pool("red") == (6, 0)
    assert p.grid[parse_square("a1")] == 1 and p.grid[parse_square("b2")] == 0
    assert p.grid[parse_square("d4")] == -1  # own piece blocked by e5
    assert p.to_move == "red" and p.move_number == 1


def test_example3_ejection_returns_sizes_and_keeps_L():
    res = play("R...../r.b.../.r..../.b..../....../...... 5,1 4,1 b", "B5")
    p = res.position
    assert p.pool("red") == (5, 2)  # +1 large (a6) +1 small (a5)
    assert p.large_counter("red") == 2 and p.large_counter("blue") == 1


def test_example6_win_skips_promotion_even_with_candidates():
    # REAL: the winning all-large line is a candidate in the app's list but never applied.
    p = Position.from_string("....../....../..bb../....../....../BB.... 3,1 8,0 b")
    res = p.play("C1")
    assert res.winner == "blue" and res.chosen is None
    assert res.position.grid[30:33] == (-2, -2, -2)
    after = res.position
    assert after.candidate_groups("blue") == [sq("a1", "b1", "c1")]
    assert after.candidate_groups("blue", exclude_all_large=True) == []


# --------------------------------------------------------------------------------------------
# Example 7 under the three variants; TREE precedence of Blue (RULES.md §10.1)

EX7 = "RR..../...R../....../....../....../...... 7,1 5,0 b"


def test_example7_tree_detects_opponent_victory():
    res = play(EX7, "E4", variant="TREE")
    assert res.winner == "red"
    assert res.chosen is None
    assert res.position.to_string().startswith("RRR.../....../....B./")


def test_example7_sim_no_victory_and_minus_800_pattern():
    p = Position.from_string(EX7)
    res = p.play("E4", variant="SIM")
    assert res.winner is None
    after = res.position
    assert after.to_move == "blue"  # SIM does not switch the side to move
    # the red three-large line is only seen through the heuristic: LINE = -800 exactly,
    # MAT(Blue) = 25*(1-3) + 9*(1-3) + 3*(3-0) = -59, so raw -859 -> saturated -1.0
    assert ref_line(after.grid, -1, False, False) == -800
    assert heuristic_raw(after.state, -1) == -859
    assert after.heuristic("blue") == -1.0
    assert p.objective("E4", rng=0) == after.heuristic("blue")


def test_example7_real_red_wins_next_turn_if_line_intact_and_not_if_broken():
    # as Example 7, but Red keeps a large in its pool (L_Red = 4)
    after = play("RR..../...R../....../....../....../...... 7,1 4,1 b", "E4").position
    # any Red placement that leaves a6-b6-c6 intact wins (victory checked after Red's push)
    assert after.play("f1").winner == "red"
    # a Red large on b5 ejects a6 (and c6): the line is broken, no win
    res = after.play("B5")
    assert res.winner is None
    assert not res.position.has_won("red")


BOTH_WIN = "RR..../...B../..BB../....../....../...... 5,0 5,1 r"


@pytest.mark.parametrize("variant, winner", [("REAL", "red"), ("TREE", "blue"), ("SIM", None)])
def test_both_colours_win_precedence(variant, winner):
    # Red's large on c6 completes a6-b6-c6 and pushes Blue's d5 to e4, completing c4-d4-e4.
    res = play(BOTH_WIN, "C6", variant=variant)
    after = res.position
    assert after.has_won("red") and after.has_won("blue")
    assert res.winner == winner


def test_tree_mover_only_win_is_mover():
    res = play("....../....../..bb../....../....../BB.... 3,1 8,0 b", "C1", variant="TREE")
    assert res.winner == "blue"


def test_sim_v2_is_invisible_and_removes_one_large():
    # QUIRK-H8: with 8 larges on the board and an empty pool SIM removes one large at random.
    res = play("....../.BB.../....../..B.B./.B..B./...B.. 0,1 8,0 b", "C4", variant="SIM", rng=3)
    assert res.winner is None
    assert len(res.groups) == 8 and all(len(g) == 1 for g in res.groups)
    assert res.position.pool("blue") == (0, 1)
    assert sum(1 for v in res.position.grid if v == -2) == 7


# --------------------------------------------------------------------------------------------
# Example 8: all eight pieces on the board, singleton candidates and a uniform tie-break

EX8 = "b...../....rr/..b.../...b.b/b...../..b.B. 1,0 6,0 b"
EX8_CANDIDATES = sq("a6", "d6", "c4", "d3", "f3", "a2", "c1", "e1")
EX8_BEST = set(sq("a6", "d6", "a2", "c1"))


def test_example8_candidates_and_choice():
    res = play(EX8, "d6", rng=11)
    assert res.groups == tuple((q,) for q in EX8_CANDIDATES)
    (removed,) = res.promoted
    assert removed in EX8_BEST
    p = res.position
    assert p.grid[removed] == 0
    assert p.grid[parse_square("f4")] == 1  # e5 slid to f4
    assert p.pool("blue") == (0, 1) and p.large_counter("blue") == 2


def test_example8_tie_break_uniform_over_seeds_and_reproducible():
    p = Position.from_string(EX8)
    picks = Counter(p.play("d6", rng=seed).promoted[0] for seed in range(400))
    assert set(picks) == EX8_BEST
    assert min(picks.values()) > 60  # ~100 each; far from a fixed choice
    for seed in (0, 1, 2, 12345):
        assert p.play("d6", rng=seed).position == p.play("d6", rng=seed).position


def test_random_promotion_policy_picks_among_all_candidates():
    p = Position.from_string(EX8)
    picks = Counter(p.play("d6", promotion="random", rng=seed).promoted[0] for seed in range(400))
    assert set(picks) == set(EX8_CANDIDATES)


def test_explicit_promotion_index_and_group_suffix():
    p = Position.from_string(EX8)
    for i, q in enumerate(EX8_CANDIDATES):
        res = p.play("d6", promotion=i)
        assert res.chosen == i and res.position.grid[q] == 0
    # Example 5: the ':group' suffix forces the non-heuristic G1 (b4 c4 d4)
    res = play("....../....../bb.br./....../....../...... 5,0 7,0 b", "c4:b4c4d4")
    assert res.chosen == 1
    assert res.position.to_string().startswith("....../....../b...r./")


def test_group_suffix_not_a_candidate_is_illegal():
    with pytest.raises(IllegalMoveError, match="d4e4f4"):
        play("....../....../bb.br./....../....../...... 5,0 7,0 b", "c4:d4e4f4")


# --------------------------------------------------------------------------------------------
# Illegal and malformed moves

START = "....../....../....../....../....../...... 8,0 8,0 b"


def test_occupied_square_is_illegal_and_quotes_input():
    p = Position.from_string("....../....../....../..b.../....../...... 7,0 8,0 r")
    with pytest.raises(IllegalMoveError, match="'c3'") as exc:
        p.play("c3")
    assert "occupied" in str(exc.value)
    with pytest.raises(IllegalMoveError):
        p.check_legal(Move(1, parse_square("c3")))


def test_size_not_in_pool_is_illegal_and_quotes_input():
    p = Position.from_string(START)
    with pytest.raises(IllegalMoveError, match="'C3'") as exc:
        p.play("C3")
    assert "large" in str(exc.value)
    # and a small when only larges are left
    q = Position.from_string("....../....../....../....../....../...... 0,8 8,0 b 8,0 0")
    with pytest.raises(IllegalMoveError, match="'a1'"):
        q.play("a1")
    assert q.play("A1").position.pool("blue") == (0, 7)


@pytest.mark.parametrize("text", ["g3", "c7", "c0", "", "cc", "c3x", "3c", "c3:", "c3:a4b4", "c3:z9", "c3 d4"])
def test_malformed_move_raises_invalid_move_error_quoting_input(text):
    p = Position.from_string(START)
    with pytest.raises(InvalidMoveError) as exc:
        p.play(text)
    assert repr(text) in str(exc.value)


def test_error_hierarchy():
    assert issubclass(IllegalMoveError, BoopError)
    assert issubclass(InvalidMoveError, BoopError)
    assert not issubclass(IllegalMoveError, InvalidMoveError)


def test_legal_moves_order_smalls_then_larges_row_major():
    p = Position.from_string("b...../....../....../....../....../.....r 6,1 7,0 b 1,0 0")
    moves = p.legal_moves()
    assert len(moves) == 2 * 34
    assert [m.code for m in moves] == sorted(m.code for m in moves)
    assert str(moves[0]) == "b6" and str(moves[34]) == "B6" and str(moves[-1]) == "E1"
    assert parse_square("a6") not in {m.square for m in moves}


def test_move_code_layout_has_one_definition():
    """state.encode_move/decode_move are the layout; rules' compiled twins and Move agree with
    them on every code, and no module of the package spells the layout out by hand again."""
    import re
    from pathlib import Path

    from boopexp.engine import rules, state

    for code in range(state.N_MOVE_CODES):
        size, square = state.decode_move(code)
        assert (size, square) == (1 + code // 36, code % 36)  # smalls first, squares row-major
        assert state.encode_move(size, square) == rules.encode_move(size, square) == code
        assert rules.decode_move(code) == (size, square)
        assert Move.from_code(code) == Move(size, square) and Move(size, square).code == code
    # code // 36, code % 36, (size - 1) * 36 + ... in code (prose in ``...`` and comments aside)
    by_hand = re.compile(r"(//|%)\s*(36|N_SQUARES)\b|1\)\s*\*\s*(36|N_SQUARES)\b")
    package = Path(rules.__file__).resolve().parent.parent
    found = [f"{p.relative_to(package)}:{i}" for p in sorted(package.rglob("*.py")) if p.name != "state.py"
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if by_hand.search(line.split("#")[0]) and "``" not in line]
    assert found == []


def test_state_fields_are_named_not_numbered():
    """st[37] or st[:36] in code reads as nothing: every field has its name in engine/state.py."""
    import re
    from pathlib import Path

    from boopexp.engine import rules

    numbered = re.compile(r"\b(st|s|_st|work|state)\[\s*:?\s*\d{2}|POOL_BASE_(BLUE|RED)\s*\+\s*1\b")
    package = Path(rules.__file__).resolve().parent.parent
    found = [f"{p.relative_to(package)}:{i}" for p in sorted(package.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if numbered.search(line.split("#")[0]) and "``" not in line and "POOL_LARGE_" not in line]
    assert found == []


def test_play_does_not_change_the_position():
    p = Position.from_string(EX8)
    before = p.to_string()
    p.play("d6", rng=1)
    p.play("d6", variant="SIM", rng=1)
    assert p.to_string() == before


# --------------------------------------------------------------------------------------------
# Regressions: engine bugs found by this suite, fixed in game.py

_OUT_OF_RANGE = """
from boopexp.game.position import Position
p = Position.from_string("....../....../bb.br./....../....../...... 5,0 7,0 b")
for index in (2, 5, 47):
    try:
        p.play("c4", promotion=index)  # Example 5 has 2 candidate groups: 0 and 1
    except ValueError as exc:  # IllegalMoveError is a ValueError
        print("rejected", index)
    else:
        print("accepted", index)
"""


def test_promotion_index_out_of_range_is_rejected():
    # in a subprocess: the bug can crash the interpreter
    proc = subprocess.run([sys.executable, "-c", _OUT_OF_RANGE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-500:]}"
    assert proc.stdout.split("\n")[:3] == ["rejected 2", "rejected 5", "rejected 47"]


def test_play_non_string_raises_invalid_move_error():
    with pytest.raises(InvalidMoveError, match="None"):
        Position.from_string(START).play(None)
