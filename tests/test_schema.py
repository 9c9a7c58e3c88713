"""The shared config checks (boopexp/schema.py) and the location a ConfigError carries as data."""

from __future__ import annotations

import math
import pickle

import pytest

from boopexp import schema
from boopexp.errors import NO_VALUE, ConfigError


def _error(check, *args, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        check(*args, **kwargs)
    return info.value


def test_unknown_key_names_the_path_the_value_and_the_allowed_keys():
    err = _error(schema.check_keys, {"mode": "device", "secs": 1}, ("mode", "seconds"), "budget",
                 note=" for mode 'device'")
    assert str(err) == "unknown key budget.secs (value 1) for mode 'device'; allowed: mode, seconds"
    assert (err.key, err.value, err.allowed, err.where) == ("budget.secs", 1, ("mode", "seconds"), None)
    assert str(_error(schema.check_keys, {"bugdet": 3}, ("budget",))) == "unknown key bugdet (value 3); allowed: budget"
    assert _error(schema.check_keys, {"a b": 1, 2: 1}, ("c",)).key == "'a b'"
    schema.check_keys({"mode": 1}, ("mode",))


def test_a_refused_key_says_why():
    err = _error(schema.check_keys, {"sweep": [1]}, ("sweep", "name"), refused={"sweep": "use it with run"},
                 place="in a tune config")
    assert str(err) == "sweep = [1] has no place in a tune config (use it with run)" and err.key == "sweep"


def test_missing_key_lists_the_required_ones_and_an_alternative():
    err = _error(schema.require_keys, {"agent": 1}, ("agent", "space"), "tune")
    assert str(err) == "missing required key tune.space; required: agent, space"
    assert (err.key, err.value) == ("tune.space", NO_VALUE)
    assert str(_error(schema.require_keys, {}, ("pairings", "seed"), alternatives={"pairings": "tournament"})) == \
        "missing required key pairings (or tournament); required: pairings, seed"
    schema.require_keys({"tournament": 1}, ("pairings",), alternatives={"pairings": "tournament"})
    err = _error(schema.require_keys, {}, ("tune",), note=" (the agent)")
    assert str(err) == "missing required key tune (the agent)"  # no list of one key


@pytest.mark.parametrize("value, low, high, words", [
    (0, 1, None, "a positive integer"),
    (2.5, 1, None, "a positive integer"),
    (True, 1, None, "a positive integer"),
    (-1, 0, None, "a non-negative integer"),
    (73, 0, 72, "an integer in [0, 72]"),
    ("3", 0, 72, "an integer in [0, 72]"),
])
def test_integers(value, low, high, words):
    err = _error(schema.integer, value, "k", low, high)
    assert str(err) == f"k = {value!r} must be {words}" and err.allowed == words and err.value == value


@pytest.mark.parametrize("value, kwargs, words", [
    (-1, {"low": 0.0, "high": 100.0}, "a number in [0.0, 100.0]"),
    (math.nan, {"low": 0.0, "high": 100.0}, "a number in [0.0, 100.0]"),
    (0, {"low": 0, "open_low": True}, "a positive number"),
    (math.inf, {"low": 0, "open_low": True}, "a positive number"),
    (1.0, {"low": 0, "high": 1, "open_low": True, "open_high": True}, "a number strictly between 0 and 1"),
    (math.nan, {}, "a finite number"),
    (-math.inf, {}, "a finite number"),
    ("0.5", {}, "a finite number"),
    (False, {}, "a finite number"),
])
def test_numbers_are_finite_and_in_range(value, kwargs, words):
    err = _error(schema.number, value, "x", **kwargs)
    assert str(err) == f"x = {value!r} must be {words}"


def test_accepted_values_come_back_unchanged():
    assert schema.integer(72, "k", 0, 72) == 72 and schema.positive_int(1, "n") == 1
    assert schema.number(1, "x", 0, 1) == 1 and type(schema.number(1, "x")) is int
    assert schema.number(10**400, "x") == 10**400  # a big int is finite (no float overflow)
    assert schema.boolean(False, "b") is False and schema.choice("b", "c", ("a", "b")) == "b"
    assert schema.mapping({}, "m", "a mapping") == {}


def test_booleans_choices_mappings_and_a_custom_want():
    assert str(_error(schema.boolean, 1, "fix_a9")) == "fix_a9 = 1 must be true or false"
    err = _error(schema.choice, ["a"], "preset", {"code-0.6.2": 1, "paper": 2})  # unhashable: no TypeError
    assert str(err) == "preset = ['a'] is not allowed; allowed: code-0.6.2, paper"
    err = _error(schema.mapping, 3, "params", "a mapping like {k: 21}")
    assert str(err) == "params = 3 must be a mapping like {k: 21}"
    assert str(_error(schema.number, -1.0, "budget.seconds", 0, open_low=True, want="a positive number of seconds")) \
        == "budget.seconds = -1.0 must be a positive number of seconds"


def test_within_and_under_rebuild_the_message_from_the_attributes():
    err = _error(schema.number, -1, "uct_c", 0.0, 100.0)
    moved = err.under("agents.x").within("t.yaml")
    assert str(moved) == "t.yaml: agents.x.uct_c = -1 must be a number in [0.0, 100.0]"
    assert (moved.key, moved.value, moved.where) == ("agents.x.uct_c", -1, "t.yaml")
    assert str(moved.within("--config")) == "--config: t.yaml: agents.x.uct_c = -1 must be a number in [0.0, 100.0]"
    # an error whose message does not name its key is led by it
    plain = ConfigError(template="unknown agent {value}; valid agents: {allowed}", value="x", allowed=("a", "b"))
    assert str(plain.under("pairings[2]")) == "pairings[2]: unknown agent 'x'; valid agents: a, b"
    assert plain.under("[2]").under("pairings").key == "pairings[2]" and plain.under("") is plain
    with pytest.raises(ConfigError, match=r"^f: k: unknown agent 'x'") as info:
        with schema.within("f"), schema.under("k"):
            raise plain
    assert info.value.__suppress_context__


def test_free_text_errors_keep_their_braces_and_a_value_is_shown_as_it_is():
    assert str(ConfigError("must look like {a: 1}").within("t.yaml")) == "t.yaml: must look like {a: 1}"
    err = _error(schema.positive_int, "{allowed}", "n")
    assert str(err) == "n = '{allowed}' must be a positive integer"


def test_an_error_keeps_its_attributes_across_processes():
    err = _error(schema.check_keys, {"x": 1}, ("y",), "sprt").within("t.yaml")
    back = pickle.loads(pickle.dumps(err))
    assert (str(back), back.key, back.value, back.allowed, back.where) == (str(err), "sprt.x", 1, ("y",), "t.yaml")
    assert pickle.loads(pickle.dumps(ConfigError(template="{key} gone", key="k"))).value is NO_VALUE
