"""The dask scheduler a run connects to: its address checked (``[protocol://]host:port``) and the
connection made within :data:`SCHEDULER_TIMEOUT_S`, or one line saying it cannot be reached
(docs/cluster.md)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from boopexp.errors import BoopError, ConfigError

#: How long to wait for a dask scheduler to answer before saying it cannot be reached.
SCHEDULER_TIMEOUT_S = 10

_SCHEDULER_RE = re.compile(r"^(?:(?P<protocol>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>[0-9]+)$")
_SCHEDULER_PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")


def check_scheduler_address(address: str) -> None:
    """Refuse a dask scheduler address that is not ``[protocol://]host:port``.

    Raises:
        ConfigError: naming the address and the expected form.
    """
    m = _SCHEDULER_RE.match(address)
    if (
        m is None
        or (m["protocol"] or "tcp") not in _SCHEDULER_PROTOCOLS
        or not 0 < int(m["port"]) < 65536
    ):
        raise ConfigError(
            f"--scheduler {address!r} is not a dask scheduler address; expected [protocol://]host:port"
            f" like tcp://192.168.1.10:8786 (protocols: {', '.join(_SCHEDULER_PROTOCOLS)})"
        )


@contextlib.contextmanager
def connect_scheduler(address: str) -> Iterator[Any]:
    """A dask Client of the scheduler at ``address``, or a BoopError after SCHEDULER_TIMEOUT_S."""
    import distributed

    try:
        client = distributed.Client(address, timeout=SCHEDULER_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BoopError(
            f"cannot reach the dask scheduler at {address} within {SCHEDULER_TIMEOUT_S} s"
            f" ({' '.join(str(exc).split()) or type(exc).__name__}); is `dask scheduler` running there?"
        ) from None
    with client:
        yield client


def probe_scheduler(address: str) -> None:
    """Connect to the dask scheduler at ``address`` once (see :func:`connect_scheduler`)."""
    with connect_scheduler(address):
        pass

