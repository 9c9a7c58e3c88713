"""Square names, move strings, position strings and the board rendering (RULES.md §1)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boopexp.errors import BoopError, InvalidMoveError, InvalidPositionError
from boopexp.game.notation import (
    format_move,
    format_position,
    parse_move,
    parse_position,
    parse_square,
    render,
    square_name,
)
from boopexp.game.position import Move, Position
from boopexp.game.sides import Colour


@pytest.mark.parametrize("name, index", [("a6", 0), ("f6", 5), ("a1", 30), ("f1", 35), ("c3", 20), ("b5", 7),
                                         ("e4", 16), ("d1", 33)])
def test_square_names(name, index):
    assert parse_square(name) == index
    assert square_name(index) == name
    assert parse_square(name.upper()) == index


def test_all_squares_round_trip_and_row_col():
    for i in range(36):
        r, c = divmod(i, 6)
        name = square_name(i)
        assert name == "abcdef"[c] + str(6 - r)
        assert parse_square(name) == i


@pytest.mark.parametrize("bad", ["g1", "a0", "a7", "", "a", "a10", "1a"])
def test_bad_square_quotes_input(bad):
    with pytest.raises(InvalidMoveError) as exc:
        parse_square(bad)
    assert repr(bad) in str(exc.value)


@pytest.mark.parametrize("index", [-1, 36])
def test_square_index_off_board(index):
    with pytest.raises(InvalidMoveError, match=str(index)):
        square_name(index)


@pytest.mark.parametrize(
    "text, size, square, group",
    [
        ("c3", 1, 20, None),
        ("C3", 2, 20, None),
        ("a6", 1, 0, None),
        ("F1", 2, 35, None),
        ("c4:a4b4c4", 1, 14, (12, 13, 14)),
        ("d6:a6", 1, 3, (0,)),
        ("E1:e1", 2, 34, (34,)),
    ],
)
def test_parse_and_format_move(text, size, square, group):
    assert parse_move(text) == (size, square, group)
    assert format_move(size, square, group) == text


def test_move_object_round_trip():
    for code in range(72):
        m = Move.from_code(code)
        assert m.code == code
        assert Move.parse(str(m)) == m
    assert str(Move(2, 20)) == "C3" and str(Move(1, 20)) == "c3"


@pytest.mark.parametrize("bad", ["c", "c33", "g3", "c7", "c3:", "c3:a4b4", "c3:a4b4c4d4", "c3:A4", "c3 :a4", "x"])
def test_malformed_move_quotes_input(bad):
    with pytest.raises(InvalidMoveError) as exc:
        parse_move(bad)
    assert repr(bad) in str(exc.value)
    assert isinstance(exc.value, BoopError) and isinstance(exc.value, ValueError)


@pytest.mark.parametrize("bad", [None, 42, 3.0])
def test_non_string_move(bad):
    with pytest.raises(InvalidMoveError, match=repr(bad)):
        parse_move(bad)


POS = "...b../..r.../.b..../b...../br..../...... 4,0 6,0 b 0,0 12"


def test_position_string_round_trip():
    st = parse_position(POS)
    assert format_position(st) == POS
    assert Position.from_string(POS).to_string() == POS
    assert st[3] == -1 and st[8] == 1 and st[42] == -1 and st[43] == 12
    assert tuple(st[36:40]) == (4, 0, 6, 0)


def test_position_string_optional_fields_default():
    p = Position.from_string("B...../....../....../....../....../...... 6,1 8,0 r")
    assert p.large_counter("blue") == 2  # the larges Blue owns: board + pool
    assert p.move_number == 0 and p.to_move == "red" and p.to_move is Colour.RED
    assert p.to_string().endswith(" r 2,0 0")


@pytest.mark.parametrize(
    "bad",
    [
        "....../....../....../....../....../...... 8,0 8,0",  # missing side
        "....../....../....../....../....../..... 8,0 8,0 b",  # short row
        "....../....../....../....../....../.....x 8,0 8,0 b",  # bad cell
        "....../....../....../....../....../...... 7,0 8,0 b",  # Blue owns 7 pieces
        "....../....../....../....../....../...... 8,0 8,0 g",  # bad side
        "....../....../....../....../....../...... 8 8,0 b",  # bad pool
        "....../....../....../....../....../...... 7,1 8,0 b 0,0 0",  # L below larges owned
        "....../....../....../....../....../...... 8,0 8,0 b 0,0 x",  # bad move number
    ],
)
def test_malformed_position_quotes_input(bad):
    with pytest.raises(InvalidPositionError) as exc:
        parse_position(bad)
    assert repr(bad) in str(exc.value)
    assert isinstance(exc.value, BoopError) and not isinstance(exc.value, InvalidMoveError)


def test_render_has_files_and_ranks():
    text = render(parse_position(POS))
    lines = text.splitlines()
    assert lines[0].split() == list("abcdef")
    for r in range(6):
        assert lines[1 + r].split()[0] == str(6 - r)
    assert lines[1].split()[1:] == [".", ".", ".", "b", ".", "."]
    assert "Blue" in text and "Red" in text
    assert Position.from_string(POS).render() == text


def test_malformed_state_is_an_invalid_position():
    from boopexp.engine.state import STATE_SIZE, make_state

    with pytest.raises(InvalidPositionError, match="36 cells"):
        make_state([0] * 35, (8, 0), (8, 0), -1)
    for bad in (np.zeros(STATE_SIZE - 1, dtype=np.int16), np.full(STATE_SIZE, 3, dtype=np.int16),
                np.zeros(STATE_SIZE, dtype=float)):
        with pytest.raises(InvalidPositionError):
            Position(bad)


def test_bad_colour_or_variant_is_a_boop_error():
    from boopexp.errors import ConfigError

    with pytest.raises(ConfigError, match="not a colour"):
        Position.initial().pool("green")
    with pytest.raises(ConfigError, match="variant"):
        Position.initial().play("c3", variant="FAST")


def test_the_side_to_move_and_a_winner_are_colours():
    """Position speaks the records' vocabulary: Colour members (equal to "blue"/"red"), p1 = Blue."""
    record = json.loads((Path(__file__).parent / "data" / "schema1_games.jsonl").read_text().splitlines()[0])
    position, winner = Position.initial(), None
    for ply, text in enumerate(record["moves"], start=1):
        assert position.to_move is (Colour.BLUE if ply % 2 == 1 else Colour.RED)
        result = position.play(text)
        position, winner = result.position, result.winner
    assert winner is Colour(record["winner_colour"]) and winner.side == record["winner"]
