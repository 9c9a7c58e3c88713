"""The two-stage CO constraint (boopexp/engine/lookahead.py) against brute force.

Brute force: for every legal move, play it with the engine (``rules.apply_move``, REAL, the
promotion heuristic on a copy of the same generator), then play every reply of the opponent
with the engine and see whether it wins. A plain double loop in Python, sharing nothing with
the kernel but the rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from boopexp.engine import rules
from boopexp.engine.buffers import new_work
from boopexp.engine.lookahead import N_COUNTS, N_LEGAL, N_REPLIES, N_UNSAFE, safe_mask, winning_reply
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import N_MOVE_CODES, N_SQUARES, TO_MOVE
from boopexp.game.notation import parse_position, parse_square
from boopexp.game.position import Position


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



def test_how_often_the_plain_objective_walks_into_a_threat():
    """docs/beyond.md's count: of the 200 bench positions and 600 random ones (seed 1), how many
    have both an unsafe and a safe move, and in how many of those one of the plain objective's
    optimal moves is unsafe (the case where the check changes the solver's choice)."""
    from boopexp.engine.objective import score_moves
    from boopexp.game.positions import sample_positions

    work = new_work()
    no_mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
    threats = traps = 0
    for st in [*sample_positions(), *_random_positions(600, 1)]:
        rng = np.array([1, 2, 3, 4], dtype=np.uint64)
        unsafe, counts = safe_mask(st, rng=rng, work=work)
        if not 0 < counts[N_UNSAFE] < counts[N_LEGAL]:
            continue
        threats += 1
        n = score_moves(st, no_mask, rng.copy(), work.ctx, work.groups, work.scores, work.ties, work.codes,
                        work.values)
        best = work.values[:n].max()
        traps += any(unsafe[work.codes[i]] for i in range(n) if work.values[i] == best)
    assert (threats, traps) == (196, 2)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_positions_against_brute_force(seed):
    positions = _random_positions(40, seed)
    work = new_work()
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


def test_work_buffers_hold_the_counts():
    assert new_work().la_counts.shape == (N_COUNTS,)


# ---------------------------------------------------------------------------------------------
# in the agents: co_lookahead at every solver call site of MCTS (boopexp/engine/mcts.py)

# Two positions where the PLAIN objective's optimal moves all hand the opponent a win in one
# (found among seeded random positions; most threats the objective already parries):
# Red to move, optimal moves e6 and d1 (codes 30, 33), both unsafe; 4 of 27 moves are unsafe.
TRAP_RED = "....r./.r..../..rB../.B..../...B.B/.rr... 2,2 3,0 r 6,0 31"
# Blue to move, the optimal move is the large E5 (code 64), unsafe; 2 of 48 moves are safe.
TRAP_BLUE = ".B..../....R./.B..../..RrBR/R..R../B.B..b 1,1 1,1 b 6,6 46"


def _kit(name: str = "mcts-co2", seed: int = 0, **overrides):
    from mcts_helpers import Kit, cfg_of

    return Kit(cfg_of(name, **overrides), seed=seed)


def _expanded_move(st, seed: int, **overrides) -> int:
    """The move the Expansion injection adds under a root with no children yet."""
    from mcts_helpers import hand_root

    kit = hand_root(_kit(seed=seed, **overrides), st)
    kit.iterate(1)
    return int(kit.tree.move[kit.children(0)[0]])


@pytest.mark.parametrize("text", [TRAP_RED, TRAP_BLUE])
def test_expansion_never_hands_a_win_in_one_when_a_safe_move_exists(text):
    st = parse_position(text)
    unsafe = brute_unsafe(st, RNG)
    assert 0 < len(unsafe) < len(_codes(st))
    plain = {_expanded_move(st, seed, co_lookahead=0) for seed in range(6)}
    assert plain <= unsafe  # the paper's solver walks into the trap ...
    for seed in range(6):
        assert _expanded_move(st, seed) not in unsafe  # ... the two-stage one does not


@pytest.mark.parametrize("text", [TRAP_RED, TRAP_BLUE])
def test_selection_keeps_only_safe_moves(text):
    st = parse_position(text)
    unsafe = brute_unsafe(st, RNG)
    safe = set(_codes(st)) - unsafe
    for la in (0, 1):
        kit = _kit(co_lookahead=la).init_root(st)
        kept = {int(kit.tree.move[c]) for c in kit.children() if not kit.tree.masked[c]}
        assert len(kept) == min(5, len(safe) if la else len(_codes(st)))
        if la:
            assert kept <= safe
        else:
            assert kept & unsafe  # the paper's pre-selection keeps the trap


@pytest.mark.parametrize("text", [TRAP_RED, TRAP_BLUE])
def test_playout_first_solver_ply_is_safe(text):
    from mcts_helpers import hand_root

    st = parse_position(text)
    for seed in range(4):
        outcome = {}
        for la in (0, 1):
            # a one-ply playout: its solver move is the only move; the playout state is left after it
            kit = hand_root(_kit(seed=seed, co_lookahead=la, co_playout_plies=1, playout_depth=1), st)
            node = kit.create(0, _codes(st)[0])  # any child: the playout starts from the ROOT's state below
            kit.tree.states[node][:] = st
            kit.tree.player[0] = st[TO_MOVE]  # the playout's perspective: irrelevant here
            kit.playout(node)
            after = kit.work.playout
            outcome[la] = winning_reply(after, after.copy())[0] >= 0
        assert outcome == {0: True, 1: False}


@pytest.mark.parametrize("text", [TRAP_RED, TRAP_BLUE])
def test_mcts_co2_search_chooses_a_safe_move(text):
    from boopexp.agents.budget import Budget, device_costs
    from boopexp.engine import mcts

    st = parse_position(text)
    unsafe = brute_unsafe(st, RNG)
    for seed in range(3):
        code, tel = mcts.search(st, _kit().cfg, Budget(mode="iterations", iterations=30), device_costs("android-2023"),
                                new_rng_state(seed))
        assert code not in unsafe
        assert tel["lookahead_replies"] > 0


@pytest.mark.parametrize("seed", [5, 6])
def test_random_positions_solver_call_sites_against_brute_force(seed):
    """Through the compiled call sites, on random positions: Selection keeps only safe moves and
    Expansion adds a safe one whenever a safe move exists (brute force decides which are)."""
    positions = _random_positions(25, seed)
    gen = np.random.default_rng(seed)
    checked = 0
    for st in positions:
        s = int(gen.integers(1000))
        kit = _kit(seed=s)
        # the generator the check copies: the root children's promotions may draw before it (a tie
        # between promotion groups), which could only change a move's safety in such a tie
        rng = kit.rng.copy()
        kit.init_root(st)
        unsafe = brute_unsafe(st, rng)
        legal = set(_codes(st))
        kept = {int(kit.tree.move[c]) for c in kit.children() if not kit.tree.masked[c]}
        if unsafe == legal:
            assert len(kept) == min(5, len(legal))  # nothing is safe: the plain objective decides
        else:
            assert kept and not kept & unsafe
            checked += bool(unsafe)
        from mcts_helpers import hand_root

        kit = hand_root(_kit(seed=s), st)
        rng = kit.rng.copy()
        kit.iterate(1)
        move = int(kit.tree.move[kit.children(0)[0]])
        assert move not in brute_unsafe(st, rng) or brute_unsafe(st, rng) == legal
    assert checked >= 2


def test_co_lookahead_zero_reports_no_lookahead_telemetry():
    """The paper's agents report what they always did (their bit-identity: tests/test_golden.py
    and the committed games replayed in tests/test_results.py)."""
    from boopexp.agents.budget import Budget, device_costs
    from boopexp.engine import mcts

    st = parse_position(TRAP_BLUE)
    cfg = _kit("mcts-co").cfg
    assert cfg.co_lookahead == 0
    code, tel = mcts.search(st, cfg, Budget(mode="iterations", iterations=20), device_costs("android-2023"),
                            new_rng_state(1))
    assert "lookahead_replies" not in tel and "lookahead_moves" not in tel


def test_device_charge_of_the_check():
    """The device clock of an mcts-co2 search, rebuilt from its telemetry: the paper's primitives
    plus, per check (one before each solver call), one solver call and
    (moves examined + replies tested) × solver_move × r."""
    from boopexp.agents.budget import DEVICE_PROFILES, LOOKAHEAD_RATIO, Budget, device_costs
    from boopexp.engine import mcts

    p = DEVICE_PROFILES["android-2023"]
    assert p.lookahead_ratio == LOOKAHEAD_RATIO and device_costs(p)[-1] == LOOKAHEAD_RATIO
    for text in (TRAP_RED, TRAP_BLUE, THREAT):
        _, tel = mcts.search(parse_position(text), _kit().cfg, Budget(mode="iterations", iterations=15),
                             device_costs(p), new_rng_state(2))
        paper = (tel["iterations"] * p.iteration + tel["nodes_created"] * p.node + tel["playout_plies"] * p.random_ply
                 + tel["solver_calls"] * p.solver_call + tel["solver_moves"] * p.solver_move)
        checks = tel["solver_calls"] * p.solver_call + (tel["lookahead_moves"] + tel["lookahead_replies"]) \
            * p.solver_move * p.lookahead_ratio
        assert tel["device_seconds"] == pytest.approx((paper + checks) / 1e6, rel=1e-12)
        assert tel["lookahead_replies"] > tel["lookahead_moves"] > 0


def test_a_check_costs_more_device_time_so_fewer_iterations_fit():
    from boopexp.agents.budget import Budget, device_costs
    from boopexp.engine import mcts

    st = parse_position(TRAP_BLUE)
    budget = Budget(mode="device", seconds=0.5)
    its = {}
    for name in ("mcts-co", "mcts-co2"):
        _, tel = mcts.search(st, _kit(name).cfg, budget, device_costs("android-2023"), new_rng_state(3))
        its[name] = tel["iterations"]
    assert its["mcts-co2"] < its["mcts-co"]


def test_a_game_with_mcts_co2_reports_its_checks_and_replays():
    """Both agents' moves carry the check counts (zero for the agent without it), so the stored
    record keeps its telemetry column-wise; the game replays from its identity."""
    from conftest import without_timing

    from boopexp.agents.budget import Budget
    from boopexp.agents.specs import resolve_agent
    from boopexp.play.contract import GameTask, pack_record
    from boopexp.play.match import play_game

    task = GameTask("t", "0" * 16, "mcts-co2 vs heuristics", 0, resolve_agent("mcts-co2"),
                    resolve_agent("heuristics"), Budget(mode="iterations", iterations=4), "code-0.6.2", 11)
    rec = play_game(task)
    assert all(list(t)[-4:] == ["lookahead_moves", "lookahead_replies", "device_seconds", "host_cpu_seconds"]
               for t in rec["telemetry"])
    mine = [t for t in rec["telemetry"] if t["agent"] == "mcts-co2"]
    theirs = [t for t in rec["telemetry"] if t["agent"] == "heuristics"]
    assert all(t["lookahead_replies"] > 0 for t in mine) and all(t["lookahead_replies"] == 0 for t in theirs)
    assert isinstance(pack_record(rec)["telemetry"], dict)
    assert without_timing(play_game(task)) == without_timing(rec)
