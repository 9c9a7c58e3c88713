"""**The** checks every config parser and CLI option shares: unknown and missing keys, mappings,
integers and finite numbers in a range, booleans, choices, a named file read (``read_text``);
``within`` / ``under`` locate a nested parser's errors (the parameter table's ``Param.check`` goes
through it).

Each check returns the value it accepted, unchanged, or raises a
:class:`~boopexp.errors.ConfigError` whose ``key`` (the dotted path from its document's root),
``value`` and ``allowed`` are data, and whose message has one of the project's forms::

    unknown key budget.secs (value 1) for mode 'device'; allowed: mode, seconds, profile, costs
    missing required key tune.space; required: agent, space, trials, games_per_trial
    games_per_side = 2.5 must be a positive integer
    agents.x.uct_c = -1 must be a number in [0.0, 100.0]
    preset = 'papr' is not allowed; allowed: code-0.6.2, paper

A parser checks a block with keys relative to the document's root (``at="tune.confirm"``);
:func:`within` puts the file (or option) in front of every error raised inside it, and
:func:`under` moves the errors of a nested parser one level down (``uct_c`` → ``agents.x.uct_c``).
A number is finite wherever one is wanted: NaN and infinities are refused by :func:`number`.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from boopexp.errors import ConfigError, show_value

__all__ = [
    "check_keys", "require_keys", "key_path", "invalid", "mapping", "integer", "positive_int", "number",
    "boolean", "choice", "range_words", "within", "under", "read_text", "LongInteger", "text_int", "decimal",
]


class LongInteger:
    """An integer written with more digits than Python turns into a number
    (``sys.get_int_max_str_digits()``, 4,300: a guard against a quadratic-time conversion, kept).
    The readers of a person's text (YAML, JSON, :func:`decimal`) give this marker for one instead
    of the ``ValueError`` int() raises, so that the check of the key it was written for refuses it
    in its own words: ``seed = <an integer of 5000 digits> must be an integer in [0, …]``. It is
    not a number: every check refuses it."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<an integer of {self.digits} digits>"


def _too_long(text: str) -> int:
    """The number of ASCII digits of ``text`` if Python would refuse to convert so many, else 0."""
    limit = sys.get_int_max_str_digits()
    digits = sum(c in "0123456789" for c in text) if limit and len(text) > limit else 0
    return digits if digits > limit else 0


def text_int(text: str, convert: Any = int) -> Any:
    """``convert(text)`` (an integer reader: int, YAML's), or a :class:`LongInteger` where the
    text has more digits than Python converts: the one place a person's text becomes an integer."""
    digits = _too_long(text)
    return LongInteger(digits) if digits else convert(text)


def decimal(text: str) -> int | None:
    """The non-negative integer ``text`` spells in ASCII digits ``0``-``9``, or None: no sign,
    space or ``_``, nor another script's digits, which ``str.isdigit`` and ``int()`` accept
    (``int("３")`` is 3), nor more digits than Python converts. For numbers read from a line of
    text (a shard ``I/N``, a position string, the engine protocol); a caller checks the range."""
    if not text or not text.isascii() or not text.isdigit() or _too_long(text):
        return None
    return int(text)


def key_path(prefix: str, key: Any) -> str:
    """The dotted path of mapping key ``key`` below ``prefix`` (``agents`` + ``x`` →
    ``agents.x``); a key that is not a plain word is shown as its repr (``agents.'a vs b'``)."""
    segment = key if isinstance(key, str) and key and not any(c.isspace() for c in key) else show_value(key)
    return f"{prefix}.{segment}" if prefix else segment


def check_keys(data: Mapping[Any, Any], allowed: Sequence[str], at: str = "", *, note: str = "",
               refused: Mapping[str, str] | None = None, place: str = "here") -> None:
    """Refuse a key of ``data`` that is not in ``allowed``.

    Args:
        at: the path of ``data`` in its document (``""`` for the root).
        note: said after the value, e.g. `` for mode 'device'`` (what ``allowed`` depends on); when
            ``allowed`` is empty, why no key is (``; a baseline takes no parameters``).
        refused: keys refused with a reason even if allowed elsewhere, e.g. ``{"sweep": "use sweep
            with boopexp run"}``: ``sweep = … has no place <place> (<reason>)``.

    Raises:
        ConfigError: ``unknown key <at.key> (value <value>)<note>; allowed: <allowed>``.
    """
    for key, value in data.items():
        if refused and isinstance(key, str) and key in refused:
            raise ConfigError(template=f"{{key}} = {{value}} has no place {place} ({refused[key]})",
                              key=key_path(at, key), value=value)
        if key not in allowed:
            tail = "; allowed: {allowed}" if allowed else ""  # none allowed: the note says why
            raise ConfigError(template="unknown key {key} (value {value})" + note + tail,
                              key=key_path(at, key), value=value, allowed=tuple(allowed))


def require_keys(data: Mapping[Any, Any], required: Sequence[str], at: str = "", *, note: str = "",
                 alternatives: Mapping[str, str] | None = None) -> None:
    """Refuse ``data`` if a key of ``required`` is missing (or its alternative, when it has one).

    Raises:
        ConfigError: ``missing required key <at.key>[ (or <alternative>)]<note>; required: <required>``
            (the list only when it has more than the one key).
    """
    for key in required:
        other = (alternatives or {}).get(key)
        if key not in data and (other is None or other not in data):
            also = f" (or {other})" if other else ""
            listed = "; required: {allowed}" if len(required) > 1 else ""  # not when it is the one key
            raise ConfigError(template="missing required key {key}" + also + note + listed,
                              key=key_path(at, key), allowed=tuple(required))


