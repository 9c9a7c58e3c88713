"""A real single-node Slurm for the tests (tests/test_slurm.py, ``make test-slurm``): munged,
slurmctld and slurmd of Debian's slurm-wlm and munge, started on this machine in a temporary
folder and stopped again, whatever the test's outcome.

The cluster is one node, ``localhost`` (2 CPUs, whatever the machine has), in one partition
``test``. Everything listens on 127.0.0.1 only (``CommunicationParameters=NoCtldInAddrAny,
NoInAddrAny``; munge on a Unix socket of the folder), on ports free when it starts. No cgroups
(we may be in a container): ``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``. The
daemons run as root (slurmd must, to start jobs): :func:`missing` says why the tests are skipped
where Slurm is not installed or we are not root. ``cred_expire=5`` makes a requeued job eligible
again after 6 s instead of Slurm's default 121 s (a requeue waits for its old credential to
expire).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

#: Where Debian puts the daemons (a non-root PATH may lack the sbin folders).
_SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
#: Job states after which a job does nothing more (squeue/scontrol names).
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
            "PREEMPTED"}


def missing() -> str | None:
    """Why a real Slurm cannot run here (the tests' skip reason), or None if it can."""
    absent = [name for name in (*DAEMONS, *CLIENTS) if shutil.which(name, path=_SEARCH_PATH) is None]
    if absent:
        return (f"Slurm is not installed ({', '.join(absent)} not found): as root, `make test-slurm` installs "
                "Debian's slurm-wlm and munge and runs these tests")
    if os.geteuid() != 0:
        return "the local Slurm runs its daemons as root (slurmd starts the jobs): run `make test-slurm` as root"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session(pid: int) -> int | None:
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[3])
    return None


class LocalSlurm:
    """munged, slurmctld and slurmd of one test, in ``folder``; clients get ``env``."""

    def __init__(self, folder: Path, cpus: int = 2) -> None:
        self.folder = folder
        self.cpus = cpus
        self.conf = folder / "slurm.conf"
        self.daemons: list[subprocess.Popen] = []
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "PATH": path}

    # -- set-up ---------------------------------------------------------------------------------

    def write_conf(self) -> None:
        """The munge key and slurm.conf of a one-node cluster on 127.0.0.1."""
        f = self.folder
        for sub in ("state", "spool", "log", "munge"):
            (f / sub).mkdir(parents=True, exist_ok=True)
        (f / "munge").chmod(0o711)  # munged wants its socket's folder reachable by every user
        subprocess.run([shutil.which("mungekey", path=_SEARCH_PATH) or "mungekey", "--create", "--force",
                        "--keyfile", str(f / "munge" / "munge.key")], check=True, capture_output=True)
        memory = 2000
        self.conf.write_text(f"""\
ClusterName=boopexp-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={f / 'munge' / 'socket'},cred_expire=5
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation={f / 'state'}
SlurmdSpoolDir={f / 'spool'}
SlurmctldPidFile={f / 'slurmctld.pid'}
SlurmdPidFile={f / 'slurmd.pid'}
SlurmctldLogFile={f / 'log' / 'slurmctld.log'}
SlurmdLogFile={f / 'log' / 'slurmd.log'}
PlugStackConfig={f / 'plugstack.conf'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={memory} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")
        (f / "plugstack.conf").write_text("")

    def _start(self, name: str, *args: str) -> None:
        exe = shutil.which(name, path=_SEARCH_PATH) or name
        log = (self.folder / "log" / f"{name}.out").open("ab")
        self.daemons.append(subprocess.Popen([exe, *args], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True))

    def start(self, timeout: float = 30) -> None:
        """Start the daemons (in the foreground, each in its own session) and wait for the node."""
        self.write_conf()
        f = self.folder / "munge"
        self._start("munged", "--foreground", "--force", f"--key-file={f / 'munge.key'}", f"--socket={f / 'socket'}",
                    f"--pid-file={f / 'munged.pid'}", f"--log-file={f / 'munged.log'}", f"--seed-file={f / 'seed'}")
        self._wait(lambda: (f / "socket").exists(), "munged's socket", timeout)
        self._start("slurmctld", "-D", "-c", "-f", str(self.conf))
        self._start("slurmd", "-D", "-N", "localhost", "-f", str(self.conf))
        self._wait(lambda: self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip() == "idle",
                   "the node to be idle", timeout)

    def _wait(self, condition, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            dead = [p.args[0] for p in self.daemons if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"local Slurm: {'died: ' + ', '.join(dead) if dead else 'timed out'} waiting for "
                                   f"{what}\n{self.logs()}")
            time.sleep(0.1)

    def logs(self) -> str:
        """The daemons' logs (for a failing test's message)."""
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted((self.folder / "log").glob("*")) if p.is_file())

    # -- clients --------------------------------------------------------------------------------

    def run(self, *args: str, cwd: Path | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """A client command (sbatch, scontrol, …) against this cluster."""
        return subprocess.run(list(args), cwd=cwd, env={**self.env, **(env or {})}, capture_output=True, text=True,
                              check=check, timeout=60)

    def states(self, job: str) -> dict[str, str]:
        """``{job id: state}`` of a job, or of each task of a job array (``12_3``: task 3 of 12)."""
        out = self.run("scontrol", "-o", "show", "job", job, check=False).stdout
        found = {}
        for line in out.splitlines():
            fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
            task = fields.get("ArrayTaskId")
            name = f"{fields.get('ArrayJobId')}_{task}" if task else fields.get("JobId", "?")
            found[name] = fields.get("JobState", "?")
        return found

    def wait_finished(self, jobs: Iterable[str], timeout: float) -> dict[str, str]:
        """Wait until every task of ``jobs`` has finished; their states."""
        jobs = list(jobs)
        states: dict[str, str] = {}

        def finished() -> bool:
            states.clear()
            for job in jobs:
                states.update(self.states(job))
            return bool(states) and all(s in FINISHED for s in states.values())

        self._wait(finished, f"jobs {', '.join(jobs)} to finish (now {states})", timeout)
        return states

    # -- tear-down ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancel every job, stop the daemons, and kill whatever of theirs is left: nothing leaks."""
        if self.daemons and self.daemons[-1].poll() is None:
            with contextlib.suppress(Exception):
                self.run("scancel", "--full", "--partition=test", check=False)
                deadline = time.monotonic() + 15
                while self.run("squeue", "-h", "-t", "RUNNING,COMPLETING", check=False).stdout.strip():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
        sessions = {p.pid for p in self.daemons}
        for proc in reversed(self.daemons):  # slurmd, slurmctld, then munged
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        for pid in self.leftovers(sessions):  # job steps in the daemons' sessions, or run against our conf
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.daemons.clear()

    def leftovers(self, sessions: set[int] | None = None) -> list[int]:
        """Processes of this cluster still alive: in a daemon's session, or started with our SLURM_CONF."""
        sessions = sessions if sessions is not None else {p.pid for p in self.daemons}
        mark = f"SLURM_CONF={self.conf}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            pid = int(entry.name)
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] == "Z":
                    continue
                if _session(pid) in sessions or mark in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(pid)
        return found
