"""Run a candidate's tests inside bubblewrap (seed 000, "Code correctness pipeline", step 4).

Host side of protocol ``jurat.sandbox/v1`` (the sandbox side is ``_runner.py``).
Each run gets:

* a fresh cgroup (``pids`` + ``memory``) that the first process joins before
  exec'ing bwrap, killed whole at the end;
* ``bwrap --unshare-all --unshare-user --uid 65534 --disable-userns --cap-drop
  ALL --new-session --die-with-parent --clearenv``: no network, no host
  home, no /etc, no credentials, an unprivileged uid;
* read-only binds of /usr, the Python runtime and the site directory that
  holds pytest and coverage; size-limited tmpfs at /work and /tmp;
* ``python -I -S``; rlimits (CPU, address space, file size, open files, no
  core) set in the test process; the wall-clock limit enforced here with
  SIGKILL; stdout+stderr read here and cut at the output cap.

The verdict comes from the result descriptor (an anonymous memfd that only
the in-sandbox supervisor holds) and must carry this run's nonce. If bwrap is
missing or cannot create its namespaces, SandboxError is raised: nothing is
ever run on the host instead.
"""

from __future__ import annotations

import hmac
import importlib.util
import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurat.checks._cgroup import GroupStats, RunGroup
from jurat.checks._models import CaseResult, CoverageStats, RunOutcome, SandboxRun
from jurat.errors import SandboxError
from jurat.models._base import Frozen
from jurat.models._checks import Limits

__all__ = ["SANDBOX_PROTOCOL", "Runtime", "run_tests", "runtime"]

SANDBOX_PROTOCOL = "jurat.sandbox/v1"
SANDBOX_UID = "65534"
WORKDIR = "/work"
_PY_DIR = "/opt/jurat/python"
_RUNNER = "/opt/jurat/runner.py"
# bwrap's outer monitor, its pid-1 init and the supervisor share the group's pid budget.
_HARNESS_PROCS = 3
# RLIMIT_AS counts address space, not resident memory: an interpreter with pytest
# maps a few hundred MiB it never touches, and every thread reserves a stack. The
# cgroup limit is the real memory cap; this only turns one absurd allocation into a
# prompt MemoryError, and is set high enough that a thread bomb meets the pids
# limit (process_limit) before it runs out of address space.
_AS_HEADROOM_BYTES = 1024 * 1024 * 1024
_MAX_RESULT_BYTES = 16 * 1024 * 1024
_SITE_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "coverage", "hypothesis")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# The first process joins every group of the run and only then becomes bwrap, so
# nothing of the sandbox ever runs outside the groups (no preexec_fn in threads).
_SH_JOIN_CGROUP = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); '
    'done; exec "$@"'
)


class Runtime(Frozen):
    """The host paths bound into every sandbox."""

    bwrap: str
    """Absolute path of the bwrap binary."""
    bwrap_version: str
    """``bwrap --version`` output, e.g. ``bubblewrap 0.8.0``."""
    python_prefix: str
    """The base interpreter's installation prefix (bound read-only)."""
    python_exe: str
    """The interpreter's path relative to the prefix, e.g. ``bin/python3.11``."""
    sites: tuple[str, ...]
    """Site directories holding pytest, coverage and hypothesis (bound read-only)."""
    runner: str
    """Path of ``_runner.py`` (bound read-only)."""


_RUNTIME_LOCK = threading.Lock()
_RUNTIME: list[Runtime] = []


def runtime() -> Runtime:
    """Locate bwrap and the Python runtime once; SandboxError if bwrap is unusable."""
    with _RUNTIME_LOCK:
        if not _RUNTIME:
            _RUNTIME.append(_discover())
        return _RUNTIME[0]


def _discover() -> Runtime:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "bwrap (bubblewrap) is not installed; sandboxed tests cannot run and jurat never "
            "runs candidate code on the host (fix: apt-get install bubblewrap)"
        )
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot run {bwrap} --version: {exc}") from exc
    prefix = Path(sys.base_prefix)
    exe = f"bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not (prefix / exe).is_file():
        raise SandboxError(f"the base interpreter {prefix / exe} does not exist")
    sites: list[str] = []
    for name in _SITE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        site = str(Path(spec.origin).resolve().parent.parent)
        if site not in sites:
            sites.append(site)
    runner = Path(__file__).with_name("_runner.py")
    return Runtime(
        bwrap=bwrap,
        bwrap_version=version,
        python_prefix=str(prefix.resolve()),
        python_exe=exe,
        sites=tuple(sites),
        runner=str(runner.resolve()),
    )


