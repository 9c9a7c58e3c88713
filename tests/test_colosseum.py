"""Colosseum Survival (boopexp/games/colosseum): the original's golden traces ply by ply, the
spec's worked examples (spec/games/COLOSSEUM.md §10), the seeded random start (§3), H and f, the
notation, and a game of every agent through ``boopexp game``.

The golden tests are marked ``golden`` (``-k "golden and colosseum"`` selects them) and read the
file named by ``$COLOSSEUM_GOLDEN`` (default ``../shared/golden/colosseum_golden.json.gz`` next to
the repository), so the same tests run on other traces of the same format. Without the file
every game's test is still collected and skipped with the path in its reason; under CI a skipped
golden test fails the run (tests/conftest.py).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner
from engine_helpers import data_path, load_json

from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import new_rng_state
from boopexp.errors import ConfigError, IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games.colosseum import (
    board_text,
    initial_state,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.colosseum import kernels as k
from boopexp.games.colosseum.state import (
    FIRST,
    GRID,
    MOVE_NUMBER,
    POS_A,
    POS_B,
    SECOND,
    SEPARATION,
    SEPARATIONS,
    SIZE,
    TO_MOVE,
    WORLD_SIZES,
    end_check,
    has_wall,
    max_step,
    start_draws,
    with_options,
    world_board,
)

GOLDEN_PATH = data_path("COLOSSEUM_GOLDEN", "../shared/golden/colosseum_golden.json.gz")
#: games in the golden file: without it, as many tests are still collected (each one skipped)
GOLDEN_GAMES = 300
RESULT = {"A": FIRST, "B": SECOND, "tie": DRAW}


GOLDEN = load_json(GOLDEN_PATH)


def _need_golden():
    if GOLDEN is None:
        pytest.skip(f"golden file not found: {GOLDEN_PATH} (set COLOSSEUM_GOLDEN)")


def legal(st: np.ndarray) -> list[int]:
    out = np.empty(k.N_MOVE_CODES, dtype=np.int64)
    return [int(c) for c in out[: k.legal_move_codes(st, out)]]


def mask_codes(text: str) -> list[int]:
    """The move codes of a golden legal mask, in the spec's §5 order (r, c, then d)."""
    return [4 * (GRID * r + c) + d for r, row in enumerate(text.split("/")) for c, ch in enumerate(row)
            for d in range(4) if int(ch, 16) >> d & 1]


def play(st: np.ndarray, *moves: str) -> list[int]:
    """Play ``moves`` (``r,c,D``) on ``st`` in place; the outcome of each."""
    rng, work = new_rng_state(0), k.new_work()
    outcomes = []
    for text in moves:
        outcome, followups = k.apply_move(st, parse_move(text, st), rng, work)
        assert followups == 0
        outcomes.append(int(outcome))
    return outcomes


# ---------------------------------------------------------------------------------------------
# the golden traces of the original World


@pytest.mark.golden
@pytest.mark.parametrize("g", range(len(GOLDEN["games"]) if GOLDEN else GOLDEN_GAMES))
def test_golden_colosseum_game(g):
    """Game ``g``: its start rebuilt from (seed, size), then at every ply the position, the legal
    moves in order (and their count), the move at its index, "not over" before the last ply, and
    the final position, scores and result."""
    _need_golden()
    game = GOLDEN["games"][g]
    st, attempts = start_draws(game["seed"], board_size=game["size"])
    assert (position_string(st), attempts) == (game["plies"][0]["pos"], game["init_attempts"])
    assert int(st[k.state.MAX_STEP]) == game["max_step"] and int(st[MOVE_NUMBER]) == 0
    rng, work = new_rng_state(0), k.new_work()
    outcome = 0
    for i, ply in enumerate(game["plies"]):
        where = f"game {g} ply {i}"
        assert position_string(st) == ply["pos"], where
        assert parse_position(ply["pos"]).tobytes() == st.tobytes(), where
        codes = legal(st)
        assert codes == mask_codes(ply["legal"]), where
        assert k.legal_move_count(st) == ply["n_legal"] == len(codes), where
        code = parse_move(ply["move"], st)
        assert codes[ply["index"]] == code and move_text(code) == ply["move"], where
        assert outcome == 0 and not k.end_check(st)[0], where
        outcome, _ = k.apply_move(st, code, rng, work)
    assert position_string(st) == game["final"]
    over, size_a, size_b = k.end_check(st)
    assert over and [size_a, size_b] == game["scores"] and outcome == RESULT[game["result"]]
    assert k.has_won(st, FIRST) == (game["result"] == "A") and k.has_won(st, SECOND) == (game["result"] == "B")


