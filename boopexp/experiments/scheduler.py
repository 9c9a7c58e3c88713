"""A Dask scheduler's address checked, the connection made within ``SCHEDULER_TIMEOUT_S``; with
``--slurm``, dask-jobqueue's ``SLURMCluster`` (its worker job checked by ``sbatch --test-only``
first).

The dask scheduler a run connects to: its address checked (``[protocol://]host:port``) and the
connection made within :data:`SCHEDULER_TIMEOUT_S`, or one line saying it cannot be reached; or,
with ``--slurm``, the scheduler a run starts itself, whose workers are Slurm jobs (dask-jobqueue's
``SLURMCluster``), the worker job checked by Slurm before anything is written (docs/cluster.md).
"""

from __future__ import annotations

import contextlib
import math
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
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



# --------------------------------------------------------------------------------------------
# --slurm: dask-jobqueue's SLURMCluster

#: What a worker job asks for when dask's ``jobqueue.slurm`` config does not say (docs/cluster.md).
SLURM_DEFAULT_CORES = 1
SLURM_DEFAULT_MEMORY_PER_CORE_GB = 2


def check_slurm() -> None:
    """Refuse ``--slurm`` where dask-jobqueue is not installed or Slurm's ``sbatch`` is not on PATH.

    Raises:
        ConfigError: with what to install or where to run.
    """
    try:
        import dask_jobqueue  # noqa: F401
    except ImportError:
        raise ConfigError("--slurm needs dask-jobqueue, which is not installed; install it with: "
                          "pip install 'boopexp[slurm]'") from None
    if shutil.which("sbatch") is None:
        raise ConfigError("--slurm submits the dask workers with sbatch, which is not on PATH: run boopexp where "
                          "you submit Slurm jobs (a login node), or start the workers yourself and pass --scheduler")


def slurm_job_options(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The keyword arguments of a ``SLURMCluster`` (and of its worker job): dask's ``jobqueue.slurm``
    config (queue, account, walltime, …: ``~/.config/dask/jobqueue.yaml`` or ``DASK_JOBQUEUE__SLURM__*``),
    with each job's cores run as as many single-threaded worker processes, ``environ`` exported
    in the job script, and one core and 2 GB a core where the config gives no cores or memory.

    A game runs on one core, and holds the GIL but in its searches' kernels (``nogil`` only
    there, so that ``boopexp serve`` answers while its agents think), so threads sharing a worker
    would mostly take turns: one process per core, one thread each.
    """
    import dask

    cores = int(dask.config.get("jobqueue.slurm.cores", None) or SLURM_DEFAULT_CORES)
    memory = dask.config.get("jobqueue.slurm.memory", None) or f"{SLURM_DEFAULT_MEMORY_PER_CORE_GB * cores}GB"
    prologue = list(dask.config.get("jobqueue.slurm.job-script-prologue", None) or [])
    if environ:
        prologue.append("export " + " ".join(f"{k}={v}" for k, v in environ.items()))
    return {"cores": cores, "processes": cores, "memory": memory, "job_script_prologue": prologue}


def probe_slurm() -> None:
    """Ask Slurm whether it would run the worker job (``sbatch --test-only``: nothing is submitted),
    so that a bad partition, account or limit is one line before anything is written.

    Raises:
        ConfigError: Slurm refused the job; its own error line.
    """
    from dask_jobqueue.slurm import SLURMJob

    script = SLURMJob("tcp://127.0.0.1:8786", name="boopexp-probe", **slurm_job_options()).job_script()
    try:
        done = subprocess.run(["sbatch", "--test-only"], input=script, capture_output=True, text=True,
                              timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"--slurm: sbatch --test-only of the dask worker job failed ({exc})") from None
    if done.returncode != 0:
        # its own error line if it has one (a bad partition), else its last word (a memory limit: on stdout)
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("sbatch: error:")]
        reason = errors[0] if errors else lines[-1] if lines else f"exit {done.returncode}"
        raise ConfigError(f"--slurm: Slurm refuses the dask worker job ({reason}); set its options in dask's "
                          "jobqueue.slurm config (docs/cluster.md \"Dask on Slurm\")")


@contextlib.contextmanager
def slurm_cluster(workers: int, environ: Mapping[str, str]) -> Iterator[Any]:
    """A ``SLURMCluster`` that keeps ``workers`` single-threaded worker processes as Slurm jobs
    (:func:`slurm_scale`); closing it cancels its jobs (scancel)."""
    from dask_jobqueue import SLURMCluster

    with SLURMCluster(**slurm_job_options(environ)) as cluster:
        slurm_scale(cluster, workers)
        yield cluster


def slurm_scale(cluster: Any, workers: int) -> None:
    """Keep ``workers`` worker processes in ``cluster``: ``cores`` of them a job, a job that ends
    (walltime, preemption, scancel) submitted again (adaptive, with as many jobs at least as at most)."""
    jobs = math.ceil(workers / slurm_job_options()["cores"])
    cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)


def slurm_banner(address: str, workers: int, kept: bool = False) -> str:
    """The line that says where a ``--slurm`` run's games are played (``kept``: on the jobs of the
    command's previous run)."""
    cores = slurm_job_options()["cores"]
    return (f"dask: scheduler at {address}; {math.ceil(workers / cores)} Slurm job(s) of {cores} worker(s) "
            + ("kept from the previous run (squeue --me)" if kept else
               "submitted (squeue --me): the games start as the workers join"))
