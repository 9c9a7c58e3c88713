"""Ctrl-C and SIGTERM while games are played: ``Interrupts`` (``run``, ``game``, ``play``),
``sigint_blocked`` (the pools' processes leave Ctrl-C to the parent).

Ctrl-C and SIGTERM while games are played: :class:`Interrupts` (the parent's handling of both
signals, used by ``run``, ``game`` and ``play``), :func:`sigint_blocked` (the pools' processes
and threads are born deaf to Ctrl-C, which the parent alone handles) and
:func:`start_resource_trackers` (the trackers that clean up after killed workers, quietly).
docs/runner.md."""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


class Interrupts:
    """While a run plays: SIGINT (Ctrl-C) and SIGTERM (``kill``, a batch scheduler pre-empting
    the job) stop it by raising KeyboardInterrupt in the main thread, except inside
    :meth:`held`, where the signal is remembered and raised as soon as the section ends.
    ``boopexp game`` and ``boopexp play`` stop the same way (:attr:`signum` says which signal).

    A flag rather than ``pthread_sigmask``: a mask only holds the signal off the main thread,
    and the kernel then hands it to one of the pool's threads, whose Python handler still runs
    in the main thread at once, in the middle of the section.

    A KeyboardInterrupt raised while the main thread is in a C library's callback into Python
    (numba compiling the engine calls back from LLVM) is dropped by the library: until the block
    is left, the signal is raised again every :data:`REMIND_S` seconds, and the dropped one is not
    printed as a traceback.
    """

    #: seconds between two raises of a signal that has not stopped the block yet
    REMIND_S = 1.0

    def __init__(self) -> None:
        self.signum: int | None = None
        self.stopped = False
        self._holding = False
        self._pending = False
        self._settled = False
        self._leaving = False
        self._left = threading.Event()
        self._reminder: threading.Thread | None = None
        self._previous: dict[int, Any] = {}
        self._unraisable: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        self.signum = signum
        if self._leaving:  # a reminder after the block raised: it is already stopping
            return
        if self._holding:
            self._pending = True
            return
        self._remind(signum)
        raise KeyboardInterrupt

    def _remind(self, signum: int) -> None:
        if self._reminder is not None or not self._previous:
            return
        left = self._left

        def again() -> None:
            while not left.wait(self.REMIND_S):
                _thread.interrupt_main(signal.Signals(signum))  # runs _handler in the main thread, as the signal did

        self._reminder = threading.Thread(target=again, name="boopexp-interrupt-reminder", daemon=True)
        self._reminder.start()

    def _quiet_unraisable(self, unraisable: Any) -> None:
        if self.signum is not None and unraisable.exc_type is KeyboardInterrupt:
            return  # the signal's KeyboardInterrupt, dropped by a C callback: the reminder raises it again
        self._unraisable(unraisable)

    def __enter__(self) -> Interrupts:
        self._holding = self._pending = self._settled = self._leaving = False
        self._left = threading.Event()
        self._reminder = None
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handler)
            self._unraisable, sys.unraisablehook = sys.unraisablehook, self._quiet_unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        self._leaving = True
        self._left.set()
        if self._reminder is not None:
            self._reminder.join()
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._unraisable is not None:
            sys.unraisablehook, self._unraisable = self._unraisable, None

    def settle(self) -> None:
        """From now until the block ends, a signal is only recorded (:attr:`signum`), never
        raised: called once the games are over, so that a Ctrl-C while the pool shuts down, the
        summary is printed or the process exits is one decision (:attr:`late`) made by the caller,
        not a KeyboardInterrupt (or an "Exception ignored" traceback) wherever it lands."""
        self._holding = True
        self._settled = True

    @property
    def late(self) -> bool:
        """A signal arrived after :meth:`settle` (the games were over): the caller stops as interrupted."""
        return self._settled and self._pending

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = self._settled
            if self._pending and not self._settled:
                self._pending = False
                raise KeyboardInterrupt


_IGNORING_AT_EXIT: list[bool] = []


def ignore_signals_at_exit() -> None:
    """Ignore SIGINT and SIGTERM once the interpreter exits (registered once per process).

    Python's finalization puts the default action back on a signal with a Python handler, so a
    Ctrl-C in the last milliseconds of a finished command killed it by the signal (status -2,
    no message) after its summary and exit status were decided; an ignored signal stays ignored.
    """
    if not _IGNORING_AT_EXIT:
        _IGNORING_AT_EXIT.append(True)
        atexit.register(_ignore_signals)


def _ignore_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while a pool starts its processes and threads, and hold
    Ctrl-C and SIGTERM off this process until they have started.

    A terminal sends Ctrl-C to every process of its foreground group, the pool's workers too: a
    worker would die or print a KeyboardInterrupt traceback (while importing, while playing) and
    send the interrupt back as a game's result, racing the parent's own handling of it. Processes
    and threads inherit the signal mask of the thread that starts them (through fork and exec),
    so the ones started in this block are born with SIGINT blocked: the parent alone handles
    Ctrl-C and stops them. A Ctrl-C or SIGTERM that arrives inside the block is raised when it
    ends (:func:`signals_deferred`): the pool has started, and is stopped as a whole.
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    # The pools start the standard library's resource tracker on first use, which then unblocks
    # SIGINT in the calling thread (SIG_UNBLOCK, not the previous mask) and would let the
    # workers started after it see Ctrl-C: start it before blocking (it ignores SIGINT itself).
    start_resource_trackers()
    with signals_deferred():
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a SIGINT pending here is recorded


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """In the main thread: SIGINT and SIGTERM that arrive inside the block are recorded, and
    raised again as the block ends (their handlers then run as they would have; elsewhere, as is).

    The mask of :func:`sigint_blocked` alone does not hold a Ctrl-C off: it blocks the signal in
    the calling thread only, and the kernel hands a process's signal to any thread that does not
    block it (the BLAS library's, numba's), whose C handler has Python run the handler in the main
    thread all the same, in the middle of the block. A dask LocalCluster then got the
    KeyboardInterrupt inside its constructor, once its start-up wait woke: it was left half-started
    for dask's exit hook to close, which printed an "Exception ignored in atexit callback"
    traceback after the run's one line when the start-up outlasted that wait on a loaded machine.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def record(signum: int, frame: Any) -> None:
        if signum not in arrived:
            arrived.append(signum)

    previous = {signum: signal.signal(signum, record) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for number in arrived:
            signal.raise_signal(number)  # its handler runs now, here (a KeyboardInterrupt is raised from here)



def start_resource_trackers() -> None:
    """Start the resource trackers of the standard library and of loky (joblib's process pool), if
    not running, with their warnings off.

    A tracker is a process that unlinks the semaphores a pool's processes leave behind when they
    die. A Ctrl-C stops the workers where they are (loky's ``kill_workers``), and loky's tracker
    then warned on the terminal, after the run's one line, of "leaked semlock objects" and of
    semaphores already unlinked (issue 33). It still cleans them up; its warnings, about the
    workers this process chose to kill, are no news to the user. A tracker inherits this
    process's environment when it is started: ``PYTHONWARNINGS`` is set for that instant only.
    """
    from multiprocessing import resource_tracker as stdlib_tracker

    from joblib.externals.loky.backend import resource_tracker as loky_tracker

    previous = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = "ignore"
    try:
        stdlib_tracker.ensure_running()
        loky_tracker.ensure_running()
    finally:
        if previous is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = previous