@pytest.mark.golden
def test_golden_colosseum_region_probes():
    """``World.check_endgame`` on the file's 300 random wall patterns: the kernel and the plain
    Python end check both return the original's (is_end, A's score, B's score)."""
    _need_golden()
    bad = []
    for i, probe in enumerate(GOLDEN["region_probes"]):
        st = parse_position(probe["pos"])
        want = (probe["is_end"], *probe["scores"])
        got = tuple(k.end_check(st))
        if got != want or tuple(end_check(st)) != want:
            bad.append(f"probe {i}: got {got}, golden {want}")
    assert GOLDEN["region_probes"] and not bad, bad[:5]


@pytest.mark.golden
@pytest.mark.parametrize("separation", SEPARATIONS[1:])
def test_golden_colosseum_separation_tests_agree_with_the_original(separation):
    """The game option ``separation``: the union-find and bidirectional end tests give the
    original's outcome after every move of the golden games (``apply_move`` on a state carrying the
    option) and the original's (is_end, scores) on every region probe (the bidirectional search
    returns no sizes while the players share a region: only is_end then)."""
    _need_golden()
    rng, work = new_rng_state(0), k.new_work()
    check = {"union-find": k.union_find_check, "bidirectional": k.bidirectional_check}[separation]
    bad = []
    for g, game in enumerate(GOLDEN["games"]):
        st = with_options(start_draws(game["seed"], board_size=game["size"])[0], separation=separation)
        outcomes = []
        for ply in game["plies"]:
            outcome, _ = k.apply_move(st, parse_move(ply["move"], st), rng, work)
            outcomes.append(int(outcome))
        if outcomes != [0] * (len(outcomes) - 1) + [RESULT[game["result"]]]:
            bad.append(f"game {g}: {outcomes[-3:]}, golden {game['result']}")
    for i, probe in enumerate(GOLDEN["region_probes"]):
        got = tuple(check(parse_position(probe["pos"]), work))
        want = (probe["is_end"], *probe["scores"])
        if got != want and (want[0] or got[0]):
            bad.append(f"probe {i}: got {got}, golden {want}")
    assert not bad, bad[:5]
    assert not work.sep_marks.any()  # the search leaves its marks cleared for the next call


def test_a_move_without_its_end_test_is_the_move():
    """``apply_move_unchecked`` (terminal_check 2's odd plies): the same position as ``apply_move``,
    outcome 0 even when the move ends the game (Example 7: A walls itself in)."""
    st = parse_position("5 b9113/80002/80002/80002/c4446 1,1 3,3 A")
    checked, unchecked = st.copy(), st.copy()
    rng, work = new_rng_state(0), k.new_work()
    code = parse_move("0,0,D", st)
    assert k.apply_move(checked, code, rng, work) == (SECOND, 0)
    assert k.apply_move_unchecked(unchecked, code, rng, work) == (0, 0)
    assert np.array_equal(checked, unchecked)


def test_the_separation_option_is_a_state_field_the_position_string_leaves_out():
    st = initial_state(7, separation="bidirectional")
    assert int(st[SEPARATION]) == SEPARATIONS.index("bidirectional")
    assert position_string(st) == position_string(initial_state(7))
    with pytest.raises(ConfigError, match="separation = 'bfs' is not allowed; allowed: bitboard, union-find"):
        initial_state(7, separation="bfs")


# ---------------------------------------------------------------------------------------------
# the spec's worked examples (§10)

OPEN5 = "5 91113/80002/80002/80002/c4446"


