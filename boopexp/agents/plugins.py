"""Plugin agents: any Python object with ``choose(position, rng)`` plays boop., or any game (docs/agents.md).

A config declares ``greedy: {plugin: "my_agents:make_greedy", depth: 1}``: the module
``my_agents`` is imported from ``PYTHONPATH`` or, failing that, from the config file's folder;
``make_greedy(depth=1)`` is called once per game and returns the agent. The protocol:

* ``choose(position: boopexp.Position, rng: numpy.random.Generator) -> boopexp.Move | str``
  (required): the move of the side to move (in a game other than boop. the position is a
  ``boopexp.GamePosition`` and the move its text in the game's notation, or its code);
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
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from boopexp import schema
from boopexp.agents.specs import MOVE_TIMEOUT_KEY, AgentSpec
from boopexp.errors import ConfigError, exception_line

#: The method every plugin agent has, and the optional one.
REQUIRED_METHOD = "choose"
OPTIONAL_METHOD = "promote"


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
        module = schema.import_user_module(module_name, directory, "plugin module")
    except (ConfigError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module failed to import (sys.exit() too): say why
        raise ConfigError(f"plugin {target!r}: importing {module_name!r} raised {exception_line(exc)}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"plugin {target!r}: {attr!r} is not callable")
    return obj


def build_agent(spec: AgentSpec, output: PluginOutput | None = None, notice: bool = True) -> Any:
    """A fresh agent object of plugin ``spec``: ``factory(**kwargs)``, called through
    :func:`call_plugin` with the agent's time limit (what it prints goes to ``output``; ``notice``:
    whether a factory left running past it is said on stderr).

    Raises:
        ConfigError: the module or the callable cannot be found (:func:`load_factory`).
        PluginFailure: the factory raised (anything, ``SystemExit`` included) or ran out of time.
    """
    factory = load_factory(spec.plugin or "", spec.directory)
    kwargs = dict(spec.kwargs or {})
    return call_plugin(lambda: factory(**kwargs), seconds=spec.move_timeout, output=output,
                       timeout_error=timeout_error(spec, building=True), notice=notice)


def timeout_error(spec: AgentSpec, building: bool = False) -> str:
    """The forfeit's reason when plugin ``spec`` runs out of time (docs/agents.md)."""
    return (f"move_timeout: plugin {spec.name!r} took longer than {spec.move_timeout:g} s"
            f"{' to build' if building else ''} ({MOVE_TIMEOUT_KEY})")


def check_plugin(spec: AgentSpec, where: str = "agents") -> None:
    """Import ``spec``'s plugin and build one agent, so that a broken plugin stops a run before
    any game (the agent built here, and what its factory printed, are thrown away; each game
    builds its own). A factory that hangs past its time limit is said in the error's one line
    only: the notice of a plugin left running (:func:`_abandon`) is for a game's, and came now and
    then, only in a process where no plugin of that name had been left running yet.

    Raises:
        ConfigError: one line naming ``where``: import failure, no such callable, the callable
            raising on these keyword arguments (or exiting, or running past its time limit), or
            an agent without ``choose``.
    """
    try:
        agent = build_agent(spec, PluginOutput(), notice=False)
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


# ---------------------------------------------------------------------------------------------
# The boundary between a plugin and its game: exceptions, time limit, prints

class PluginFailure(Exception):
    """A plugin's call gave no answer: it raised (any exception: ``SystemExit`` from
    ``sys.exit()`` too) or it ran past its time limit. The game forfeits (``agent_error``).

    Attributes:
        error: one line: the exception (:func:`~boopexp.errors.exception_line`), or the ``timeout_error`` given.
        timed_out: the call ran past its time limit.
    """

    def __init__(self, error: str, timed_out: bool = False):
        super().__init__(error)
        self.error, self.timed_out = error, timed_out


