"""``boopexp play``: the session library, the dialogue through CliRunner input, and one real terminal."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_cli_play import TINY_BUDGETS

from boopexp.agents.budget import Budget
from boopexp.agents.specs import resolve_agent
from boopexp.errors import IllegalMoveError
from boopexp.experiments.store import StoreReader
from boopexp.game import notation
from boopexp.game.position import Move, Position
from boopexp.game.sides import Colour
from boopexp.interfaces import play_store
from boopexp.interfaces.cli import main
from boopexp.play import session as play_session
from boopexp.play.settings import GameSettings

BUDGET = Budget(mode="iterations", iterations=3)
CLI_BUDGET = ("--budget", "iterations", "--iterations", "3")


def _session(tmp_path, agent="random", colour=Colour.BLUE, seed=0):
    return play_store.new_session(GameSettings("play", seed, BUDGET), resolve_agent(agent), colour, tmp_path)


def winning_inputs(tmp_path, agent="random", seed=0, colour=Colour.BLUE):
    """What a human types to win a game against ``agent``: the CO solver's best move each turn and,
    when a move lines up several groups, the second group (typed as its number).

    The game is deterministic given the seed and the human's moves, so the same lines typed into
    ``boopexp play`` replay this very game. Returns (lines, the finished session, promotion plies).
    """
    session = _session(tmp_path, agent, colour, seed)
    lines, promotions = [], []
    while not session.over:
        if not session.human_to_move:
            session.play_agent()
            continue
        move, _ = Position(session.state).best_move(rng=len(session.moves))
        choices = session.promotion_choices(move)
        lines.append(str(move))
        choice = None
        if choices:
            choice = 1
            lines.append("2")
            promotions.append((len(session.moves) + 1, choices[1]))
        session.play_human(move, choice)
    assert session.winner == colour, "the scripted human should win this game"
    return lines, session, promotions


def play(tmp_path, lines, *args):
    out = tmp_path / "store"
    result = CliRunner().invoke(main, ["play", "--out", str(out), *CLI_BUDGET, *args], input="\n".join(lines) + "\n")
    return result, out


# -- the session ----------------------------------------------------------------------------


def test_session_plays_undoes_and_records(tmp_path):
    s = _session(tmp_path)
    assert s.human_to_move and s.undo() == 0
    view = s.play_human(Move.parse("c3"))
    assert view.text == "c3" and view.colour is Colour.BLUE and not s.human_to_move
    reply = s.play_agent()
    assert reply.colour is Colour.RED and reply.telemetry["agent"] == "random"
    with pytest.raises(IllegalMoveError, match="occupied"):
        s.parse("c3")
    with pytest.raises(IllegalMoveError, match="no large piece"):
        s.parse("C4")
    assert s.undo() == 2 and s.moves == [] and s.human_to_move
    np.testing.assert_array_equal(s.state, Position.initial().state)


def test_pushes_are_read_off_the_engine():
    st = Position.from_string("....../....../..b.../....../....../...... 7,0 8,0 r").state
    after, pushes = play_session.pushes_of(st, 1, 6 * 3 + 3)  # d3 pushes c4 up-left to b5
    assert pushes == ((6 * 2 + 2, 6 * 1 + 1),)
    st = Position.from_string("b...../....../....../....../....../...... 7,0 8,0 r").state
    _, pushes = play_session.pushes_of(st, 1, 7)  # b5 pushes a6 off the board
    assert pushes == ((0, None),)


def test_hint_does_not_change_the_agents_play(tmp_path):
    def game(with_hints):
        s = _session(tmp_path, agent="vanilla")
        for _ in range(3):
            if with_hints:
                s.hint()
            move = Position(s.state).legal_moves()[0]
            s.play_human(move, 0 if s.promotion_choices(move) else None)
            s.play_agent()
        return s.moves

    assert game(False) == game(True)


# -- the command, through its input ---------------------------------------------------------


def test_a_whole_game_to_a_win_is_saved_and_replays(tmp_path):
    lines, session, promotions = winning_inputs(tmp_path)
    result, out = play(tmp_path, lines, "--agent", "random")
    assert result.exit_code == 0, result.output
    assert f"You win in {len(session.moves)} plies." in result.output
    assert "Traceback" not in result.output
    records = StoreReader(out).records().records
    assert len(records) == 1
    record = records[0]
    assert (record["p1"], record["p2"], record["winner"]) == ("human", "random", "p1")
    assert record["p1_spec"] == {"name": "human", "kind": "human"} and record["experiment"] == "play"
    assert record["moves"] == session.moves and len(record["telemetry"]) == record["plies"]
    assert record["telemetry"][0]["agent"] == "human" and record["telemetry"][1]["agent"] == "random"
    replay = CliRunner().invoke(main, ["replay", str(out), "--pairing", "human vs random", "--game", "0"])
    assert replay.exit_code == 0 and "as recorded" in replay.output, replay.output
    search = CliRunner().invoke(main, ["replay", str(out), "--pairing", "human vs random", "--game", "0", "--search"])
    assert search.exit_code == 2 and "played by a human" in search.output
    # the next game against the same agent is the pairing's game 1
    again, _ = play(tmp_path, ["quit"], "--agent", "random")
    assert again.exit_code == 0 and "not saved" in again.output


def test_a_promotion_choice_is_listed_numbered_and_recorded(tmp_path):
    lines, session, promotions = winning_inputs(tmp_path)
    assert promotions, "this scripted game should include a promotion choice"
    ply, group = promotions[0]
    first = lines.index("2")
    lines = lines[:first] + ["99", "two"] + lines[first:]  # two bad answers first: one line each, asked again
    result, out = play(tmp_path, lines, "--agent", "random")
    assert result.exit_code == 0, result.output
    assert "groups; choose the one to promote:" in result.output
    assert f"  2) {notation.group_name(group)}" in result.output
    assert result.output.count("Choose a number from 1 to") == 2
    (record,) = StoreReader(out).records().records
    chosen = record["moves"][ply - 1].split(":")[1]
    assert chosen == "".join(notation.group_name(group).split())


def test_an_illegal_move_is_one_line_and_a_new_prompt(tmp_path):
    result, out = play(tmp_path, ["c3", "c3", "C4", "z9", "quit"], "--agent", "random")
    assert result.exit_code == 0, result.output
    assert "Not a legal move: 'c3' is illegal: the square is occupied." in result.output
    assert "Not a legal move: 'C4' is illegal: blue has no large piece in the pool." in result.output
    assert "'z9' is neither a move nor a command" in result.output
    assert result.output.count("Blue to move (ply 3) >") == 4
    assert "Traceback" not in result.output and not (out / "games.jsonl").exists()


def test_undo_takes_back_a_full_move(tmp_path):
    result, out = play(tmp_path, ["undo", "c3", "undo", "d4", "quit"], "--agent", "random")
    assert result.exit_code == 0, result.output
    assert "Nothing to undo: you have not moved yet." in result.output
    assert "Took back 2 plies." in result.output
    assert "ply 1: Blue (you) plays d4" in result.output  # d4 is ply 1 again
    assert "Game abandoned after 2 plies; not saved." in result.output


def test_undo_as_red_stops_at_the_agents_first_move(tmp_path):
    first = _session(tmp_path, colour=Colour.RED).play_agent().text  # the agent's opening, to avoid its square
    mine = "a1" if first != "a1" else "f6"
    result, _ = play(tmp_path, [mine, "undo", "quit"], "--agent", "random", "--second")
    assert result.exit_code == 0, result.output
    assert "You are Red (second)" in result.output and "Took back 2 plies." in result.output
    assert "Game abandoned after 1 plies; not saved." in result.output


def test_quit_hint_and_end_of_input(tmp_path):
    result, out = play(tmp_path, ["hint", "moves", "help", "quit"], "--agent", "heuristics")
    assert result.exit_code == 0, result.output
    assert "Hint: mcts-co would play" in result.output and "3 iterations" in result.output
    assert "Legal moves: a6 b6" in result.output and "Commands:" in result.output
    assert "not saved" in result.output and not out.exists()
    eof, _ = play(tmp_path, ["c3"], "--agent", "random")  # input ends: a quit, no traceback
    assert eof.exit_code == 0 and "not saved" in eof.output
    hinted, _ = play(tmp_path, ["quit"], "--agent", "random", "--hint")
    assert "Hint: mcts-co would play" in hinted.output


def test_the_agents_telemetry_line_is_shown(tmp_path):
    result, _ = play(tmp_path, ["c3", "quit"], "--agent", "vanilla")
    assert "  vanilla: 3 iterations" in result.output and "device-s" in result.output


def test_bad_options_are_one_line(tmp_path):
    result = CliRunner().invoke(main, ["play", "--agent", "vanila", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown agent 'vanila'" in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- a real terminal --------------------------------------------------------------------------


def _read_until(fd, needle: bytes, buf: bytearray, deadline: float) -> None:
    """Read the pty until ``needle`` shows (a generous deadline only guards against a hang)."""
    while needle not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} never came; got:\n{buf.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"EOF before {needle!r}; got:\n{buf.decode(errors='replace')}")
            buf.extend(chunk)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_play_in_a_real_pseudo_terminal(tmp_path):
    import pty

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "boopexp", "play", "--agent", "random", *CLI_BUDGET, "--out", str(tmp_path)],
        stdin=secondary, stdout=secondary, stderr=secondary, close_fds=True,
    )
    os.close(secondary)
    buf = bytearray()
    deadline = time.monotonic() + 120
    try:
        _read_until(primary, b"Blue to move (ply 1) > ", buf, deadline)
        os.write(primary, b"c3\n")
        _read_until(primary, b"Blue to move (ply 3) > ", buf, deadline)
        os.write(primary, b"c3\n")
        _read_until(primary, b"the square is occupied", buf, deadline)
        os.write(primary, b"quit\n")
        _read_until(primary, b"not saved", buf, deadline)
        assert proc.wait(timeout=max(1.0, deadline - time.monotonic())) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(primary)
    text = buf.decode(errors="replace")
    assert "ply 1: Blue (you) plays c3" in text and "[b]" in text
    assert "random is thinking..." in text  # the spinner, drawn on the terminal only
    assert "Traceback" not in text


def test_play_a_variant_declared_in_a_config(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nseed: 5\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
                      "agents: {co-wide: {base: mcts-co, uct_c: 1.0}}\npairings: [[co-wide, random]]\n")
    result = CliRunner().invoke(main, ["play", "--config", str(config), "--agent", "co-wide", "--second",
                                       "--out", str(tmp_path / "s")], input="quit\n")
    assert result.exit_code == 0, result.output
    assert "against co-wide" in result.output and "  co-wide: 2 iterations" in result.output
    unknown = CliRunner().invoke(main, ["play", "--config", str(config), "--agent", "nobody"])
    assert unknown.exit_code == 2 and "unknown agent 'nobody'" in unknown.output


BROKEN_AGENTS = [
    ("raises", "    def choose(self, position, rng):\n        raise RuntimeError('no idea')\n",
     "RuntimeError: no idea", None),
    # sys.exit() too is the plugin's forfeit, not the end of the session; its prints stay in the record
    ("prints then exits", "    def choose(self, position, rng):\n        print('giving up')\n"
                          "        raise SystemExit('bye')\n", "SystemExit: bye", {"p2": "giving up\n"}),
]


@pytest.mark.parametrize("choose,error,output", [b[1:] for b in BROKEN_AGENTS], ids=[b[0] for b in BROKEN_AGENTS])
def test_a_plugin_agent_that_fails_forfeits_and_the_game_is_saved(tmp_path, choose, error, output):
    module = f"broken_agent_{len(error)}"  # one module name per case: a module is imported once per process
    (tmp_path / f"{module}.py").write_text(f"class Broken:\n{choose}\ndef make():\n    return Broken()\n")
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nseed: 5\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
                      f"agents: {{broken: {{plugin: \"{module}:make\"}}}}\npairings: [[broken, random]]\n")
    out = tmp_path / "s"
    result = CliRunner().invoke(main, ["play", "--config", str(config), "--agent", "broken", "--out", str(out)],
                                input="c3\n")
    assert result.exit_code == 0, result.output
    assert f"broken forfeits (agent_error): {error}" in result.output
    assert "You win in 1 plies." in result.output and "giving up" not in result.output

    (record,) = StoreReader(out).records().records
    assert record["winner"] == "p1" and record["termination"] == "agent_error" and record["moves"] == ["c3"]
    assert record.get("plugin_output") == output


def test_the_ply_cap_ends_the_game_and_is_recorded(tmp_path):
    """``--max-plies`` (or a config's max_plies) caps a human game as it caps a run's games."""
    capped = GameSettings("play", budget=BUDGET, max_plies=3)
    session = play_store.new_session(capped, resolve_agent("random"), Colour.BLUE, tmp_path / "probe")
    lines = []
    while not session.over:
        if session.human_to_move:
            move, _ = Position(session.state).best_move(rng=len(session.moves))
            lines.append(str(move))
            session.play_human(move)
        else:
            session.play_agent()
    assert len(session.moves) == 3 and session.winner is None
    result, out = play(tmp_path, lines, "--agent", "random", "--max-plies", "3")
    assert result.exit_code == 0, result.output
    assert "No winner after 3 plies (the ply cap)." in result.output
    (record,) = StoreReader(out).records().records
    assert record["moves"] == session.moves and record["max_plies"] == 3 and record["winner"] is None
    assert record["config_hash"] == session.task.config_hash
    # the default cap keeps the hash a game against the same agent always had
    default = play_store.new_session(capped.replace(max_plies=None), resolve_agent("random"), Colour.BLUE,
                                     tmp_path / "probe")
    assert default.task.config_hash != session.task.config_hash and default.task.ply_cap == 1000
    bad = CliRunner().invoke(main, ["play", "--max-plies", "0", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--max-plies 0" in bad.output


@pytest.mark.parametrize("mode", sorted(TINY_BUDGETS))
def test_play_in_every_budget_mode(tmp_path, mode):
    """``play --budget cpu`` was an ImportError (the throttle was looked up where it no longer lives)."""
    out = tmp_path / "store"
    result = CliRunner().invoke(main, ["play", "--agent", "vanilla", "--budget", mode, *TINY_BUDGETS[mode],
                                       "--out", str(out)], input="c3\nquit\n")
    assert result.exit_code == 0, result.output
    assert "ply 2: Red (vanilla) plays" in result.output and "  vanilla: " in result.output
    assert "Game abandoned after 2 plies; not saved." in result.output


# -- issue 20 item 5: --out is checked before the first move; a finished game is never lost ----


def test_an_unwritable_out_is_refused_before_the_first_move(tmp_path):
    (tmp_path / "afile").write_text("not a folder\n")
    out = tmp_path / "afile" / "store"
    result = CliRunner().invoke(main, ["play", "--out", str(out), *CLI_BUDGET, "--agent", "random"],
                                input="c3\nquit\n")
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: cannot write the results folder {str(out)!r}: Not a directory; "
                             "choose another --out\n")
    assert "to move" not in result.output and "ply 1" not in result.output  # nothing played
    assert (tmp_path / "afile").read_text() == "not a folder\n"


def test_checking_out_leaves_no_folder_behind(tmp_path):
    out = tmp_path / "new" / "deeper" / "store"
    result = CliRunner().invoke(main, ["play", "--out", str(out), *CLI_BUDGET], input="quit\n")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "new").exists()


def test_a_finished_game_is_kept_when_out_breaks_during_the_game(tmp_path, monkeypatch):
    """The folder is replaced by a file before the last move: the game goes to a rescue store."""
    lines, session, _ = winning_inputs(tmp_path / "probe")
    out = tmp_path / "store"
    out.mkdir()
    feed = iter(enumerate(lines, start=1))

    def typed(prompt: str) -> str:
        n, line = next(feed)
        if n == len(lines):  # the line that wins: the store's folder goes away first
            out.rmdir()
            out.write_text("in the way\n")
        return line

    monkeypatch.setattr("builtins.input", typed)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["play", "--out", str(out), *CLI_BUDGET, "--agent", "random"])
    assert f"You win in {len(session.moves)} plies." in result.output
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    rescue = sorted(tmp_path.glob("boopexp-play-unsaved-*"))
    assert len(rescue) == 1, line
    assert line.startswith(f"Error: cannot write the results folder {str(out)!r}: ")
    assert line.endswith(f"; the finished game is saved in {rescue[0].name!r} instead")
    (record,) = StoreReader(rescue[0]).records().records
    assert record["moves"] == session.moves and record["winner"] == "p1"
    replay = CliRunner().invoke(main, ["replay", str(rescue[0]), "--pairing", "human vs random", "--game", "0"])
    assert replay.exit_code == 0 and "as recorded" in replay.output, replay.output


# -- issue 20 item 13: play/replay papercuts ------------------------------------------------


def _hints(output: str) -> list[str]:
    """Each hint shown: its move and search counts (not the host CPU time, which varies)."""
    import re

    return re.findall(r"Hint: mcts-co would play (\S+ \(.*), [0-9.]+ s host CPU\)", output)


def test_a_hint_is_shown_once_per_position_and_is_the_same_every_time(tmp_path):
    # --hint: once at the prompt, not again after an empty line or a bad input; `hint` repeats it
    result, _ = play(tmp_path, ["", "zz", "hint", "quit"], "--agent", "random", "--hint")
    assert result.exit_code == 0, result.output
    hints = _hints(result.output)
    assert len(hints) == 2 and hints[0] == hints[1], result.output
    # a position's hint does not depend on the hints asked before it (seeded by the game and ply)
    asked_early, _ = play(tmp_path, ["hint", "hint", "c3", "hint", "quit"], "--agent", "random")
    asked_late, _ = play(tmp_path, ["c3", "hint", "quit"], "--agent", "random")
    early, late = _hints(asked_early.output), _hints(asked_late.output)
    assert len(early) == 3 and early[0] == early[1] and early[2] == late[0], (early, late)


def test_a_long_input_line_is_echoed_shortened(tmp_path):
    result, _ = play(tmp_path, ["x" * 1_000_000, "quit"], "--agent", "random")
    assert result.exit_code == 0
    (line,) = [line for line in result.output.splitlines() if "neither a move nor a command" in line]
    assert len(line) < 200, line[:300]
    assert line.endswith(" > '" + "x" * 36 + "... is neither a move nor a command: type c3 (a small piece), "
                         "C3 (a large one) or help.")


def _readme_replay_command() -> list[str]:
    """The README's replay of a played game, as written (``boopexp replay results/play ...``)."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"`(boopexp replay results/play [^`]*)`", readme.replace("\n", " "))
    words = shlex.split(command)
    assert words[:2] == ["boopexp", "replay"]
    return words[1:]


def test_the_readmes_replay_of_a_played_game_works_in_a_folder_holding_two_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = _readme_replay_command()
    agent = args[args.index("--pairing") + 1].split(" vs ")[1]
    for iterations in ("3", "4"):  # two settings: the same pairing under two settings hashes
        played = CliRunner().invoke(main, ["play", "--agent", agent, "--budget", "iterations", "--iterations",
                                           iterations, "--max-plies", "2"], input="c3\n")
        assert played.exit_code == 0 and "No winner after 2 plies" in played.output, played.output
    records = StoreReader(tmp_path / "results" / "play").records().records
    assert len({r["config_hash"] for r in records}) == 2
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "2 legal moves replayed" in result.output and "as recorded" in result.output
    assert sorted(r["game_index"] for r in records) == [0, 1]  # a played game's number is unique per pairing


# -- games other than boop. (docs/games.md: play --game) --------------------------------------


def _game_session(tmp_path, game, agent="random", colour=Colour.BLUE, seed=0, start=None):
    from boopexp.games import registry

    spec = resolve_agent(agent, params=registry.get(game).paper_params())
    return play_session.PlaySession(GameSettings("play", seed, BUDGET, game=game), spec, colour, start=start)


def connect_four_inputs(tmp_path, seed=0):
    """What a human types to beat the random agent at Connect Four: a move of best f each turn
    (the game is deterministic given the seed and the human's moves). Returns (lines, session)."""
    session = _game_session(tmp_path, "connect-four", seed=seed)
    lines = []
    while not session.over:
        if not session.human_to_move:
            session.play_agent()
            continue
        position = session.position()
        move = max(position.legal_moves(), key=lambda m: position.objective(m, rng=0))
        lines.append(move)
        session.play_human(*session.parse(move))
    return lines, session


def test_a_connect_four_session_plays_undoes_hints_and_records(tmp_path):
    from boopexp.errors import InvalidMoveError

    s = _game_session(tmp_path, "connect-four")
    assert s.human_to_move and s.ply == 1 and not s.boop
    assert s.parse("D") == (3, None) and s.promotion_choices(3) == []
    with pytest.raises(InvalidMoveError, match="'h' is not a Connect Four move"):
        s.parse("h")
    hint, telemetry = s.hint()
    assert hint in "abcdefg" and telemetry["iterations"] == 3
    view = s.play_human(3)
    assert view.text == "d" and view.square == 3 and view.pushes == () and not s.human_to_move
    reply = s.play_agent()
    assert reply.colour is Colour.RED and reply.text in "abcdefg" and s.ply == 3
    assert s.undo() == 2 and s.moves == [] and s.ply == 1
    s.play_human(*s.parse("a"))
    s.play_agent()
    record = s.record()
    assert record["game"] == "connect-four" and record["moves"][0] == "a" and record["winner"] is None


def test_a_drawn_game_of_your_own_is_over_and_recorded_as_a_draw(tmp_path, monkeypatch):
    """Tic-tac-toe (examples/tictactoe) from a start one move from a full board: the human's last
    move draws; the session is over, its record a draw."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "examples"))
    s = _game_session(tmp_path, "tictactoe.game", start="xox/xoo/ox. x")
    view = s.play_human(*s.parse("c1"))
    assert view.draw and s.draw and s.over and s.winner is None
    record = s.record()
    assert record["termination"] == "draw" and record["winner"] is None and record["start"] == "xox/xoo/ox. x"


def test_play_connect_four_through_the_terminal_dialogue(tmp_path):
    """``boopexp play --game connect-four``: the game's board, moves typed in its notation, a bad
    line answered with one line naming the legal moves, and the finished game saved and walked."""
    from boopexp.play.replay import walk

    lines, session = connect_four_inputs(tmp_path)
    assert session.winner is Colour.BLUE  # best f beats random moves
    typed = ["help", "z", "moves", *lines]
    result, out = play(tmp_path, typed, "--game", "connect-four", "--agent", "random")
    assert result.exit_code == 0, result.output
    output = result.output
    assert "You are p1 (first), against random at connect-four." in output
    assert "Type a move as connect-four writes it" in output
    assert ("Not a move here: 'z' is not a Connect Four move: a move is a column letter a..g; legal moves: "
            "a b c d e f g. Type help for the commands.") in output
    assert "Legal moves: a b c d e f g" in output and "  a b c d e f g" in output  # the game's own board
    assert f"ply 2: p2 (random) plays {session.moves[1]}" in output
    assert f"You win in {len(session.moves)} plies." in output and "Traceback" not in output
    (record,) = StoreReader(out).records().records
    assert record["game"] == "connect-four" and record["moves"] == session.moves and record["winner"] == "p1"
    walk(record)


def test_a_full_column_is_one_line_naming_the_legal_moves(tmp_path):
    """The dialogue on a Connect Four session started with column a full: typing ``a`` is one line
    (the game's reason and the legal moves), then a new prompt; quitting abandons the game."""
    from boopexp.interfaces import interactive

    s = _game_session(tmp_path, "connect-four", start="x....../o....../x....../o....../x....../o...... x")
    typed, written = iter(["a", "quit"]), []
    outcome = interactive.run_dialogue(s, lambda prompt: next(typed), written.append)
    assert not outcome.finished and s.moves == []
    assert "Not a move here: 'a': column a is full; legal moves: b, c, d, e, f, g. Type help for the commands." \
        in written
    assert written[1].splitlines()[0] == "  x . . . . . ."  # the game's board, the start's top row
