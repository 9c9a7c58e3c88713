"""Pentago-Swap (boopexp/games/pentago_swap): the rules against the original framework's golden
traces (every ply: the position, the legal moves in order, the move, the result; the ``isLegal``
probes), the spec's worked examples (PENTAGO-SWAP.md §10), the geometry, H and f on hand-made
positions, and every agent playing it through ``boopexp game``.

The golden tests are marked ``golden`` (``-k "golden and pentago"`` selects them) and read
``$PENTAGO_SWAP_GOLDEN``, by default ``../shared/golden/pentago_swap_golden.json.gz`` next to the
repository; a missing file skips them with its path in the reason (every game is still
collected), and under CI a skipped golden test fails the run (tests/conftest.py).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner
from engine_helpers import data_path, load_json

from boopexp.engine.outcome import DRAW
from boopexp.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games import registry
from boopexp.games.pentago_swap import (
    board_text,
    initial_state,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.pentago_swap import kernels as k
from boopexp.games.pentago_swap.notation import move_parts
from boopexp.games.pentago_swap.original import FRAMEWORK_SEED, JavaRandom, framework_random_move, game_over, is_legal
from boopexp.games.pentago_swap.state import (
    BLACK,
    CELL_BIT,
    MOVE_NUMBER,
    N_MOVE_CODES,
    QUADRANTS,
    SIDE,
    SWAPS,
    TO_MOVE,
    WHITE,
    WINDOWS,
    WINNER,
    cell_bit,
    five_in_a_row,
    swap_quadrants,
)
from boopexp.interfaces.cli import main
from boopexp.play.replay import first_difference, walk

GOLDEN_PATH = data_path("PENTAGO_SWAP_GOLDEN", "../shared/golden/pentago_swap_golden.json.gz")
#: games in the golden file: without the file, as many tests are still collected (each skipped)
GOLDEN_GAMES = 300
RESULT = {"white": WHITE, "black": BLACK, "draw": DRAW}
PLAYER = {0: WHITE, 1: BLACK}


GOLDEN = load_json(GOLDEN_PATH)


def _need_golden():
    if GOLDEN is None:
        pytest.skip(f"golden file not found: {GOLDEN_PATH} (set PENTAGO_SWAP_GOLDEN)")
    return GOLDEN


def legal(st) -> list[int]:
    codes = np.zeros(N_MOVE_CODES, dtype=np.int64)
    n = k.legal_move_codes(st, codes)
    assert k.legal_move_count(st) == n
    return [int(c) for c in codes[:n]]


def play(st, text):
    """Apply one move (text) to a copy of ``st``; return (the state after, the outcome)."""
    after = st.copy()
    outcome, followups = k.apply_move(after, parse_move(text, st), np.zeros(4, np.uint64), k.new_work())
    assert followups == 0
    return after, int(outcome)


# ---------------------------------------------------------------------------------------------
# golden traces of the original framework


@pytest.mark.golden
@pytest.mark.parametrize("g", range(len(GOLDEN["games"]) if GOLDEN else GOLDEN_GAMES))
def test_golden_game_matches_the_original_at_every_ply(g):
    game = _need_golden()["games"][g]
    st = initial_state()
    rng = JavaRandom(game["seed"])  # the harness's move choice: checks JavaRandom too
    outcome = 0
    for p, ply in enumerate(game["plies"]):
        assert outcome == 0, f"game {g} ended early at ply {p}"
        assert position_string(st) == ply["pos"], f"game {g} ply {p}"
        assert parse_position(ply["pos"]).tobytes() == st.tobytes()
        codes = legal(st)
        assert " ".join(move_text(c) for c in codes) == ply["legal"], f"game {g} ply {p}"
        code = parse_move(ply["move"], st)
        assert codes.index(code) == ply["index"] == rng.next_int(len(codes))
        outcome = int(k.apply_move(st, code, np.zeros(4, np.uint64), k.new_work())[0])
    assert position_string(st) == game["final"]
    assert outcome == RESULT[game["result"]] and game["n_plies"] == int(st[MOVE_NUMBER]) == len(game["plies"])
    assert int(st[WINNER]) == outcome and int(st[MOVE_NUMBER]) // 2 == game["turn_number"]
    assert bool(k.has_won(st, WHITE)) == game["lines"]["white"] and bool(k.has_won(st, BLACK)) == game["lines"]["black"]
    assert parse_position(game["final"]).tobytes() == st.tobytes()  # the winner judged back from the string


@pytest.mark.golden
def test_golden_is_legal_probes_match_the_original():
    probes = _need_golden()["probes"]
    assert len(probes) >= 1000
    for probe in probes:
        st = parse_position(probe["pos"])
        text, _, player = probe["move"].partition("@")
        x, y, a, b = move_parts(text)
        assert is_legal(st, x, y, a, b, int(player)) == probe["legal"], probe
        if probe["legal"]:  # a reversed pair is the canonical move (QUIRK-PS2)
            assert move_text(parse_move(text, st)).split(":")[1] == "-".join(QUADRANTS[q] for q in sorted((a, b)))


@pytest.mark.golden
def test_golden_file_is_the_pentago_swap_original():
    golden = _need_golden()
    assert golden["header"]["game"] == "pentago-swap" and len(golden["games"]) == GOLDEN_GAMES
    assert sum(len(game["plies"]) for game in golden["games"]) > 8000
    ends = {game["end"] for game in golden["games"]}
    assert ends == {"mover_line", "opponent_line", "both_lines", "full_board"}  # every row of §5's table


# ---------------------------------------------------------------------------------------------
# the spec's worked examples (§10)


def test_example_1_the_placed_piece_travels_with_its_quadrant():
    start = initial_state()
    after, outcome = play(start, "01:TL-BR")
    assert position_string(after) == "....../....../....../....w./....../...... b" and outcome == 0
    reversed_pair, _ = play(start, "01:BR-TL")  # QUIRK-PS2
    assert reversed_pair.tobytes() == after.tobytes()
    assert is_legal(start, 0, 1, 3, 0, 0)


def test_example_2_the_swap_breaks_the_movers_five():
    st = parse_position("wwww../bb..../b...../....../....b./...... w")
    after, outcome = play(st, "04:TR-BR")  # QUIRK-PS6: the five the placement made is broken
    assert position_string(after) == "www.../bb..b./b...../...ww./....../...... b" and outcome == 0
    after, outcome = play(st, "04:BL-BR")
    assert position_string(after) == "wwwww./bb..../b...../....../.b..../...... b" and outcome == WHITE


def test_example_3_the_swap_completes_only_the_opponents_line():
    st = parse_position("w..bb./w...../w...../bbb.../....w./.....w w")
    after, outcome = play(st, "15:TR-BR")  # QUIRK-PS5
    assert position_string(after) == "w...../w...w./w....w/bbbbb./.....w/...... b" and outcome == BLACK


def test_example_4_both_players_have_a_line_a_draw():
    st = parse_position("wwwbb./....../....../bbbww./....../...... w")
    after, outcome = play(st, "55:TR-BR")
    assert position_string(after) == "wwwww./....../.....w/bbbbb./....../...... b" and outcome == DRAW


def test_example_5_a_run_of_six_wins():
    after, outcome = play(parse_position("www.ww/bbbb../..b.../....../....../...... w"), "03:BL-BR")
    assert position_string(after) == "wwwwww/bbbb../..b.../....../....../...... b" and outcome == WHITE


def test_example_6_full_board_draw_and_game_over_one_ply_early():
    st = parse_position("wbwbwb/wbwbwb/bwbwbw/bwbwbw/wbwbwb/wbwbw. b")
    assert game_over(st) and int(st[WINNER]) == 0 and len(legal(st)) == 6  # QUIRK-PS7
    assert not game_over(parse_position("wbwbwb/wbwbwb/bwbwbw/bwbwbw/wbwbwb/wbwb.. w"))
    after, outcome = play(st, "55:TL-TR")
    assert position_string(after) == "bwbwbw/bwbwbw/wbwbwb/bwbwbw/wbwbwb/wbwbwb w" and outcome == DRAW
    assert int(after[MOVE_NUMBER]) // 2 == 18 and game_over(after)


def test_example_7_illegal_moves():
    st = parse_position("w..bb./w...../w...../bbb.../....w./.....w w")
    with pytest.raises(IllegalMoveError, match=r"^'00:TL-TR': the cell 00 \(row 0, column 0\) is not empty"):
        parse_move("00:TL-TR", st)
    with pytest.raises(InvalidMoveError, match="a swap exchanges two different quadrants"):
        parse_move("11:TR-TR", st)
    assert not is_legal(st, 0, 0, 0, 1, 0) and not is_legal(st, 1, 1, 1, 1, 0)
    assert not is_legal(st, 1, 1, 0, 1, 1) and is_legal(st, 1, 1, 0, 1, 0)  # the wrong player / the right one


def test_example_8_move_lists():
    start = initial_state()
    codes = legal(start)
    assert len(codes) == 216 and codes == sorted(codes)
    texts = [move_text(c) for c in codes]
    assert texts[:6] == ["00:TL-TR", "00:TL-BL", "00:TL-BR", "00:TR-BL", "00:TR-BR", "00:BL-BR"]
    assert texts[-1] == "55:BL-BR"
    after, _ = play(start, "01:TL-BR")
    assert [move_text(c) for c in legal(after)] == [t for t in texts if not t.startswith("34:")]


def test_playing_on_after_the_end_rewrites_the_winner():
    """QUIRK-PS3 (spec §6.2): a move after White's win that leaves no line makes it a draw."""
    won, outcome = play(parse_position("wwww../bb..../b...../....../....b./...... w"), "04:BL-BR")
    assert outcome == WHITE and game_over(won)
    assert is_legal(won, 5, 5, 1, 3, 1)  # isLegal does not ask whether the game is over
    after, outcome = play(won, "55:TR-BR")
    assert outcome == DRAW and int(after[WINNER]) == DRAW
    assert position_string(after).startswith("www.../")