def call_plugin(fn: Callable[..., Any], *args: Any, seconds: float, output: PluginOutput | None,
                timeout_error: str, notice: bool = True) -> Any:
    """``fn(*args)``, a call into a plugin, kept from touching anything but its own game.

    The call runs in a thread of its own (:class:`_Call`) while the calling thread waits for it,
    at most ``seconds``. Why a thread: Ctrl-C and SIGTERM are handled in the main thread, so the
    plugin never sees them (a plugin that catches every exception cannot swallow them, and the
    run stays interruptible however the plugin behaves), and the caller can give up on a call
    that does not end.

    * Exceptions: anything ``fn`` raises, ``BaseException`` subclasses included (``sys.exit()``
      raises ``SystemExit``; ``KeyboardInterrupt`` raised by the plugin itself is its own, never
      the user's Ctrl-C, which reaches the waiting thread), becomes a :class:`PluginFailure`.
    * Time: past ``seconds``, the call is interrupted (:data:`_TimeUp` raised in its thread, again
      every :data:`REMIND_S` seconds, for :data:`GRACE_S` seconds) and fails (``timeout_error``),
      even if it answers meanwhile. One that does not stop (it catches the interruption, or it is
      blocked in a system call or in C code, where no exception can reach it) is abandoned: its
      thread is left to run until the process ends, and :func:`_abandon` says so once on stderr
      (unless ``notice`` is False).
    * Prints: what ``fn`` writes to ``sys.stdout`` or ``sys.stderr`` goes to ``output`` (None:
      thrown away), never to the run's own streams (``game --json`` prints JSON, progress lines
      are not cut). Writes below Python's streams (``os.write(1, ...)``, C code, child processes)
      are not captured.

    A signal that interrupts the wait (KeyboardInterrupt) propagates: the run stops; the plugin
    is interrupted too, not waited for.

    Raises:
        PluginFailure: ``fn`` raised or ran out of time.
    """
    call = _Call(fn, args, output if output is not None else PluginOutput())
    call.start()
    try:
        answered = call.done.wait(max(seconds, 0.0))
    except BaseException:  # Ctrl-C or SIGTERM in this thread: the run stops
        call.interrupt()
        raise
    if not answered:
        if not call.stop(GRACE_S):
            _abandon(call, timeout_error, notice)
        raise PluginFailure(timeout_error, timed_out=True)
    if call.error is not None:
        raise PluginFailure(exception_line(call.error))
    return call.value


#: Seconds between two interruptions of a plugin past its time limit, and how long it has to stop.
REMIND_S = 0.1
GRACE_S = 0.5


class _TimeUp(BaseException):
    """Raised inside a plugin's call when its time is up. A BaseException, so that a plugin's
    ``except Exception`` does not swallow it."""


_NEW, _RUNNING, _DONE, _CANCELLED = range(4)


class _Call(threading.Thread):
    """One call into a plugin, in a daemon thread (a thread left running does not keep the
    process alive). :meth:`interrupt` raises :class:`_TimeUp` in it
    (``PyThreadState_SetAsyncExc``, CPython only, like boopexp's engine, numba): the exception
    comes at the plugin's next Python bytecode, so not while it is blocked in a system call
    (``time.sleep``, I/O, a lock) or in C code that does not return.

    The states make the interruption safe: it is raised only while ``fn`` runs (from just before
    it is called until the thread has noted its end, with a pending one cleared then), never
    into the thread's own bookkeeping nor, once the thread has ended, into another thread that
    reuses its identifier.
    """

    def __init__(self, fn: Callable[..., Any], args: tuple, output: PluginOutput):
        super().__init__(name="boopexp-plugin", daemon=True)
        self.fn: Any = fn
        self.args: Any = args
        self.output = output
        self.value: Any = None
        self.error: BaseException | None = None
        #: set once the call has ended, whichever way
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._state = _NEW
        self._sent = False

    def run(self) -> None:
        try:
            with _captured(self.output):
                try:
                    try:
                        with self._lock:
                            if self._state == _CANCELLED:
                                return
                            self._state = _RUNNING
                        self.value = self.fn(*self.args)
                    except BaseException as exc:  # noqa: BLE001 - whatever the plugin raised: its game forfeits
                        self.error = exc
                except BaseException as exc:  # noqa: BLE001 - an interruption raised just as the call ended
                    self.error = exc
                self._end()
        finally:
            self.fn = self.args = None  # the plugin's objects are not kept alive by an abandoned thread
            self.done.set()

    def _end(self) -> None:
        while True:
            try:
                with self._lock:
                    self._state = _DONE
                    if self._sent:
                        _set_async_exc(threading.get_ident(), None)  # one not raised yet never is now
                return
            except _TimeUp:  # raised before the lock was taken
                continue

    def interrupt(self) -> None:
        """Raise :class:`_TimeUp` in the call if it is running; a call not begun never begins."""
        with self._lock:
            if self._state == _NEW:
                self._state = _CANCELLED
            elif self._state == _RUNNING and self.ident is not None:
                self._sent = True
                _set_async_exc(self.ident, _TimeUp)

    def stop(self, grace: float) -> bool:
        """Interrupt the call every :data:`REMIND_S` seconds until it ends, at most ``grace``
        seconds; whether it has ended."""
        deadline = time.monotonic() + grace
        while not self.done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.interrupt()
            self.done.wait(min(REMIND_S, left))
        return self.done.is_set() or not self.is_alive()