def _mask(st: np.ndarray) -> str:
    size = int(st[SIZE])
    m = [[0] * size for _ in range(size)]
    for code in legal(st):
        cell, d = divmod(code, 4)
        m[cell // GRID][cell % GRID] |= 1 << d
    return "/".join("".join(f"{x:x}" for x in row) for row in m)


@pytest.mark.parametrize("pos, mask, n, end", [
    # Example 1: the adversary blocks the walk
    (f"{OPEN5} 2,2 2,3 A", "0eee0/7fffd/7ff00/7fffd/0bbb0", 65, (False, 25, 25)),
    # Example 3: a wall in the way
    ("5 91113/80402/80102/80002/c4446 2,1 2,2 A", "6ee00/7fbf0/7f000/7fff0/3bb00", 52, (False, 25, 25)),
    # Example 5: the framework's own test boards
    ("5 bbd13/80382/846aa/ad102/ed446 0,2 2,2 A", "002ec/0007d/00050/00000/00000", 14, (True, 15, 10)),
    ("5 bb913/80282/8442a/ad102/ed446 2,3 2,1 A", "006ec/0fd7d/00bd5/02efd/00bb9", 47, (False, 25, 25)),
])
def test_the_worked_examples_legal_masks_and_end_checks(pos, mask, n, end):
    st = parse_position(pos)
    assert _mask(st) == mask and k.legal_move_count(st) == n == len(legal(st))
    assert tuple(k.end_check(st)) == end


def test_example_2_a_wall_is_placed_on_both_sides():
    st = parse_position(f"{OPEN5} 2,1 2,2 A")
    assert k.legal_move_count(st) == 53
    assert play(st, "1,2,R") == [0]
    assert position_string(st) == "5 91113/80282/80002/80002/c4446 1,2 2,2 B"


def test_example_4_equal_regions_are_a_tie():
    st = parse_position("6 913913/802802/802802/802802/802802/c44446 5,2 0,3 A")
    assert play(st, "5,2,R") == [DRAW]
    assert position_string(st) == "6 913913/802802/802802/802802/802802/c46c46 5,2 0,3 B"
    assert tuple(k.end_check(st)) == (True, 18, 18)
    assert not k.has_won(st, FIRST) and not k.has_won(st, SECOND) and k.heuristic(st, FIRST) == 0.0


def test_example_6_a_third_region_counts_for_nobody():
    st = parse_position("5 93913/c6802/d5442/91112/c4446 3,2 0,4 A")
    assert play(st, "3,4,U") == [SECOND]
    assert tuple(k.end_check(st)) == (True, 10, 11) and k.has_won(st, SECOND)


def test_example_7_a_mover_can_wall_itself_in_and_lose():
    st = parse_position("5 b9113/80002/80002/80002/c4446 1,1 3,3 A")
    before = st.copy()
    code = parse_move("0,0,D", st)
    assert k.objective(st, code, new_rng_state(0), k.new_work()) == -1.0 and (st == before).all()
    assert play(st, "0,0,D") == [SECOND]
    assert position_string(st) == "5 f9113/90002/80002/80002/c4446 0,0 3,3 B"
    assert tuple(k.end_check(st)) == (True, 1, 24) and k.heuristic(st, FIRST) == -1.0


def test_the_open_board_move_counts_of_the_spec_and_the_seed_report():
    """§5: the mover centred on an open board, the adversary out of reach: 72 .. 324 moves."""
    counts = []
    for size in range(5, 13):
        st = parse_position(_open_board(size, (size // 2, size // 2), (0, 0)))
        counts.append(k.legal_move_count(st))
    assert counts == [72, 84, 136, 148, 216, 228, 312, 324]


def _open_board(size: int, a: tuple[int, int], b: tuple[int, int], side: str = "A") -> str:
    digit = [[(r == 0) | (c == size - 1) << 1 | (r == size - 1) << 2 | (c == 0) << 3 for c in range(size)]
             for r in range(size)]
    rows = "/".join("".join(f"{x:x}" for x in row) for row in digit)
    return f"{size} {rows} {a[0]},{a[1]} {b[0]},{b[1]} {side}"


# ---------------------------------------------------------------------------------------------
# the random start (§3)


def test_the_start_is_the_originals_for_its_seed():
    """The spec's worked traces: seed 100000 (golden game 0) and seed 5, whose first board starts
    separated and is drawn again from the same stream."""
    assert position_string(initial_state(100000, board_size=5)) == "5 d5113/91402/80502/80146/c4457 0,4 4,0 A"
    st, attempts = start_draws(5, board_size=5)
    assert attempts == 2 and position_string(st) == "5 b9113/86802/81042/80292/c446e 0,2 4,2 A"
    first = world_board(np.random.RandomState(5), 5)
    assert position_string(first).endswith("0,4 4,0 A") and end_check(first) == (True, 1, 1)


def _interior_walls(st: np.ndarray) -> list[tuple[int, int, int]]:
    size = int(st[SIZE])
    return [(r, c, d) for r in range(size) for c in range(size) for d in range(4) if has_wall(st, GRID * r + c, d)
            and not (d == 0 and r == 0 or d == 1 and c == size - 1 or d == 2 and r == size - 1 or d == 3 and c == 0)]


@pytest.mark.parametrize("kwargs", [{}, {"board_size": 12}, {"board_size": 5}, {"size_range": (6, 11)}])
def test_every_start_is_symmetric_under_a_half_turn_with_2k_walls(kwargs):
    sizes = []
    for seed in range(150):
        st = initial_state(seed, **kwargs)
        size = int(st[SIZE])
        sizes.append(size)
        walls = _interior_walls(st)
        assert len(walls) == 2 * 2 * max_step(size)  # 2K walls, each stored in two cells
        assert {(size - 1 - r, size - 1 - c, d ^ 2) for r, c, d in walls} == set(walls)
        a, b = int(st[POS_A]), int(st[POS_B])
        assert a != b and (size - 1 - a // GRID, size - 1 - a % GRID) == (b // GRID, b % GRID)
        assert st[TO_MOVE] == FIRST and st[MOVE_NUMBER] == 0 and not end_check(st)[0]
        assert initial_state(seed, **kwargs).tobytes() == st.tobytes()  # the seed decides the start
        assert parse_position(position_string(st)).tobytes() == st.tobytes()
    allowed = ({kwargs["board_size"]} if "board_size" in kwargs else
               set(range(6, 12)) if "size_range" in kwargs else set(range(WORLD_SIZES[0], WORLD_SIZES[1] + 1)))
    assert set(sizes) == allowed  # QUIRK-CS1: World draws 5..9, never 10; autoplay 6..11, never 12
    assert len({position_string(initial_state(seed, **kwargs)) for seed in range(20)}) == 20


def test_quirk_cs2_a_redrawn_start_forgets_a_drawn_size():
    """A start drawn from a size range that begins separated is drawn again by ``World`` with no
    size: a fresh 5..9 draw from the same stream, not the range."""
    seed = next(s for s in range(5000) if start_draws(s, size_range=(5, 5))[1] > 1)
    gen = np.random.RandomState(seed)
    assert gen.randint(5, 6) == 5 and end_check(world_board(gen, 5))[0]
    again = world_board(gen, None)
    assert position_string(initial_state(seed, size_range=(5, 5))) == position_string(again)


def test_the_start_options_refuse_sizes_the_state_cannot_hold():
    with pytest.raises(ConfigError, match=r"board_size = 13 must be an integer in \[2, 12\]"):
        initial_state(0, board_size=13)
    with pytest.raises(ConfigError, match=r"size_range = \[9, 6\] must be \[lo, hi\] with lo <= hi"):
        initial_state(0, size_range=(9, 6))
    big = initial_state(2**40 + 7)  # a seed past 32 bits: its words seed the generator
    assert big.tobytes() == initial_state(2**40 + 7).tobytes() != initial_state(7).tobytes()


# ---------------------------------------------------------------------------------------------
# H and f


def test_h_is_the_reach_balance_of_the_two_players():
    """Open 5x5, K = 3: A in the corner reaches r + c <= 3 (10 cells); B in the centre reaches
    every cell but the four corners (21; A's corner is 4 steps away). H = 0.9 (a - b) / (a + b)."""
    st = parse_position(_open_board(5, (0, 0), (2, 2)))
    assert k.heuristic(st, FIRST) == pytest.approx(0.9 * (10 - 21) / 31, abs=1e-15)
    assert k.heuristic(st, SECOND) == -k.heuristic(st, FIRST)
    # the adversary is an obstacle: B next to A hides the cells behind it (Example 1: 65 moves)
    st = parse_position(_open_board(5, (2, 2), (2, 3)))
    # A reaches 19 cells (Example 1's mask), B 16: (2,1) and (2,0) are 4 and 5 steps round A, and
    # (1,0), (0,0), (0,1) and their mirror images below are 4 or more steps away
    assert k.heuristic(st, FIRST) == pytest.approx(0.9 * (19 - 16) / (19 + 16), abs=1e-15)


def _random_positions(n: int, seed: int) -> list[np.ndarray]:
    gen = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    rng, work = new_rng_state(0), k.new_work()
    while len(out) < n:
        st = initial_state(int(gen.integers(2**31)))
        outcome = 0
        while outcome == 0:
            out.append(st.copy())
            codes = legal(st)
            outcome, _ = k.apply_move(st, codes[int(gen.integers(len(codes)))], rng, work)
    return out[:n]


def test_f_is_h_after_the_move_and_both_stay_in_range():
    assert k.F_IS_H_AFTER
    rng, work = new_rng_state(0), k.new_work()
    seen = set()
    for st in _random_positions(150, seed=3):
        before = st.copy()
        mover = int(st[TO_MOVE])
        for code in legal(st)[::7]:
            f = k.objective(st, code, rng, work)
            after = st.copy()
            outcome, _ = k.apply_move(after, code, rng, work)
            assert f == k.heuristic(after, mover) and -1.0 <= f <= 1.0
            assert f == (1.0 if outcome == mover else -1.0 if outcome == -mover else 0.0 if outcome == DRAW else f)
            assert outcome != 0 or abs(f) < k.REACH_SCALE + 1e-12
            seen.add(outcome)
        assert (st == before).all()
        assert k.heuristic(st, FIRST) == -k.heuristic(st, SECOND)
    assert seen == {0, FIRST, SECOND}


def test_a_winning_move_scores_one():
    """A in (0,0) with B in a 2-cell pocket at (0,2)-(0,3) that one wall closes from A's side:
    walling (1,2)'s Up side separates them 23 : 2; A's f is 1.0, and H after it is 1.0 for A."""
    pos = "5 9397b/80012/80002/80002/c4446 0,0 0,2 A"  # (0,2) walled L, (0,3) walled R and D
    st = parse_position(pos)
    code = parse_move("1,2,U", st)
    assert k.objective(st, code, new_rng_state(0), k.new_work()) == 1.0
    assert play(st, "1,2,U") == [FIRST] and tuple(k.end_check(st)) == (True, 23, 2)


# ---------------------------------------------------------------------------------------------
# notation


def test_moves_read_and_write_and_bad_ones_are_one_clear_error():
    st = parse_position(f"{OPEN5} 2,1 2,2 A")
    assert move_text(parse_move("1,2,r", st)) == "1,2,R"
    with pytest.raises(InvalidMoveError, match=r"'1,2' is not a Colosseum Survival move"):
        parse_move("1,2", st)
    with pytest.raises(IllegalMoveError, match=r"off the 5x5 board"):
        parse_move("5,0,U", st)
    with pytest.raises(IllegalMoveError, match=r"that side is a wall"):
        parse_move("0,0,U", st)
    with pytest.raises(IllegalMoveError, match=r"out of reach"):
        parse_move("2,4,U", st)  # behind B: four steps around it
    with pytest.raises(InvalidMoveError):
        move_text(576)


@pytest.mark.parametrize("text, why", [
    ("5 91113/80002/80002/80002 2,2 2,3 A", "must be 5 rows of 5 hex digits"),
    ("5 91113/80002/80g02/80002/c4446 2,2 2,3 A", "'g' at \\(2, 2\\) is not a hex digit"),
    ("5 11113/80002/80002/80002/c4446 2,2 2,3 A", "\\(0, 0\\) must have its L edge walled"),
    ("5 91113/80202/80002/80002/c4446 2,2 2,3 A", "between 1,2 and 1,3 is stored on one side only"),
    (f"{OPEN5} 2,2 2,2 A", "A and B stand on one cell"),
    (f"{OPEN5} 2,2 2,5 A", "B's cell '2,5' must be 'r,c'"),
    (f"{OPEN5} 2,2 2,3 C", "side to move 'C' must be A or B"),
    ("13 0 0,0 0,1 A", "board size '13' must be 2..12"),
    ("5 91113 A", "expected 'M ROWS A B SIDE'"),
])
def test_a_bad_position_string_names_what_is_wrong(text, why):
    with pytest.raises(InvalidPositionError, match=why):
        parse_position(text)


def test_board_text_and_svg_draw_the_walls_and_the_players():
    st = parse_position("5 b9113/80002/80002/80002/c4446 1,1 3,3 A")
    text = board_text(st)
    assert text.splitlines()[2] == " 0 |.|. . . .|" and "A" in text.splitlines()[4] and text.endswith("A to move")
    assert board_text(st, SECOND).endswith("B has won") and board_text(st, DRAW).endswith("a tie")
    root = ET.fromstring(svg(st))
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}rect")) == 25 and len(root.findall(f"{ns}circle")) == 2
    assert len(root.findall(f"{ns}line")) == 4 * 5 + 2  # the 20 edge sides, and (0,0)|(0,1) from both cells


# ---------------------------------------------------------------------------------------------
# every agent plays it, and a game replays exactly


def invoke(*args):
    from boopexp.interfaces.cli import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("p1, p2", [("mcts-co", "vanilla"), ("alphabeta", "heuristics"), ("random", "mcts-solver")])
def test_a_colosseum_game_plays_and_replays_exactly(p1, p2):
    from boopexp.play.replay import first_difference, walk

    args = ("game", "--game", "colosseum", "--p1", p1, "--p2", p2, "--seed", "3", "--budget", "iterations",
            "--iterations", "30", "--json")
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["game"] == "colosseum" and record["plies"] == len(record["moves"])
    assert record["termination"] in ("victory", "draw")
    start = parse_position(record["start"])  # the start drawn from the game's seed is recorded
    assert record["start"] == position_string(initial_state(record["seed"])) and start[MOVE_NUMBER] == 0
    assert json.loads(invoke(*args).stdout)["moves"] == record["moves"]
    walk(record)
    assert first_difference(record) is None
