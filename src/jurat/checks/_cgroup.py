"""One cgroup (v1, ``pids`` + ``memory``) per sandboxed run.

Measured on the reference machine (docs/design.md, "The code sandbox"): as
uid 0, ``RLIMIT_NPROC`` is not enforced even inside bwrap's user namespace, so process and memory
limits come from these controllers. Each run gets a fresh group under the
caller's own group (so any limit already placed on the caller still applies),
the sandbox's first process joins it before exec'ing bwrap, and the whole
group is SIGKILLed at the end, which also removes double-forked daemons.

When the ``cpu`` controller is available the run also gets its own CPU group,
capped at one core and weighted like a single process, so that a fork bomb
in one run cannot starve concurrent runs into false timeouts. It is
fairness, not containment, so a host without it still runs checks.
"""

from __future__ import annotations

import itertools
import os
import secrets
import signal
import time
from pathlib import Path

from jurat.errors import SandboxError
from jurat.models._base import Frozen

__all__ = ["GroupStats", "RunGroup", "controller_dirs"]

_CONTROLLERS = ("pids", "memory")
_OPTIONAL = ("cpu",)
_CPU_PERIOD_US = 100_000
_COUNTER = itertools.count()
_PREFIX = "jurat-"


class GroupStats(Frozen):
    """What the kernel counted for one run's group."""

    oom_kills: int
    """Processes the memory controller's OOM killer ended."""
    pids_max_hits: int
    """Fork or clone attempts refused because ``pids.max`` was reached."""
    memory_peak_bytes: int
    """Peak memory charged to the group (includes tmpfs pages)."""
    pids_peak: int
    """Largest number of tasks seen in the group (0 if the kernel does not report it)."""


def _mounts() -> dict[str, tuple[Path, str]]:
    """controller -> (mount point, root of the mount inside the hierarchy)."""
    found: dict[str, tuple[Path, str]] = {}
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, extra = left.split(), right.split()
            if len(extra) < 3 or extra[0] != "cgroup":
                continue
            options = set(extra[2].split(","))
            for controller in _CONTROLLERS + _OPTIONAL:
                if controller in options and controller not in found:
                    found[controller] = (Path(fields[4]), fields[3])
    return found


def _own_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            _, names, path = line.rstrip("\n").split(":", 2)
            for controller in names.split(","):
                paths[controller] = path
    return paths


def controller_dirs() -> dict[str, Path]:
    """The directory of the caller's own group for each needed controller.

    Raises SandboxError when a controller is missing or not writable: the
    limits would not hold, so the sandbox refuses to run (fails closed).
    """
    mounts, own = _mounts(), _own_paths()
    dirs: dict[str, Path] = {}
    for controller in _CONTROLLERS:
        if controller not in mounts or controller not in own:
            raise SandboxError(
                f"cgroup v1 controller `{controller}` is not mounted; process and memory "
                "limits cannot be enforced (fix: run on a host with cgroup v1 pids and "
                "memory controllers, as root)"
            )
        directory = _controller_dir(mounts, own, controller)
        if directory is None or not os.access(directory, os.W_OK):
            raise SandboxError(
                f"cannot create a cgroup under {directory} (not writable); process and "
                "memory limits cannot be enforced (fix: run jurat checks as root)"
            )
        dirs[controller] = directory
    for controller in _OPTIONAL:
        optional = _controller_dir(mounts, own, controller)
        if optional is not None and os.access(optional, os.W_OK):
            dirs[controller] = optional
    return dirs


def _controller_dir(
    mounts: dict[str, tuple[Path, str]], own: dict[str, str], controller: str
) -> Path | None:
    if controller not in mounts or controller not in own:
        return None
    mount, root = mounts[controller]
    relative = own[controller]
    if root != "/" and relative.startswith(root):
        relative = relative[len(root) :]
    return mount / relative.lstrip("/")


def _read_int_field(path: Path, key: str) -> int:
    try:
        for line in path.read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        return 0
    return 0


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return 0


def _procs(directory: Path) -> list[int]:
    try:
        text = (directory / "cgroup.procs").read_text(encoding="ascii")
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunGroup:
    """A pair of sibling cgroups (pids, memory) that holds exactly one sandboxed run."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self._dirs = dirs

    @classmethod
    def create(cls, *, pids_max: int, memory_bytes: int) -> RunGroup:
        """Create the group with its limits; raises SandboxError if the kernel refuses."""
        parents = controller_dirs()
        name = f"{_PREFIX}{os.getpid()}-{next(_COUNTER)}-{secrets.token_hex(4)}"
        dirs: dict[str, Path] = {}
        try:
            for controller, parent in parents.items():
                _reap_stale(parent)
                directory = parent / name
                directory.mkdir()
                dirs[controller] = directory
            (dirs["pids"] / "pids.max").write_text(str(pids_max), encoding="ascii")
            memory = dirs["memory"]
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes), encoding="ascii")
            memsw = memory / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                # Without this a run could push its pages to swap instead of being limited.
                memsw.write_text(str(memory_bytes), encoding="ascii")
            if "cpu" in dirs:
                (dirs["cpu"] / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US), "ascii")
                (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(_CPU_PERIOD_US), "ascii")
        except OSError as exc:
            RunGroup(dirs).remove()
            raise SandboxError(f"cannot set up the run's cgroup: {exc}") from exc
        return cls(dirs)

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files the sandbox's first process writes itself into."""
        return tuple(str(directory / "cgroup.procs") for directory in self._dirs.values())

    def pids(self) -> list[int]:
        """Every process currently in the group."""
        return sorted({pid for d in self._dirs.values() for pid in _procs(d)})

    def stats(self) -> GroupStats:
        """Counters to read after the run, before remove()."""
        pids, memory = self._dirs["pids"], self._dirs["memory"]
        return GroupStats(
            oom_kills=_read_int_field(memory / "memory.oom_control", "oom_kill"),
            pids_max_hits=_read_int_field(pids / "pids.events", "max"),
            memory_peak_bytes=_read_int(memory / "memory.max_usage_in_bytes"),
            pids_peak=_read_int(pids / "pids.peak"),
        )

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process in the group until it is empty; True when it emptied."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)
        return not self.pids()

    def remove(self, timeout_s: float = 5.0) -> bool:
        """Kill what is left and delete both groups; True when nothing remains."""
        self.kill_all(timeout_s)
        deadline = time.monotonic() + timeout_s
        remaining = dict(self._dirs)
        while remaining and time.monotonic() < deadline:
            for controller, directory in list(remaining.items()):
                try:
                    directory.rmdir()
                except FileNotFoundError:
                    del remaining[controller]
                except OSError:
                    continue
                else:
                    del remaining[controller]
            if remaining:
                time.sleep(0.01)
        return not remaining


def _reap_stale(parent: Path) -> None:
    """Remove groups left by a jurat process that died mid-run (its pid is gone)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(_PREFIX) or not entry.is_dir():
            continue
        owner = entry.name[len(_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or _pid_alive(int(owner)):
            continue
        RunGroup({"stale": entry}).remove(timeout_s=1.0)