def _reset_runtime_for_tests() -> None:
    with _RUNTIME_LOCK:
        _RUNTIME.clear()


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _bwrap_argv(rt: Runtime, limits: Limits, control_fd: int, result_fd: int) -> list[str]:
    tmpfs = str(limits.tmpfs_mb * 1024 * 1024)
    argv = [
        rt.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        SANDBOX_UID,
        "--gid",
        SANDBOX_UID,
        "--cap-drop",
        "ALL",
        "--new-session",
        "--die-with-parent",
        "--clearenv",
        "--hostname",
        "jurat-sandbox",
        *_system_binds(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        tmpfs,
        "--tmpfs",
        "/tmp",
        "--size",
        tmpfs,
        "--tmpfs",
        WORKDIR,
        # After the tmpfs mounts: bwrap applies mounts in order (FACTS.md).
        "--ro-bind",
        rt.python_prefix,
        _PY_DIR,
    ]
    for index, site in enumerate(rt.sites):
        argv += ["--ro-bind", site, f"/opt/jurat/site{index}"]
    argv += ["--ro-bind", rt.runner, _RUNNER, "--chdir", WORKDIR]
    env = {
        "LD_LIBRARY_PATH": f"{_PY_DIR}/lib",
        "HOME": WORKDIR,
        "TMPDIR": "/tmp",
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        # glibc reserves a 64 MiB arena per thread otherwise; two keep address space small.
        "MALLOC_ARENA_MAX": "2",
    }
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += [
        "--",
        f"{_PY_DIR}/{rt.python_exe}",
        "-I",
        "-S",
        _RUNNER,
        "--control",
        str(control_fd),
        "--result",
        str(result_fd),
    ]
    return argv


def _control_memfd(config: dict[str, Any], nonce: str) -> int:
    body = json.dumps(config).encode("utf-8")
    fd = os.memfd_create("jurat-control")
    os.write(fd, str(len(body)).encode("ascii") + b"\n" + body + nonce.encode("ascii") + b"\n")
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _Reading(Frozen):
    """What the host saw on the output pipe."""

    output: bytes
    """Output kept (at most the cap)."""
    total: int
    """Bytes read in all."""
    over_cap: bool
    """The cap was exceeded (the run was killed)."""
    timed_out: bool
    """The wall-clock limit was reached (the run was killed)."""


def _read_output(proc: subprocess.Popen[bytes], limits: Limits, group: RunGroup) -> _Reading:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    cap = limits.output_kb * 1024
    deadline = time.monotonic() + limits.wall_s
    kept = bytearray()
    total = 0
    over_cap = timed_out = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        total += len(chunk)
        kept += chunk[: max(0, cap - len(kept))]
        if total > cap:
            # Killing at the cap keeps the outcome independent of machine speed.
            over_cap = True
            break
    if over_cap or timed_out:
        group.kill_all()
    return _Reading(output=bytes(kept), total=total, over_cap=over_cap, timed_out=timed_out)


def _read_result(fd: int, nonce: str) -> tuple[bool, dict[str, Any] | None]:
    """(started, result) from the result memfd; result is None unless it carries the nonce."""
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while len(data) < _MAX_RESULT_BYTES:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        data += chunk
    lines = data.split(b"\n")
    started = bool(lines) and lines[0] == b"started"
    for line in lines[1:]:
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and hmac.compare_digest(str(result.get("nonce", "")), nonce):
            return started, result
    return started, None


def run_tests(
    files: Mapping[str, str],
    tests: Sequence[str],
    *,
    module: str = "solution",
    limits: Limits | None = None,
    coverage: bool = True,
    hypothesis: bool = False,
) -> SandboxRun:
    """Run pytest on ``tests`` (names in ``files``) inside a fresh sandbox.

    Raises SandboxError when the sandbox cannot be created (bwrap missing,
    namespaces refused, cgroups unavailable); every other ending, including
    timeouts and limit hits, is a SandboxRun outcome.
    """
    limits = limits or Limits()
    rt = runtime()
    config = {
        "files": dict(files),
        "tests": list(tests),
        "module": module,
        "sites": [f"/opt/jurat/site{i}" for i in range(len(rt.sites))],
        "coverage": coverage,
        "hypothesis": hypothesis,
        "limits": {
            "cpu_s": limits.cpu_s,
            "as_bytes": limits.memory_mb * 1024 * 1024 + _AS_HEADROOM_BYTES,
            "fsize_bytes": limits.file_mb * 1024 * 1024,
            "nofile": limits.nofile,
        },
    }
    nonce = secrets.token_hex(16)
    group = RunGroup.create(
        pids_max=limits.procs + _HARNESS_PROCS, memory_bytes=limits.memory_mb * 1024 * 1024
    )
    control_fd = _control_memfd(config, nonce)
    result_fd = os.memfd_create("jurat-result")
    try:
        return _launch(rt, limits, group, control_fd, result_fd, nonce)
    finally:
        os.close(control_fd)
        os.close(result_fd)


def _launch(
    rt: Runtime, limits: Limits, group: RunGroup, control_fd: int, result_fd: int, nonce: str
) -> SandboxRun:
    procs = group.procs_files
    argv = ["/bin/sh", "-c", _SH_JOIN_CGROUP, "sh", str(len(procs)), *procs]
    argv += _bwrap_argv(rt, limits, control_fd, result_fd)
    start = time.monotonic()
    cleanup_ok = False
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(control_fd, result_fd),
            env={"PATH": "/usr/bin:/bin"},
            start_new_session=True,
        )
    except OSError as exc:
        group.remove()
        raise SandboxError(f"cannot start the sandbox: {exc}") from exc
    try:
        with proc:
            reading = _read_output(proc, limits, group)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                group.kill_all()
                proc.kill()
                proc.wait()
        wall = time.monotonic() - start
        stats = group.stats()
    finally:
        cleanup_ok = group.remove()
    started, result = _read_result(result_fd, nonce)
    # A limit too small for the interpreter to start is the run's outcome, not a
    # broken sandbox: it is reported as that limit.
    if not started and not (reading.timed_out or stats.oom_kills or stats.pids_max_hits):
        message = reading.output.decode("utf-8", "replace").strip()[-800:]
        raise SandboxError(
            "the sandbox did not start (bwrap could not create its namespaces or mounts): "
            + (message or f"exit status {proc.returncode}")
        )
    return _classify(reading, result, stats, wall, limits, cleanup_ok)