#: The plugins already reported as left running in this process (:func:`_abandon`).
_ABANDONED: set[str] = set()


def _abandon(call: _Call, timeout_error: str, notice: bool = True) -> None:
    """Leave ``call`` running: what it prints from now on is thrown away (its game is over), and
    stderr says so, once a process for each plugin: its thread may keep a CPU busy until the
    process ends (``run --jobs N``: a worker process; ``game``, ``play``, ``run --jobs 1``: the
    command's own)."""
    with _SINKS_LOCK:
        if call.ident in _SINKS:
            _SINKS[call.ident] = PluginOutput()
    if timeout_error in _ABANDONED or not notice:
        return
    _ABANDONED.add(timeout_error)
    stream = _real_stderr()
    stream.write(
        f"Warning: {timeout_error.removeprefix('move_timeout: ')} and did not stop when interrupted (it catches "
        f"the interruption, or is blocked in a system call or C code): it forfeits, and is left running in "
        f"process {os.getpid()} until that process ends (it may keep a CPU busy).\n")
    stream.flush()


def _real_stderr() -> Any:
    stream = sys.stderr
    while isinstance(stream, _Router):
        stream = stream._stream
    return stream


def _quiet_time_up(args: Any, hook: Any = threading.excepthook) -> None:
    """threading.excepthook: an interruption that reached a plugin's thread after its last
    handler is no error to report (the call ended); anything else goes to the hook before."""
    if args.exc_type is _TimeUp and isinstance(args.thread, _Call):
        return
    hook(args)


threading.excepthook = _quiet_time_up


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
        # Not only for the first call: a stream replaced since (a test's capture, a plugin left
        # running that replaced it) is routed too.
        if not isinstance(sys.stdout, _Router):
            sys.stdout = _Router(sys.stdout)
        if not isinstance(sys.stderr, _Router):
            sys.stderr = _Router(sys.stderr)
        _SINKS[tid] = output
    try:
        yield
    finally:
        with _SINKS_LOCK:
            _SINKS.pop(tid, None)
            if not _SINKS:
                # put the streams back, unless the plugin replaced them meanwhile
                if isinstance(sys.stdout, _Router):
                    sys.stdout = sys.stdout._stream
                if isinstance(sys.stderr, _Router):
                    sys.stderr = sys.stderr._stream


def interruptible(fn: Callable[[], Any]) -> _Call:
    """``fn()`` started in a thread of its own that :meth:`_Call.stop` interrupts (what it prints
    is thrown away): ``boopexp serve`` runs an agent's search so, and stops it when its game is
    abandoned. The interruption comes at the search's next Python bytecode (an MCTS search returns
    to Python every few hundredths of a second); ``fn`` must not be compiling the engine then (numba
    cut mid-compilation is left broken): compile first."""
    call = _Call(fn, (), PluginOutput())
    call.start()
    return call
