"""Connect Four (boopexp/games/connect_four): the rules, H and f, the notation, and the
differential test against OpenSpiel's ``connect_four`` (10,000 seeded random games compared ply
by ply; it skips with its reason where ``pyspiel`` is not installed)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from numba import njit

from boopexp.engine.rng import new_rng_state, pick
from boopexp.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games.connect_four import (
    board_text,
    initial_state,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.connect_four import kernels as k
from boopexp.games.connect_four.state import COLUMNS, FIRST, LINE_STARTS, MOVE_NUMBER, N_CELLS, SECOND, TO_MOVE

#: a full board without four in a row (found by a seeded random search, checked below)
DRAW_GAME = "abffacdcadefdgedfgccccdaebgbaefabbbeedfggg"
#: the four directions: x completes a1..d1, a1..a4, a1-b2-c3-d4 and g1-f2-e3-d4 on the last move
WINS = {
    "horizontal": "aabbccd",
    "vertical": "abababa",
    "diagonal /": "abbcdcdddac",
    "diagonal \\": "gffededddge",
}


def play(moves: str, st: np.ndarray | None = None) -> tuple[np.ndarray, list[int]]:
    """The state after the moves (column letters) and the outcome apply_move gave after each."""
    st = initial_state() if st is None else st
    rng, work = new_rng_state(0), k.new_work()
    outcomes = []
    for letter in moves:
        winner, followups = k.apply_move(st, parse_move(letter, st), rng, work)
        assert followups == 0
        outcomes.append(int(winner))
    return st, outcomes


def legal(st: np.ndarray) -> list[int]:
    out = np.empty(k.N_MOVE_CODES, dtype=np.int64)
    return [int(c) for c in out[: k.legal_move_codes(st, out)]]


# ---------------------------------------------------------------------------------------------
# the rules


def test_the_first_player_is_x_and_every_column_is_legal_in_order():
    st = initial_state()
    assert st.dtype == k.STATE_DTYPE and st.shape == (k.STATE_SIZE,)
    assert st[TO_MOVE] == FIRST == -1 and st[MOVE_NUMBER] == 0
    assert legal(st) == list(range(COLUMNS)) and k.legal_move_count(st) == 7 == k.MAX_LEGAL


@pytest.mark.parametrize("direction", sorted(WINS))
def test_four_in_a_row_wins_in_every_direction(direction):
    st, outcomes = play(WINS[direction])
    assert outcomes == [0] * (len(outcomes) - 1) + [FIRST]
    assert k.has_won(st, FIRST) and not k.has_won(st, SECOND)
    assert st[TO_MOVE] == SECOND and st[MOVE_NUMBER] == len(WINS[direction])


def test_the_second_player_wins_too():
    st, outcomes = play("gaabbccd")  # o: a1 b1 c1 d1
    assert outcomes[7] == SECOND and k.has_won(st, SECOND) and not k.has_won(st, FIRST)


def test_three_in_a_row_and_lines_broken_across_columns_do_not_win():
    st, outcomes = play("abababcacc")  # x: a1 a2 a3 c1 c2, o: b1 b2 b3 a4 c3
    assert set(outcomes) == {0} and not k.has_won(st, FIRST) and not k.has_won(st, SECOND)
    # x on a4..a6 and b1: consecutive bits 3,4,5,7 of the bitboard with column a's spare bit between
    st = parse_position("x....../x....../x....../o....../o....../ox..... o")
    assert not k.has_won(st, FIRST)


def test_a_full_board_without_four_is_a_draw():
    st, outcomes = play(DRAW_GAME)
    assert len(DRAW_GAME) == N_CELLS
    assert outcomes == [0] * (N_CELLS - 1) + [k.DRAW]
    assert k.legal_move_count(st) == 0 and legal(st) == []
    assert k.heuristic(st, FIRST) == 0.0


def test_a_full_column_is_illegal():
    st, _ = play("aaaaaa")  # x o x o x o: no four
    assert legal(st) == [1, 2, 3, 4, 5, 6] and k.legal_move_count(st) == 6
    with pytest.raises(IllegalMoveError, match="column a is full; legal moves: b, c, d, e, f, g"):
        parse_move("a", st)
    work, rng = k.new_work(), new_rng_state(1)
    assert {k.random_move(st, work.mask, rng, work) for _ in range(200)} == {1, 2, 3, 4, 5, 6}


# ---------------------------------------------------------------------------------------------
# random_move, H and f


def test_random_move_draws_as_the_templates_default_and_respects_bans():
    """The override: legal_move_codes then rng.pick among the unbanned, draw for draw."""
    st, _ = play("aaaaaabb")
    banned = np.zeros(k.N_MOVE_CODES, dtype=np.bool_)
    banned[[2, 5]] = True
    mine, default = new_rng_state(7), new_rng_state(7)
    unbanned = np.array([c for c in legal(st) if not banned[c]], dtype=np.int64)
    work = k.new_work()
    for _ in range(100):
        assert k.random_move(st, banned, mine, work) == _pick(default, unbanned, len(unbanned))
    banned[:] = True
    assert k.random_move(st, banned, mine, work) == -1
    banned[:] = False
    banned[[0, 1, 2, 3, 4, 5]] = True  # one candidate: taken without a draw
    before = mine.copy()
    assert k.random_move(st, banned, mine, work) == 6 and (mine == before).all()


@njit  # not cached: numba's cache would keep rng.pick's old code after an edit of rng.py
def _pick(rng, arr, n):
    return pick(rng, arr, n)


def _random_positions(n: int, seed: int) -> list[np.ndarray]:
    """Positions of seeded random games (games that go on), one every ply."""
    gen = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st, rng, work = initial_state(), new_rng_state(0), k.new_work()
        while True:
            out.append(st.copy())
            winner, _ = k.apply_move(st, int(gen.choice(legal(st))), rng, work)
            if winner:
                break
    return out[:n]


def test_f_is_h_after_the_move_and_both_stay_in_range_and_antisymmetric():
    assert k.F_IS_H_AFTER
    rng, work = new_rng_state(0), k.new_work()
    for st in _random_positions(400, seed=11):
        mover = int(st[TO_MOVE])
        h = k.heuristic(st, FIRST)
        assert -1.0 <= h <= 1.0 and k.heuristic(st, SECOND) == -h
        for code in legal(st):
            before = st.copy()
            f = k.objective(st, code, rng, work)
            assert (st == before).all()
            after = st.copy()
            k.apply_move(after, code, rng, work)
            assert f == k.heuristic(after, mover) and -1.0 <= f <= 1.0


def test_f_a_winning_move_is_one_a_move_that_lets_the_opponent_win_is_low():
    rng, work = new_rng_state(0), k.new_work()
    st, _ = play("aabbc")  # o to move; x threatens d1 (a1 b1 c1)
    values = {move_text(c): k.objective(st, c, rng, work) for c in legal(st)}
    assert values["d"] > -k.WIN_NEXT and all(values[m] == -k.WIN_NEXT for m in "abcefg")
    st, _ = play("aabbcg")  # x to move: d1 wins
    assert k.objective(st, 3, rng, work) == 1.0
    assert k.heuristic(st, FIRST) == k.WIN_NEXT and k.heuristic(st, SECOND) == -k.WIN_NEXT


def test_h_sees_a_double_threat_and_counts_lines_otherwise():
    st, _ = play("bbcc")  # x to move: d1 makes b1 c1 d1, open at a1 and e1
    rng, work = new_rng_state(0), k.new_work()
    assert k.objective(st, 3, rng, work) == k.DOUBLE_THREAT
    st, _ = play("d")
    h = k.heuristic(st, FIRST)  # x's lone piece: no two- or three-piece line yet
    assert h == 0.0
    st, _ = play("dgd")  # x holds d1 d2: two-piece lines, o's g1 none
    assert 0.0 < k.heuristic(st, FIRST) < k.LINES_SCALE


def _lines_of_four() -> list[int]:
    """The 69 lines of four cells as bit masks, cell by cell (the oracle of line_balance)."""
    out = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
        for r in range(6):
            for c in range(COLUMNS):
                cells = [(r + i * dr, c + i * dc) for i in range(4)]
                if all(0 <= rr < 6 and 0 <= cc < COLUMNS for rr, cc in cells):
                    out.append(sum(1 << (7 * cc + rr) for rr, cc in cells))
    return out


def test_the_line_count_is_the_count_of_lines_one_by_one():
    lines = _lines_of_four()
    assert len(lines) == 69 == sum(bin(int(s)).count("1") for s in LINE_STARTS)

    def oracle(mine: int, theirs: int) -> int:
        x = 0
        for w in lines:
            a, b = bin(w & mine).count("1"), bin(w & theirs).count("1")
            if b == 0 and a in (2, 3):
                x += k.THREE_WEIGHT if a == 3 else 1
            if a == 0 and b in (2, 3):
                x -= k.THREE_WEIGHT if b == 3 else 1
        return x

    for st in _random_positions(500, seed=3):
        assert k.line_balance(st[0], st[1]) == oracle(int(st[0]), int(st[1]))


def test_winning_cells_are_the_empty_cells_that_complete_four():
    for st in _random_positions(300, seed=8):
        occupied = int(st[0]) | int(st[1])
        for p in (int(st[0]), int(st[1])):
            brute = 0
            for col in range(COLUMNS):
                for row in range(6):
                    bit = 1 << (7 * col + row)
                    if not occupied & bit and k.four_in_a_row(p | bit):
                        brute |= bit
            assert k.winning_cells(p, occupied) == brute


def test_new_work_holds_the_templates_fields():
    work = k.new_work()
    for name, dtype, size in (("playout", k.STATE_DTYPE, k.STATE_SIZE), ("mask", np.bool_, k.N_MOVE_CODES),
                              ("la_mask", np.bool_, k.N_MOVE_CODES), ("codes", np.int64, k.N_MOVE_CODES),
                              ("values", np.float64, k.N_MOVE_CODES), ("best", np.int64, k.N_MOVE_CODES),
                              ("tie_moves", np.int64, k.N_MOVE_CODES), ("path", np.int64, k.N_MOVE_CODES),
                              ("la_after", k.STATE_DTYPE, k.STATE_SIZE), ("la_reply", k.STATE_DTYPE, k.STATE_SIZE),
                              ("la_rng", np.uint64, 4), ("la_unsafe", np.bool_, k.N_MOVE_CODES),
                              ("la_counts", np.int64, 3), ("la_codes", np.int64, k.N_MOVE_CODES),
                              ("la_replies", np.int64, k.N_MOVE_CODES)):
        array = getattr(work, name)
        assert array.dtype == dtype and array.shape == (size,), name
    assert not work.mask.any() and not work.la_mask.any()


# ---------------------------------------------------------------------------------------------
# notation


def test_position_strings_round_trip():
    st, _ = play("ddcec")
    assert position_string(st) == "......./......./......./......./..xo.../..xxo.. o"
    for pos in _random_positions(300, seed=5):
        assert (parse_position(position_string(pos)) == pos).all()
    assert position_string(initial_state()) == "......./......./......./......./......./....... x"


def test_moves_read_and_write_column_letters():
    st = initial_state()
    assert [move_text(c) for c in range(7)] == list("abcdefg")
    assert [parse_move(m, st) for m in "abcdefg"] == list(range(7)) and parse_move("D", st) == 3


@pytest.mark.parametrize("text", ["h", "", "ab", "1", "d4", " "])
def test_a_bad_move_is_refused_naming_it(text):
    with pytest.raises(InvalidMoveError, match="is not a Connect Four move: a move is a column letter a..g"):
        parse_move(text, initial_state())


def test_a_bad_move_code_is_refused():
    with pytest.raises(InvalidMoveError, match="move code 7 is not a column: allowed 0..6"):
        move_text(7)


@pytest.mark.parametrize("text, message", [
    ("", "expected 'ROWS SIDE'"),
    ("......./......./......./......./......./.......", "expected 'ROWS SIDE'"),
    ("......./......./......./......./....... x", "must be 6 rows of 7 cells"),
    ("......./......./......./......./......./........ x", "must be 6 rows of 7 cells"),
    ("......./......./......./......./......./...X... o", "'X' is not a cell; allowed: . x o"),
    ("......./......./......./......./...x.../....... o", "the piece on d2 floats above an empty cell"),
    ("......./......./......./......./......./...o... x", "0 x and 1 o pieces"),
    ("......./......./......./......./......./..xx... o", "2 x and 0 o pieces"),
    ("......./......./......./......./......./...x... x", "side to move 'x' must be 'o'"),
    ("......./......./o....../o....../o....../oxxxx.. x", "x has four in a row but is to move"),
])
def test_a_bad_position_is_refused_naming_what_is_wrong(text, message):
    with pytest.raises(InvalidPositionError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_position(text)


def test_the_terminal_and_svg_boards():
    st, outcomes = play(WINS["vertical"])
    text = board_text(st, outcomes[-1])
    assert text.splitlines()[2:] == ["  x . . . . . .", "  x o . . . . .", "  x o . . . . .", "  x o . . . . .",
                                     "  a b c d e f g", "  ply 7, x has won"]
    assert board_text(initial_state()).endswith("ply 0, x to move")
    assert board_text(play(DRAW_GAME)[0], k.DRAW).endswith("ply 42, a draw")
    root = ET.fromstring(svg(st))
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == N_CELLS
    fills = {c.get("data-cell"): c.get("fill") for c in circles}
    assert fills["a4"] == fills["a1"] != fills["b1"] != fills["a5"]


def test_the_front_door_loads_no_numba():
    probe = ("import sys, boopexp.games, boopexp.games.connect_four as game; game.initial_state(); "
             "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------------------------------------
# the differential test against OpenSpiel


# Not cached: a cached caller keeps its callees' code as compiled then, and numba's cache checks
# only the caller's file, so an edited kernel would go untested (compiling this takes ~1 s).
@njit
def _random_games(rng, moves, legal, lengths, outcomes, boards, work):
    """Play ``len(lengths)`` uniformly random games with the kernels: each ply's move and legal
    moves in their order (``_ordered``), each game's length, outcome (0: it did not end) and
    final bitboards."""
    out = work.codes
    st = work.playout
    for g in range(lengths.shape[0]):
        st[:] = 0
        st[TO_MOVE] = FIRST
        winner = 0
        ply = 0
        while winner == 0 and ply < N_CELLS:  # a game that goes on past a full board stops here
            n = k.legal_move_codes(st, out)
            ordered = 0
            for i in range(n):
                ordered |= (out[i] + 1) << (3 * i)
            legal[g, ply] = ordered
            code = k.random_move(st, work.mask, rng, work)
            if code < 0:
                break
            moves[g, ply] = code
            winner, _ = k.apply_move(st, code, rng, work)
            ply += 1
        lengths[g] = ply
        outcomes[g] = winner
        boards[g, 0] = st[0]
        boards[g, 1] = st[1]


def _ordered(value: int) -> list[int]:
    """The list of moves a 3-bit digit each (move + 1) spell, the first the lowest."""
    out = []
    while value:
        out.append((value & 7) - 1)
        value >>= 3
    return out


def _openspiel_board(first: int, second: int) -> str:
    """A board as OpenSpiel's ``connect_four`` state prints it: rows top to bottom, x o ."""
    rows = []
    for r in reversed(range(6)):
        rows.append("".join("x" if first >> (7 * c + r) & 1 else "o" if second >> (7 * c + r) & 1 else "."
                            for c in range(COLUMNS)))
    return "\n".join(rows) + "\n"