def invalid(key: str, value: Any, want: str) -> ConfigError:
    """The error ``<key> = <value> must be <want>`` (to raise), ``want`` being what is allowed."""
    return ConfigError(template="{key} = {value} must be {allowed}", key=key, value=value, allowed=want)


def mapping(value: Any, key: str, want: str) -> Mapping[Any, Any]:
    """``value`` if it is a mapping, else ``<key> = <value> must be <want>`` (``want``: ``a mapping
    like {k: 21}``)."""
    if not isinstance(value, Mapping):
        raise invalid(key, value, want)
    return value


def range_words(kind: type, low: float | None = None, high: float | None = None, *, open_low: bool = False,
                open_high: bool = False) -> str:
    """The values of an integer or number range in words: ``a positive integer``, ``an integer in
    [0, 72]``, ``a number strictly between 0 and 1``, ``a finite number``."""
    noun, article = ("integer", "an") if kind is int else ("number", "a")
    if high is None:
        if low is None:
            return "an integer" if kind is int else "a finite number"
        if low == 0 and open_low or kind is int and low == 1 and not open_low:
            return f"a positive {noun}"
        if low == 0:
            return f"a non-negative {noun}"
        return f"{article} {noun} {'above' if open_low else 'of at least'} {low}"
    if low is None:
        return f"{article} {noun} {'below' if open_high else 'of at most'} {high}"
    if open_low and open_high:
        return f"{article} {noun} strictly between {low} and {high}"
    return f"{article} {noun} in {'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"


def integer(value: Any, key: str, low: int | float | None = None, high: int | float | None = None, *,
            want: str | None = None) -> int:
    """``value`` if it is an integer (not a boolean) in ``[low, high]`` (an open end: None).

    Raises:
        ConfigError: ``<key> = <value> must be <want>`` (default: :func:`range_words`).
    """
    if (isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low)
            or (high is not None and value > high)):
        raise invalid(key, value, want or range_words(int, low, high))
    return value


def positive_int(value: Any, key: str) -> int:
    """``value`` if it is an integer of at least 1 (``<key> = <value> must be a positive integer``)."""
    return integer(value, key, 1)


def number(value: Any, key: str, low: float | None = None, high: float | None = None, *, open_low: bool = False,
           open_high: bool = False, want: str | None = None) -> float:
    """``value`` if it is a finite number (an int or a float, not a boolean) in the range:
    ``[low, high]``, an end excluded if ``open_low`` / ``open_high``, None for no bound. NaN and
    infinities are refused here, for every number a config or an option gives.

    Raises:
        ConfigError: ``<key> = <value> must be <want>`` (default: :func:`range_words`).
    """
    # an int is finite (and math.isfinite would overflow on a big one)
    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
          and (isinstance(value, int) or math.isfinite(value)))
    if ok and low is not None:
        ok = value > low if open_low else value >= low
    if ok and high is not None:
        ok = value < high if open_high else value <= high
    if not ok:
        raise invalid(key, value, want or range_words(float, low, high, open_low=open_low, open_high=open_high))
    return value


def boolean(value: Any, key: str) -> bool:
    """``value`` if it is true or false (``1`` and ``"yes"`` are not)."""
    if not isinstance(value, bool):
        raise invalid(key, value, "true or false")
    return value


def choice(value: Any, key: str, choices: Sequence[str] | Mapping[str, Any]) -> str:
    """``value`` if it is one of ``choices`` (a mapping: one of its keys).

    Raises:
        ConfigError: ``<key> = <value> is not allowed; allowed: <choices>``.
    """
    allowed = tuple(choices)
    if not isinstance(value, str) or value not in allowed:
        raise ConfigError(template="{key} = {value} is not allowed; allowed: {allowed}", key=key, value=value,
                          allowed=allowed)
    return value


@contextmanager
def within(where: str) -> Iterator[None]:
    """Every ConfigError raised inside names ``where`` (a file, an option) first:
    ``with within("t.yaml"): ...`` gives ``t.yaml: games_per_side = 0 must be …``."""
    try:
        yield
    except ConfigError as exc:
        raise exc.within(where) from None


@contextmanager
def under(prefix: str) -> Iterator[None]:
    """Every ConfigError raised inside is one level down: its key becomes ``prefix.key`` (or
    ``prefix`` when it had none: ``pairings[2]: unknown agent 'x'; …``)."""
    try:
        yield
    except ConfigError as exc:
        raise exc.under(prefix) from None


def read_text(path: str | os.PathLike, what: str, shown: str | None = None) -> str:
    """The UTF-8 text of a file a config names (the config itself, an openings suite): one home
    for the two ways it can be missing.

    Raises:
        ConfigError: ``<what> <shown> not found`` or ``cannot read <what> <shown>: <reason>``.
    """
    shown = str(path) if shown is None else shown
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} {shown} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} {shown}: {exc}") from None


def import_user_module(module_name: str, directory: str | None, what: str) -> Any:
    """The user's module ``module_name`` (a plugin agent's, a game's) named in a config or an
    option: imported from ``sys.path`` (``PYTHONPATH``) first, then from ``directory`` (the
    config's folder; appended to ``sys.path``, so ``PYTHONPATH`` keeps precedence).

    Raises:
        ConfigError: ``<what> 'm' not found; …`` when neither has it (an error inside the module
            propagates: the caller says which module raised it).
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not directory or not (module_name == missing or module_name.startswith(missing + ".")):
            if module_name == missing or module_name.startswith(missing + "."):
                raise ConfigError(
                    f"{what} {module_name!r} not found; put it on PYTHONPATH or beside the config"
                ) from None
            raise
    # Not on sys.path: look beside the config. Appended, so PYTHONPATH keeps precedence.
    if directory not in sys.path:
        sys.path.append(directory)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ConfigError(
                f"{what} {module_name!r} not found on PYTHONPATH or in {directory}"
            ) from None
        raise
