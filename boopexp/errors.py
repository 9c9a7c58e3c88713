"""``BoopError`` and its subclasses ``ConfigError``, ``StoreError``, ``LostResourceError`` (a
scheduler or pool that went away), ``InvalidMoveError``, ``InvalidPositionError``,
``IllegalMoveError``; a ``ConfigError`` carries where the mistake is as data (``key``, ``value``,
``allowed``, ``where``) and builds its message from them.

The exceptions boopexp raises; the CLI turns each into one line and a non-zero exit."""

from __future__ import annotations

import re
from typing import Any


class BoopError(Exception):
    """Base class of every error boopexp raises on purpose."""


class InvalidMoveError(BoopError, ValueError):
    """A move or position string that cannot be parsed (quotes the input)."""


class InvalidPositionError(BoopError, ValueError):
    """A position (a position string, a grid, a state array) that is malformed (quotes the input)."""


class IllegalMoveError(BoopError, ValueError):
    """A well-formed move that the rules forbid in the given position."""


class _NoValue:
    """The type of :data:`NO_VALUE`."""

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:
        return "NO_VALUE"  # unpickles as this module's singleton


#: The ``value`` of a :class:`ConfigError` that is about no one value (a missing key).
NO_VALUE: Any = _NoValue()

# The fields a ConfigError's template may name; filled in one pass, so a value that happens to
# contain "{allowed}" is shown as it is.
_FIELD = re.compile(r"\{(key|value|allowed)\}")


class ConfigError(BoopError, ValueError):
    """A bad experiment configuration, agent name, parameter or budget.

    Where the mistake is, is data, set by the checks of :mod:`boopexp.schema`; the message is
    built from it, so a caller that needs the location reads the attributes, never the message
    (the ``game`` command names the option ``--seconds`` of the key ``budget.seconds``):

    Attributes:
        key: the dotted path of the bad entry in its document (``agents.x.uct_c``,
            ``pairings[2]``), or None when the error is about no one key.
        value: the bad value, or :data:`NO_VALUE` (a missing key, or none known).
        allowed: what is allowed, in words (``a positive integer``) or as the choices (a tuple),
            or None.
        where: the file or option the document came from (``t.yaml``, ``--p1-param``), or None;
            the message starts with it.

    ``ConfigError("text")`` is a free-text error with none of them; the checks pass a
    ``template`` instead, naming ``{key}``, ``{value}`` and ``{allowed}``; a key that the template
    does not name leads the message (``tournament.agent: unknown agent 'x'; …``).
    """

    def __init__(self, message: str = "", *, key: str | None = None, value: Any = NO_VALUE,
                 allowed: str | tuple[str, ...] | None = None, where: str | None = None,
                 template: str | None = None) -> None:
        self.key = key
        self.value = value
        self.allowed = allowed
        self.where = where
        self.template = template
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        if self.template is None:
            body = self.message
        else:
            allowed = ", ".join(self.allowed) if isinstance(self.allowed, tuple) else str(self.allowed)
            fields = {"key": str(self.key), "value": show_value(self.value), "allowed": allowed}
            body = _FIELD.sub(lambda m: fields[m.group(1)], self.template)
            if self.key is not None and "{key}" not in self.template:
                body = f"{self.key}: {body}"
        return f"{self.where}: {body}" if self.where else body

    def replace(self, **changes: Any) -> ConfigError:
        """A copy with some attributes changed (``key``, ``value``, ``allowed``, ``where``,
        ``template``, ``message``) and its message built again."""
        fields = {name: getattr(self, name) for name in ("key", "value", "allowed", "where", "template")}
        fields.update(changes)
        message = fields.pop("message", self.message)
        return type(self)(message, **fields)

    def within(self, where: str) -> ConfigError:
        """The same error, read from ``where`` (a file, an option): ``where`` leads the message,
        before any place it already names (``t.yaml: sweep point …: …``)."""
        return self.replace(where=f"{where}: {self.where}" if self.where else where)

    def under(self, prefix: str) -> ConfigError:
        """The same error one level down a document: its key is ``prefix.key`` (or ``prefix``
        when it had none): ``under("agents.x")`` makes ``uct_c`` ``agents.x.uct_c``."""
        if not prefix:
            return self
        if self.key is None:
            return self.replace(key=prefix)
        return self.replace(key=prefix + ("" if self.key.startswith("[") else ".") + self.key)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keeps the attributes across processes (a pool's worker raising it).
        return (_rebuild, (type(self), self.message, {name: getattr(self, name) for name in
                                                      ("key", "value", "allowed", "where", "template")}))


def _rebuild(cls: type[ConfigError], message: str, fields: dict[str, Any]) -> ConfigError:
    return cls(message, **fields)


class StoreError(BoopError):
    """A results store that cannot be read or written safely."""


class LostResourceError(BoopError):
    """Something a run depends on went away mid-run (the dask scheduler); the stored games are kept
    and rerunning the command resumes."""


def exception_line(exc: BaseException) -> str:
    """``"TypeError: message"`` on one line (what a forfeit record and an error message show)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def show_value(value: object, limit: int = 60) -> str:
    """repr() of a bad value, shortened so that an error message stays on one line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