def test_the_framework_random_player_draws_from_a_fresh_java_random_2019():
    """QUIRK-PS9: from the empty board the first draw is index 196 (52:TR-BR), the second 03:TL-TR."""
    rng = JavaRandom(FRAMEWORK_SEED)
    start = initial_state()
    assert move_text(framework_random_move(start, rng)) == "52:TR-BR"
    assert move_text(framework_random_move(start, rng)) == "03:TL-TR"
    assert move_text(framework_random_move(start, JavaRandom(FRAMEWORK_SEED))) == "52:TR-BR"
    with pytest.raises(ValueError, match="a power of two is not ported"):
        JavaRandom(1).next_int(8)


# ---------------------------------------------------------------------------------------------
# geometry, notation


def _brute_five(bits: int) -> bool:
    on = {(x, y) for x in range(SIDE) for y in range(SIDE) if bits & cell_bit(x, y)}
    return any(all((x + i * dx, y + i * dy) in on for i in range(5))
               for x, y in on for dx, dy in ((0, 1), (1, 0), (1, 1), (1, -1)))


def _brute_swap(bits: int, a: int, b: int) -> int:
    corner = ((0, 0), (0, 3), (3, 0), (3, 3))
    out = 0
    for x in range(SIDE):
        for y in range(SIDE):
            if bits & cell_bit(x, y):
                q = (x // 3) * 2 + y // 3
                to = {a: b, b: a}.get(q, q)
                out |= cell_bit(x - corner[q][0] + corner[to][0], y - corner[q][1] + corner[to][1])
    return out


def test_lines_and_swaps_agree_with_cell_by_cell_models():
    gen = random.Random(7)
    assert len(WINDOWS) == 32 and all(bin(int(w)).count("1") == 5 for w in WINDOWS)
    for _ in range(3000):
        bits = sum(int(CELL_BIT[i]) for i in gen.sample(range(36), gen.randint(0, 20)))
        assert five_in_a_row(bits) == _brute_five(bits), bin(bits)
        assert bool(k.five_in_a_row(bits)) == _brute_five(bits)
        a, b = SWAPS[gen.randrange(6)]
        assert swap_quadrants(bits, a, b) == _brute_swap(bits, a, b) == int(k.swap_quadrants(bits, a, b))


def test_notation_round_trips_and_refuses_bad_input():
    for code in range(N_MOVE_CODES):
        assert parse_move(move_text(code), initial_state()) == code
    assert parse_move(" 23:br-tl ", initial_state()) == parse_move("23:TL-BR", initial_state())
    for bad in ("23", "63:TL-BR", "23:TL-XX", "2:TL-BR", "23-TL-BR", 23):
        with pytest.raises(InvalidMoveError, match="is not a Pentago-Swap move: a move is <row><column>:<A>-<B>"):
            parse_move(bad, initial_state())
    with pytest.raises(InvalidMoveError, match=r"^move code 216 is not a Pentago-Swap move: allowed 0\.\.215$"):
        move_text(216)
    bad_positions = {
        "....../....../....../....../...... w": "must be 6 rows of 6 cells",
        "....../....../....../....../....../.......x w": "must be 6 rows of 6 cells",
        "....../....../....../....../....../....x. w": "'x' is not a cell; allowed: . w b",
        "....../....../....../....../....../....bb w": "0 w and 2 b pieces",
        "....../....../....../....../....../....w. w": "side to move 'w' must be 'b'",
        "....../....../....../....../....../......": "expected 'ROWS SIDE'",
    }
    for text, message in bad_positions.items():
        with pytest.raises(InvalidPositionError, match=message):
            parse_position(text)


def test_boards_for_the_terminal_and_the_web():
    st, _ = play(initial_state(), "01:TL-BR")
    text = board_text(st)
    assert text.splitlines()[0] == "   0 1 2   3 4 5" and text.splitlines()[5] == "3  . . .   . w ."
    assert text.endswith("ply 1, black to move") and board_text(st, WHITE).endswith("white has won")
    assert board_text(st, DRAW).endswith("a draw")
    picture = svg(st)
    assert picture.startswith("<svg") and picture.count("<circle") == 36 and picture.count("data-quadrant") == 4
    assert 'fill="#f8f8f8" data-cell="34"' in picture and 'fill="#1f1f1f"' not in picture


# ---------------------------------------------------------------------------------------------
# H and f


def _random_positions(n: int, seed: int):
    """Positions of seeded random games that are not over, each with a legal move list."""
    gen = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st = initial_state()
        while True:
            out.append(st.copy())
            codes = legal(st)
            outcome, _ = k.apply_move(st, codes[gen.integers(len(codes))], np.zeros(4, np.uint64), k.new_work())
            if outcome:
                break
    return out[:n]


def test_h_counts_the_windows_of_one_colour():
    st = parse_position("w...../....../....../....../....../...... b")  # (0,0): a row, a column, a diagonal
    assert k.heuristic(st, WHITE) == pytest.approx(0.8 * 3 / (3 + 24), abs=1e-15)
    st = parse_position("ww..../b...../....../....../....../...... b")
    # White: row 0's two windows (2 pieces: 3, 1 piece: 1), column 1 (1), the diagonals from (0,0)
    # and (0,1) (1 each); column 0 holds Black's piece. Black: column 0's lower window (1), row 1's
    # first window (1), the diagonal from (1,0) (1). x = 7 - 3.
    assert _brute_balance(st, WHITE) == (7, 3)
    assert k.heuristic(st, WHITE) == pytest.approx(0.8 * 4 / (4 + 24), abs=1e-15)


def _brute_balance(st, me):
    """The window weights of ``me`` and of the opponent, counted window by window."""
    weight = [0, 1, 3, 9, 27]
    boards = {c: int(st[(c + 1) >> 1]) for c in (WHITE, BLACK)}
    totals = {}
    for colour in (WHITE, BLACK):
        totals[colour] = sum(weight[bin(boards[colour] & int(w)).count("1")] for w in WINDOWS
                             if boards[-colour] & int(w) == 0)
    return totals[me], totals[-me]


def test_h_is_its_rules_on_random_positions_and_antisymmetric():
    for st in _random_positions(400, 1):
        for me in (WHITE, BLACK):
            h = k.heuristic(st, me)
            assert -1.0 <= h <= 1.0 and h == -k.heuristic(st, -me)
            mine, theirs = _brute_balance(st, me)
            x = mine - theirs
            fours = {c: any(bin(int(st[(c + 1) >> 1]) & int(w)).count("1") == 4 and int(st[(1 - c) >> 1]) & int(w) == 0
                            for w in WINDOWS) for c in (WHITE, BLACK)}
            mover = int(st[TO_MOVE])
            if fours[mover]:
                assert h == (0.9 if mover == me else -0.9)
            else:
                assert h == pytest.approx(0.8 * x / (abs(x) + 24), abs=1e-15)


def test_f_is_h_after_the_move_and_leaves_the_state_alone():
    work = k.new_work()
    rng = np.zeros(4, np.uint64)
    for st in _random_positions(60, 2):
        before = st.tobytes()
        mover = int(st[TO_MOVE])
        for code in legal(st):
            f = k.objective(st, code, rng, work)
            after = st.copy()
            outcome, _ = k.apply_move(after, code, rng, work)
            expected = {0: k.heuristic(after, mover), mover: 1.0, -mover: -1.0, DRAW: 0.0}[int(outcome)]
            assert f == expected
        assert st.tobytes() == before


def test_f_wins_loses_and_sees_the_open_four_it_leaves():
    rng, work = np.zeros(4, np.uint64), k.new_work()

    def f(pos, move):
        st = parse_position(pos)
        return k.objective(st, parse_move(move, st), rng, work)

    assert f("wwww../bb..../b...../....../....b./...... w", "04:BL-BR") == 1.0  # makes White's five
    assert f("wwww../bb..../b...../....../....b./...... w", "04:TR-BR") < 0.9  # the swap breaks it
    assert f("w..bb./w...../w...../bbb.../....w./.....w w", "15:TR-BR") == -1.0  # QUIRK-PS5
    assert f("wwwbb./....../....../bbbww./....../...... w", "55:TR-BR") == 0.0  # both fives: a draw
    # Black has four on row 3 with (3,4) empty: a White move elsewhere that keeps rows 3-5 leaves it
    # an open four (-0.9); placing on (3,4) and swapping the top quadrants blocks both windows
    pos = "w..w../.w..w./....../bbbb../....../...... w"
    assert f(pos, "55:TL-TR") == -0.9
    assert -0.9 < f(pos, "34:TL-TR") < 0.9


# ---------------------------------------------------------------------------------------------
# every agent plays it


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


PENTAGO_GAME = ("game", "--game", "pentago-swap", "--p1", "mcts-co", "--p2", "vanilla", "--seed", "3",
                "--budget", "iterations", "--iterations", "40", "--json")


def test_a_pentago_swap_game_names_its_game_and_replays_exactly():
    result = invoke(*PENTAGO_GAME)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["game"] == "pentago-swap"
    assert all(len(move) == 8 and move[2] == ":" for move in record["moves"])
    assert record["termination"] in ("victory", "draw") and record["plies"] == len(record["moves"])
    assert json.loads(invoke(*PENTAGO_GAME).stdout)["moves"] == record["moves"]
    walk(record)
    assert first_difference(record) is None


@pytest.mark.parametrize("p1, p2", [("alphabeta", "random"), ("heuristics", "mcts-solver")])
def test_every_kind_of_agent_plays_pentago_swap(p1, p2):
    args = ("game", "--game", "pentago-swap", "--p1", p1, "--p2", p2, "--seed", "5", "--budget", "iterations",
            "--iterations", "30", "--json")
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    walk(record)
    assert first_difference(record) is None


def test_the_registry_serves_pentago_swap():
    game = registry.get("pentago-swap")
    assert game.values.NAME == "pentago-swap" and game.paper_params() == {"k": 10, "m": 10, "d": 0.9}
    assert set(game.device_costs()) == {"node", "random_ply", "solver_call", "solver_move", "iteration"}


def test_random_move_draws_what_the_templates_default_draws():
    """The override must change no game: the same move and the same generator state afterwards as
    ``legal_move_codes`` then a pick among the unbanned (one candidate: no draw)."""
    from boopexp.engine.rng import rand_below, seeded_words

    gen = np.random.default_rng(3)
    work = k.new_work()
    for i, st in enumerate(_random_positions(300, 4)):
        banned = np.zeros(N_MOVE_CODES, np.bool_)
        if i % 3:  # some masks: a few codes, or all but one or two legal moves
            codes = legal(st)
            keep = 1 + i % 2 if i % 3 == 2 else len(codes) - 5
            banned[gen.choice(codes, size=len(codes) - keep, replace=False)] = True
        ours, theirs = seeded_words(i, 4), seeded_words(i, 4)
        unbanned = [c for c in legal(st) if not banned[c]]
        expected = -1 if not unbanned else unbanned[0] if len(unbanned) == 1 else unbanned[
            rand_below(theirs, len(unbanned))]
        assert k.random_move(st, banned, ours, work) == expected
        assert ours.tobytes() == theirs.tobytes()
    full = np.ones(N_MOVE_CODES, np.bool_)
    assert k.random_move(initial_state(), full, seeded_words(0, 4), work) == -1


def test_a_pentago_swap_config_runs_exports_and_imports(tmp_path):
    """A config with ``game: pentago-swap`` plays with the game's defaults; its games export with
    moves like ``23:TL-BR`` in the text format and import again, each played again by search."""
    config = tmp_path / "ps.yaml"
    config.write_text("name: ps-smoke\nseed: 1\ngames_per_side: 1\ngame: pentago-swap\n"
                      "budget: {mode: iterations, iterations: 20}\npairings: [[mcts-co, random]]\n")
    out = tmp_path / "out"
    result = invoke("run", str(config), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    from boopexp.experiments.store import StoreReader

    records = StoreReader(out).records().records
    assert len(records) == 2 and all(r["game"] == "pentago-swap" for r in records)
    spec = records[0]["p1_spec"] if records[0]["p1"] == "mcts-co" else records[0]["p2_spec"]
    assert spec["params"]["preselect_m"] == 10 and spec["params"]["co_playout_plies"] == 10  # the game's m, k
    text = tmp_path / "ps.txt"
    assert invoke("export", str(out), "--out", str(text), "--format", "text").exit_code == 0
    assert '[Game "pentago-swap"]' in text.read_text()
    imported = invoke("import", str(text), "--out", str(tmp_path / "imported"))
    assert imported.exit_code == 0, imported.output
    assert "2 games imported" in imported.output and "2 played again by search" in imported.output