def _classify(
    reading: _Reading,
    result: dict[str, Any] | None,
    stats: GroupStats,
    wall: float,
    limits: Limits,
    cleanup_ok: bool,
) -> SandboxRun:
    outcome, detail = _outcome(reading, result, stats, limits)
    result = result or {}
    child = result.get("child") or {}
    coverage, coverage_error = _coverage(result.get("coverage"))
    exit_text = (
        f"signal {child['signal']}"
        if child.get("signal")
        else (f"exit {child['code']}" if "code" in child else "unknown")
    )
    return SandboxRun(
        outcome=outcome,
        detail=detail,
        tests=tuple(
            CaseResult(
                id=str(t.get("id", "")),
                outcome=str(t.get("outcome", "not_run")),
                excerpt=str(t.get("excerpt", "")),
                property=bool(t.get("property", False)),
            )
            for t in result.get("tests", [])
        ),
        collect_errors=tuple(
            f"{e.get('id', '')}: {e.get('excerpt', '')}" for e in result.get("collect_errors", [])
        ),
        coverage=coverage,
        coverage_error=coverage_error,
        output=reading.output.decode("utf-8", "replace"),
        output_bytes=reading.total,
        output_truncated=reading.over_cap,
        wall_s=round(wall, 3),
        cpu_s=float(child.get("cpu_s", 0.0)),
        exit=exit_text,
        oom_kills=stats.oom_kills,
        pids_max_hits=stats.pids_max_hits,
        memory_peak_bytes=stats.memory_peak_bytes,
        cleanup_ok=cleanup_ok,
    )


def _outcome(
    reading: _Reading, result: dict[str, Any] | None, stats: GroupStats, limits: Limits
) -> tuple[RunOutcome, str]:
    inner = str((result or {}).get("outcome", ""))
    if stats.oom_kills or (result or {}).get("memory_error"):
        return "memory_limit", f"memory limit of {limits.memory_mb} MiB reached"
    if stats.pids_max_hits:
        return "process_limit", f"process limit of {limits.procs} reached"
    if reading.over_cap:
        return "output_limit", f"output exceeded {limits.output_kb} KiB; truncated"
    if inner == "output_limit":
        return "output_limit", str(result["detail"]) if result else "file size limit reached"
    if reading.timed_out:
        return "timeout", f"wall-clock limit of {limits.wall_s:g} s reached"
    if result is None:
        return "error", "the harness ended without reporting (killed from inside the sandbox?)"
    if inner in ("passed", "failed", "error", "timeout"):
        return inner, str(result.get("detail", ""))  # type: ignore[return-value]
    return "error", f"unknown harness outcome {inner!r}"


def _coverage(data: Any) -> tuple[CoverageStats | None, str | None]:
    if data is None:
        return None, None
    if not isinstance(data, dict):
        return None, "malformed coverage data"
    if "error" in data:
        return None, str(data["error"])
    try:
        stats = CoverageStats(
            statements=int(data["statements"]),
            covered_lines=int(data["covered_lines"]),
            missing_lines=tuple(int(x) for x in data["missing_lines"]),
            branches=int(data["branches"]),
            covered_branches=int(data["covered_branches"]),
            partial_branches=int(data["partial_branches"]),
            percent=float(data["percent"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"malformed coverage data: {exc}"
    return stats, None
