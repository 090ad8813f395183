"""A Ray cluster on this machine for tests and benchmarks: one head, N worker nodes.

Every process binds to loopback where Ray lets it (FACTS: the GCS still listens on all
interfaces). The cluster lives in its own ``--temp-dir``, so stopping it kills exactly the
processes this helper started (those naming that directory, and their descendants), never
another Ray on the machine, which ``ray stop`` would.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray(*args: str, timeout: float = 120) -> None:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    r = subprocess.run([RAY, *args], capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"ray {' '.join(args)} failed: {r.stdout}\n{r.stderr}")


@dataclass
class LocalCluster:
    """A started cluster: its address (for ``--ray-address``) and its temp dir."""

    address: str
    temp_dir: Path
    workers: int
    started: float = field(default_factory=time.monotonic)

    def add_worker(self, cpus: int = 1) -> None:
        _ray("start", "--address", self.address, "--node-ip-address", "127.0.0.1",
             "--num-cpus", str(cpus), "--temp-dir", str(self.temp_dir),
             "--disable-usage-stats")

    def pids(self) -> list[int]:
        """Every process of this cluster: those whose command line names its temp dir, and
        their descendants (Ray's workers rename themselves ``ray::…``)."""
        parents: dict[int, int] = {}
        roots: set[int] = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    errors="replace")
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
            if str(self.temp_dir) in cmdline:
                roots.add(pid)
        roots.discard(os.getpid())
        found = set(roots)
        grew = True
        while grew:
            grew = False
            for pid, parent in parents.items():
                if parent in found and pid not in found and pid != os.getpid():
                    found.add(pid)
                    grew = True
        return sorted(found)

    def job_workers(self) -> list[int]:
        """The worker processes running a ``jurat_job`` task right now."""
        found = []
        for pid in self.pids():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::jurat_job"):
                found.append(pid)
        return found

    def stop(self) -> None:
        for _ in range(3):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.3)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@contextmanager
def local_cluster(workers: int, *, cpus_per_worker: int = 1) -> Iterator[LocalCluster]:
    """A head node without CPUs (it schedules no task) and ``workers`` worker nodes with
    ``cpus_per_worker`` each, stopped (all its processes killed) on leaving, always."""
    # A short path: Ray's unix socket names must fit in 107 bytes.
    temp_dir = Path(tempfile.gettempdir()) / f"jr-{uuid.uuid4().hex[:8]}"
    port = free_port()
    cluster = LocalCluster(f"127.0.0.1:{port}", temp_dir, workers)
    try:
        _ray("start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
             "--num-cpus", "0", "--temp-dir", str(temp_dir), "--include-dashboard",
             "false", "--disable-usage-stats")
        for _ in range(workers):
            cluster.add_worker(cpus_per_worker)
        yield cluster
    finally:
        cluster.stop()
