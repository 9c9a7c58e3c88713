"""The players' names as enums: ``Colour`` (``blue``/``red``; **the** mapping to the kernels' ``BLUE
= -1``/``RED = +1``) and ``Side`` (``p1``/``p2``: p1 is Blue), on ``TextEnum`` (a member reads,
writes and compares as its string).

Blue moves first (RULES.md §3) and is the pairing's first-named agent, ``p1``; Red is ``p2``
(RULES.md §1: "Blue is also called P1, Red P2"). The kernels write a colour as the sign of its
pieces (``BLUE = -1``, ``RED = +1``, :mod:`boopexp.engine.state`): :meth:`Colour.of` and
:attr:`Colour.code` are the one mapping between those ints and the names.

The members are the strings that game records, ``Position.to_move`` and every table hold
(:class:`TextEnum`): JSON writes them as those strings, and a field read back from JSON — a plain
``str`` — equals the member. Engine-free (no numba): the record modules import it.
"""

from __future__ import annotations

from enum import Enum

from boopexp.engine.state import BLUE, RED

__all__ = ["Colour", "Side", "TextEnum"]


class TextEnum(str, Enum):
    """A closed vocabulary whose members are the strings that records store.

    ``str()``, ``format()`` and ``repr()`` are the value's, on every Python version (3.12 changed
    what ``format()`` of a ``(str, Enum)`` member gives), so JSON, messages and tables read exactly
    as they did with bare strings; a member equals its value and hashes as it does, so a value
    read back from JSON compares equal to the member and finds it in a dict or a set.
    """

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return str.__repr__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str.__str__(self), spec)


class Colour(TextEnum):
    """A player's colour: Blue moves first."""

    BLUE = "blue"
    RED = "red"

    @classmethod
    def of(cls, code: int) -> Colour:
        """The colour of the kernels' int (``BLUE = -1``, ``RED = +1``: a state's side to move, a
        winner other than 0).

        Raises:
            ValueError: ``code`` is neither.
        """
        if code == BLUE:
            return cls.BLUE
        if code == RED:
            return cls.RED
        raise ValueError(f"{code!r} is not a colour code ({BLUE} Blue, {RED} Red)")

    @property
    def code(self) -> int:
        """The kernels' int for this colour: ``BLUE = -1``, ``RED = +1``."""
        return BLUE if self is Colour.BLUE else RED

    @property
    def side(self) -> Side:
        """The side that plays this colour: Blue is ``p1``."""
        return Side.P1 if self is Colour.BLUE else Side.P2


class Side(TextEnum):
    """A pairing's side: ``p1`` (the first-named agent, Blue, moves first) or ``p2`` (Red)."""

    P1 = "p1"
    P2 = "p2"

    @property
    def colour(self) -> Colour:
        """The colour this side plays: ``p1`` is Blue."""
        return Colour.BLUE if self is Side.P1 else Colour.RED

    @property
    def seat(self) -> int:
        """0 for ``p1``, 1 for ``p2``: the side's place in a ``(p1, p2)`` pair (``str.index`` keeps its name)."""
        return 0 if self is Side.P1 else 1

    @property
    def opponent(self) -> Side:
        """The other side."""
        return Side.P2 if self is Side.P1 else Side.P1
