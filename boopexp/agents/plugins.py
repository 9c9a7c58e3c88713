"""Plugin agents: any Python object with ``choose(position, rng)`` plays boop. (docs/agents.md).

A config declares ``greedy: {plugin: "my_agents:make_greedy", depth: 1}``: the module
``my_agents`` is imported from ``PYTHONPATH`` or, failing that, from the config file's folder;
``make_greedy(depth=1)`` is called once per game and returns the agent. The protocol:

* ``choose(position: boopexp.Position, rng: numpy.random.Generator) -> boopexp.Move | str``
  (required): the move of the side to move;
* ``promote(position, groups, rng) -> int`` (optional): when a move lines up several candidate
  groups, the index of the group to promote among ``groups`` (the position is the one before the
  move); without it the paper's promotion heuristic chooses.

Every call of a plugin (its factory, ``choose``, ``promote``) goes through :func:`call_plugin`,
the boundary between a plugin and the game: whatever the plugin raises (``SystemExit`` included),
however long it takes (``move_timeout_s``) and whatever it prints, only its own game is affected.

This module imports plugins and checks them; it does not import the engine itself.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from boopexp.agents.specs import MOVE_TIMEOUT_KEY, AgentSpec
from boopexp.errors import ConfigError

#: The method every plugin agent has, and the optional one.
REQUIRED_METHOD = "choose"
OPTIONAL_METHOD = "promote"


def one_line(exc: BaseException) -> str:
    """``"TypeError: message"`` on one line (what a forfeit record and an error message show)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load_factory(target: str, directory: str | None = None) -> Callable[..., Any]:
    """The callable named by ``"module:callable"`` (``callable`` may be dotted).

    The module is imported from ``sys.path`` (``PYTHONPATH``) first, then from ``directory``.

    Raises:
        ConfigError: a malformed target, a module that cannot be imported, or no such callable.
    """
    module_name, sep, attr = target.partition(":") if isinstance(target, str) else ("", "", "")
    if not sep or not module_name or not attr:
        raise ConfigError(f"plugin = {target!r} must look like \"module:callable\", e.g. \"my_agents:make_greedy\"")
    try:
        module = _import(module_name, directory)
    except (ConfigError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module failed to import (sys.exit() too): say why
        raise ConfigError(f"plugin {target!r}: importing {module_name!r} raised {one_line(exc)}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"plugin {target!r}: {attr!r} is not callable")
    return obj


def build_agent(spec: AgentSpec, output: PluginOutput | None = None) -> Any:
    """A fresh agent object of plugin ``spec``: ``factory(**kwargs)``, called through
    :func:`call_plugin` with the agent's time limit (what it prints goes to ``output``).

    Raises:
        ConfigError: the module or the callable cannot be found (:func:`load_factory`).
        PluginFailure: the factory raised (anything, ``SystemExit`` included) or ran out of time.
    """
    factory = load_factory(spec.plugin or "", spec.directory)
    kwargs = dict(spec.kwargs or {})
    return call_plugin(lambda: factory(**kwargs), seconds=spec.move_timeout, output=output,
                       timeout_error=timeout_error(spec, building=True))


def timeout_error(spec: AgentSpec, building: bool = False) -> str:
    """The forfeit's reason when plugin ``spec`` runs out of time (docs/agents.md)."""
    return (f"move_timeout: plugin {spec.name!r} took longer than {spec.move_timeout:g} s"
            f"{' to build' if building else ''} ({MOVE_TIMEOUT_KEY})")


def check_plugin(spec: AgentSpec, where: str = "agents") -> None:
    """Import ``spec``'s plugin and build one agent, so that a broken plugin stops a run before
    any game (the agent built here, and what its factory printed, are thrown away; each game
    builds its own).

    Raises:
        ConfigError: one line naming ``where``: import failure, no such callable, the callable
            raising on these keyword arguments (or exiting, or running past its time limit), or
            an agent without ``choose``.
    """
    try:
        agent = build_agent(spec, PluginOutput())
    except ConfigError as exc:
        raise exc.within(where) from None
    except PluginFailure as exc:  # reported as a config error
        what = (f"took longer than {spec.move_timeout:g} s to build ({MOVE_TIMEOUT_KEY})" if exc.timed_out
                else f"raised {exc.error}")
        raise ConfigError(f"{where}: {spec.plugin}(**{dict(spec.kwargs or {})!r}) {what}") from None
    if not callable(getattr(agent, REQUIRED_METHOD, None)):
        raise ConfigError(
            f"{where}: {spec.plugin} returned {type(agent).__name__!s}, "
            f"which has no {REQUIRED_METHOD}(position, rng) method"
        )


def _import(module_name: str, directory: str | None) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not directory or not (module_name == missing or module_name.startswith(missing + ".")):
            if module_name == missing or module_name.startswith(missing + "."):
                raise ConfigError(
                    f"plugin module {module_name!r} not found; put it on PYTHONPATH or beside the config"
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
                f"plugin module {module_name!r} not found on PYTHONPATH or in {directory}"
            ) from None
        raise


# ---------------------------------------------------------------------------------------------
# The boundary between a plugin and its game: exceptions, time limit, prints

class PluginFailure(Exception):
    """A plugin's call gave no answer: it raised (any exception: ``SystemExit`` from
    ``sys.exit()`` too) or it ran past its time limit. The game forfeits (``agent_error``).

    Attributes:
        error: one line: the exception (:func:`one_line`), or the ``timeout_error`` given.
        timed_out: the call ran past its time limit.
    """

    def __init__(self, error: str, timed_out: bool = False):
        super().__init__(error)
        self.error, self.timed_out = error, timed_out


def call_plugin(fn: Callable[..., Any], *args: Any, seconds: float, output: PluginOutput | None,
                timeout_error: str) -> Any:
    """``fn(*args)``, a call into a plugin, kept from touching anything but its own game.

    * Exceptions: anything ``fn`` raises, ``BaseException`` subclasses included (``sys.exit()``
      raises ``SystemExit``, which would otherwise end the whole run), becomes a
      :class:`PluginFailure`. Only ``KeyboardInterrupt`` passes (Ctrl-C, and SIGTERM, which the
      runner turns into one, stop the run, not the game).
    * Time: past ``seconds``, the call is interrupted and fails (``timeout_error``); a plugin that
      catches the interruption is reminded every :data:`REMIND_S` seconds, and one that answers
      anyway fails all the same. How, and the limits of it: :class:`_Alarm`, :class:`_Watchdog`.
    * Prints: what ``fn`` writes to ``sys.stdout`` or ``sys.stderr`` goes to ``output`` (None:
      thrown away), never to the run's own streams (``game --json`` prints JSON, progress lines
      are not cut). Writes below Python's streams (``os.write(1, ...)``, C code, child processes)
      are not captured.

    Raises:
        PluginFailure: ``fn`` raised or ran out of time.
    """
    limit = _Alarm(seconds) if _Alarm.usable() else _Watchdog(seconds)
    with _captured(output if output is not None else PluginOutput()):
        try:
            try:
                limit.start()
                result = fn(*args)
            finally:
                limit.stop()
        except _TimeUp:
            limit.stop()  # the interruption may have cut the first stop() short
            raise PluginFailure(timeout_error, timed_out=True) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the plugin raised: its game forfeits
            raise PluginFailure(one_line(exc)) from None
    if limit.expired:  # it caught the interruption and answered all the same: too late
        raise PluginFailure(timeout_error, timed_out=True)
    return result


#: Seconds between two interruptions of a plugin that caught the first one.
REMIND_S = 0.5


class _TimeUp(BaseException):
    """Raised inside a plugin's call when its time is up. A BaseException, so that a plugin's
    ``except Exception`` does not swallow it."""


class _Alarm:
    """The time limit of a call in the main thread: ``SIGALRM`` from ``setitimer``.

    Why a signal: it interrupts the plugin where it is, in the thread that plays the game, which
    is the main thread wherever games are played by boopexp's own processes (``game``, ``play``,
    ``run --jobs 1`` in the command's process; ``run --jobs N``: loky runs each game in its
    worker's main thread). Blocking calls (``time.sleep``, waiting on a socket or a lock) are
    interrupted too, and after the call the game goes on in the same process with nothing left
    running. A thread that waits for the call instead could not stop it: the hung plugin would go
    on burning a core, in a worker that plays the next games.

    The limit: the handler runs between two Python bytecodes, so a plugin stuck inside C code
    that does not check for signals (a long numpy or numba call, a C extension's loop) is
    interrupted only when that code returns. The previous SIGALRM handler and timer are restored
    after the call (a timer already running goes on with the time it had left).
    """

    def __init__(self, seconds: float):
        self.seconds = float(seconds)
        self.expired = False
        self._armed = False
        self._stopped = True
        self._previous_handler: Any = None
        self._previous_timer = (0.0, 0.0)
        self._started = 0.0

    @staticmethod
    def usable() -> bool:
        """Signals can be handled in this thread (the main thread, on a POSIX system)."""
        return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def _ring(self, signum: int, frame: Any) -> None:
        if self._armed:  # once stop() has begun, a late signal does nothing
            self.expired = True
            raise _TimeUp

    def start(self) -> None:
        self._previous_handler = signal.signal(signal.SIGALRM, self._ring)
        self._stopped = False
        self._armed = True
        self._started = time.monotonic()
        self._previous_timer = signal.setitimer(signal.ITIMER_REAL, self.seconds, REMIND_S)

    def stop(self) -> None:
        """Disarm and restore; idempotent (it may be cut short by a late interruption and run again)."""
        self._armed = False
        if self._stopped:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        previous = self._previous_handler
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        delay, interval = self._previous_timer
        if delay > 0:
            signal.setitimer(signal.ITIMER_REAL, max(delay - (time.monotonic() - self._started), 1e-3), interval)
        self._stopped = True


class _Watchdog:
    """The time limit of a call in any other thread (a dask worker plays its games in a thread,
    where no signal handler can be set): a watchdog thread raises the interruption in the
    calling thread (``PyThreadState_SetAsyncExc``) once the time is up, and again every
    :data:`REMIND_S` seconds until the call ends.

    The limit, beyond :class:`_Alarm`'s: such an exception is raised only when the thread runs
    Python code again, so a plugin blocked in a system call (``time.sleep``, I/O, a lock) is not
    interrupted before that call returns. CPython only (so is boopexp's engine, numba).
    """

    def __init__(self, seconds: float):
        self.seconds = float(seconds)
        self.expired = False
        self._armed = False
        self._target = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._target = threading.get_ident()
        self._armed = True
        self._thread = threading.Thread(target=self._watch, name="boopexp-plugin-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        delay = self.seconds
        while not self._done.wait(delay):
            if not self._armed:
                return
            self.expired = True
            _set_async_exc(self._target, _TimeUp)
            delay = REMIND_S

    def stop(self) -> None:
        """Stop the watchdog and clear an interruption not delivered yet; idempotent."""
        self._armed = False
        self._done.set()
        if self._thread is not None:
            self._thread.join()  # from here on, nothing more is raised in the calling thread
        if self.expired:
            _set_async_exc(self._target, None)


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in thread ``thread_id`` when it next runs Python code (None: clear one pending)."""
    import ctypes

    fn = ctypes.pythonapi["PyThreadState_SetAsyncExc"]  # a fresh prototype: nobody else's argtypes
    fn.argtypes, fn.restype = (ctypes.c_ulong, ctypes.py_object), ctypes.c_int
    fn(thread_id, ctypes.py_object(exc) if exc is not None else ctypes.py_object())


#: What a game keeps of what one plugin agent printed, in characters: the first and the last
#: half of it, and how many characters were left out between.
OUTPUT_LIMIT = 8_000


class PluginOutput:
    """What one plugin agent printed in one game (``sys.stdout`` and ``sys.stderr``, in the order
    written), capped at :data:`OUTPUT_LIMIT` characters however much it prints: the head is kept,
    then a tail that is trimmed as it grows, so memory stays bounded too."""

    def __init__(self) -> None:
        self._head = ""
        self._tail: list[str] = []
        self._tail_chars = 0
        self._total = 0

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._total += len(text)
        half = OUTPUT_LIMIT // 2
        room = half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_chars += len(text)
            if self._tail_chars > 2 * half:  # trim now and then, not at every write
                kept = "".join(self._tail)[-half:]
                self._tail, self._tail_chars = [kept], len(kept)
        return self._total

    def text(self) -> str:
        """Everything printed, or its head and tail around ``[... N characters left out ...]``."""
        tail = "".join(self._tail)[-(OUTPUT_LIMIT // 2):]
        left_out = self._total - len(self._head) - len(tail)
        if left_out:
            return f"{self._head}\n[... {left_out} characters left out ...]\n{tail}"
        return self._head + tail


class _Router:
    """Stands in for ``sys.stdout`` / ``sys.stderr`` while plugin calls run: a thread inside a
    call writes to its call's :class:`PluginOutput`, any other thread to the stream replaced. Per
    thread, so that games played in threads of one process (a dask worker) keep their prints
    apart and a progress line of another thread is not taken for a plugin's."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: str) -> int:
        sink = _SINKS.get(threading.get_ident())
        return self._stream.write(text) if sink is None else sink.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.get_ident() not in _SINKS:
            self._stream.flush()

    def isatty(self) -> bool:
        return threading.get_ident() not in _SINKS and bool(self._stream.isatty())

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer, ...: the real stream's
        return getattr(self._stream, name)


_SINKS: dict[int, PluginOutput] = {}
_SINKS_LOCK = threading.Lock()


@contextlib.contextmanager
def _captured(output: PluginOutput) -> Iterator[None]:
    """Within: this thread's prints go to ``output`` (:class:`_Router`)."""
    tid = threading.get_ident()
    with _SINKS_LOCK:
        if not _SINKS:
            sys.stdout, sys.stderr = _Router(sys.stdout), _Router(sys.stderr)
        _SINKS[tid] = output
    try:
        yield
    finally:
        _SINKS.pop(tid, None)  # first: from here on this thread prints where it did before
        with _SINKS_LOCK:
            if not _SINKS:
                # put the streams back, unless the plugin replaced them meanwhile
                if isinstance(sys.stdout, _Router):
                    sys.stdout = sys.stdout._stream
                if isinstance(sys.stderr, _Router):
                    sys.stderr = sys.stderr._stream
