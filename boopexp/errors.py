"""The exceptions boopexp raises; the CLI turns each into one line and a non-zero exit."""


class BoopError(Exception):
    """Base class of every error boopexp raises on purpose."""


class InvalidMoveError(BoopError, ValueError):
    """A move or position string that cannot be parsed (quotes the input)."""


class InvalidPositionError(BoopError, ValueError):
    """A position (a position string, a grid, a state array) that is malformed (quotes the input)."""


class IllegalMoveError(BoopError, ValueError):
    """A well-formed move that the rules forbid in the given position."""


class ConfigError(BoopError, ValueError):
    """A bad experiment configuration, agent name, parameter or budget."""


class StoreError(BoopError):
    """A results store that cannot be read or written safely."""


def show_value(value: object, limit: int = 60) -> str:
    """repr() of a bad value, shortened so that an error message stays on one line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