N_GAMES = 10_000


def test_ten_thousand_random_games_agree_with_openspiel_ply_by_ply():
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: pip install 'boopexp[openspiel]'")
    generator = np.random.default_rng(20261128)
    moves = np.full((N_GAMES, N_CELLS), -1, dtype=np.int64)
    legal = np.zeros((N_GAMES, N_CELLS), dtype=np.int64)
    lengths = np.zeros(N_GAMES, dtype=np.int64)
    outcomes = np.zeros(N_GAMES, dtype=np.int64)
    boards = np.zeros((N_GAMES, 2), dtype=np.int64)
    _random_games(new_rng_state(generator), moves, legal, lengths, outcomes, boards, k.new_work())

    lists: dict[int, list[int]] = {}  # the few distinct legal-move lists, decoded once each
    returns = {FIRST: [1.0, -1.0], SECOND: [-1.0, 1.0], k.DRAW: [0.0, 0.0]}
    game = pyspiel.load_game("connect_four")
    mismatches = []
    for g in range(N_GAMES):
        state = game.new_initial_state()
        for ply in range(lengths[g]):
            ours = lists.get(legal[g, ply])
            if ours is None:
                ours = lists[legal[g, ply]] = _ordered(int(legal[g, ply]))
            if state.is_terminal() or state.legal_actions() != ours:
                mismatches.append((g, ply, state.legal_actions(), ours))
                break
            state.apply_action(int(moves[g, ply]))
        else:
            if not state.is_terminal() or state.returns() != returns.get(outcomes[g]):
                mismatches.append((g, "end", state.returns(), outcomes[g]))
            elif str(state) != _openspiel_board(boards[g, 0], boards[g, 1]):
                mismatches.append((g, "board", str(state)))
    assert not mismatches, f"{len(mismatches)} games differ from OpenSpiel, the first: {mismatches[:3]}"
    # the sample covers every outcome and every game length's extremes
    assert set(outcomes) == {FIRST, SECOND, k.DRAW} and lengths.min() == 7 and lengths.max() == N_CELLS
