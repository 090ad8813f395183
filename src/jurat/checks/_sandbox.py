"""A candidate's tests in two bubblewrap sandboxes (seed 000, "Code correctness pipeline", 4).

Host side of protocol ``jurat.sandbox/v3``; the threat model is written down
in docs/design.md ("The code sandbox"). Each run starts two sandboxes:

* the **candidate sandbox** (``_sandbox_candidate.py``) holds the candidate's
  source and nothing else: no test file, no verdict, no secret;
* the **tests sandbox** (``_sandbox_tests.py``) holds the campaign's tests and
  pytest, and no candidate code: the tests reach the candidate through a
  proxy module over a pipe pair on which only plain data crosses
  (``_sandbox_wire.py``), and the verdict is computed here.

Each sandbox gets a fresh cgroup (``pids`` + ``memory``, and ``cpu`` when
available) that its first process joins before exec'ing bwrap, killed whole
at the end; ``bwrap --unshare-all --unshare-user --uid 65534 --disable-userns
--cap-drop ALL --new-session --die-with-parent --clearenv``: no network, no
host home, no /etc, no credentials, separate pid and mount namespaces, so
neither sandbox can see or signal the other; read-only binds of /usr, the
Python runtime and the site directory; size-limited tmpfs at /work and
/tmp; ``python -I -S``; rlimits set inside; the wall-clock limit enforced
here with SIGKILL; stdout+stderr of both read here and cut at the output cap.

The verdict comes from the tests sandbox's result descriptor (an anonymous
memfd only its supervisor writes) and must carry this run's nonce. A limit
the candidate hits (memory, processes, CPU, file size) overrides it: only a
run where the trusted side saw every test pass *and* no limit was hit passes.
If bwrap is missing or cannot create its namespaces, SandboxError is raised:
nothing is ever run on the host instead.
"""

from __future__ import annotations

import functools
import hmac
import importlib.util
import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from jurat.checks._cgroup import RunGroup
from jurat.checks._models import SandboxRun
from jurat.checks._sandbox_result import Ending, Reading, classify
from jurat.errors import SandboxError
from jurat.models._base import Frozen
from jurat.models._checks import Limits

__all__ = ["SANDBOX_PROTOCOL", "Runtime", "run_tests", "runtime"]

SANDBOX_PROTOCOL = "jurat.sandbox/v3"
SANDBOX_UID = "65534"
WORKDIR = "/work"
_PY_DIR = "/opt/jurat/python"
_PROGRAMS = "/opt/jurat"
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
    programs: str
    """Directory of the in-sandbox programs (``_sandbox_*.py``, bound file by file)."""


@functools.cache
def runtime() -> Runtime:
    """Locate bwrap and the Python runtime once; SandboxError if bwrap is unusable."""
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
    return Runtime(
        bwrap=bwrap,
        bwrap_version=version,
        python_prefix=str(prefix.resolve()),
        python_exe=exe,
        sites=tuple(sites),
        programs=str(Path(__file__).resolve().parent),
    )


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


class _Side(Frozen):
    """One of the two sandboxes of a run: its program and the descriptors it gets."""

    name: Literal["tests", "candidate"]
    """Which sandbox."""
    program: str
    """The in-sandbox program's file name (``_sandbox_tests.py`` or ``_sandbox_candidate.py``)."""
    modules: tuple[str, ...]
    """Other in-sandbox modules it imports, bound beside it."""
    fds: dict[str, int]
    """Command-line flag -> descriptor passed into the sandbox."""

    @property
    def module(self) -> str:
        """The program's module name."""
        return self.program.removesuffix(".py")


def _bwrap_argv(rt: Runtime, limits: Limits, side: _Side) -> list[str]:
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
        f"jurat-{side.name}",
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
        # After the tmpfs mounts: bwrap applies mounts in order (docs/design.md).
        "--ro-bind",
        rt.python_prefix,
        _PY_DIR,
    ]
    for index, site in enumerate(rt.sites):
        argv += ["--ro-bind", site, f"/opt/jurat/site{index}"]
    for name in (side.program, *side.modules):
        argv += ["--ro-bind", os.path.join(rt.programs, name), f"{_PROGRAMS}/{name}"]
    argv += ["--chdir", WORKDIR]
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
    # ``-I`` keeps the program's own directory off sys.path; the bootstrap puts it back.
    bootstrap = (
        f"import sys; sys.path[:0] = [{_PROGRAMS!r}]; import {side.module}; "
        f"sys.exit({side.module}.main(sys.argv))"
    )
    argv += ["--", f"{_PY_DIR}/{rt.python_exe}", "-I", "-S", "-c", bootstrap]
    for flag, fd in side.fds.items():
        argv += [flag, str(fd)]
    return argv


def _memfd(name: str, body: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, body)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _tests_control(config: dict[str, Any], nonce: str) -> int:
    # Length-prefixed: the supervisor reads the config before it forks, the nonce after.
    body = json.dumps(config).encode("utf-8")
    header = str(len(body)).encode("ascii") + b"\n"
    return _memfd("jurat-control", header + body + nonce.encode("ascii") + b"\n")


def _read_outputs(
    tests: subprocess.Popen[bytes],
    candidate: subprocess.Popen[bytes],
    limits: Limits,
    groups: tuple[RunGroup, RunGroup],
) -> Reading:
    """Read both sandboxes' output until the tests sandbox ends, a cap or the deadline."""
    assert tests.stdout is not None and candidate.stdout is not None
    tests_fd, candidate_fd = tests.stdout.fileno(), candidate.stdout.fileno()
    open_fds = {tests_fd, candidate_fd}
    cap = limits.output_kb * 1024
    deadline = time.monotonic() + limits.wall_s
    kept = {tests_fd: bytearray(), candidate_fd: bytearray()}
    total = 0
    over_cap = timed_out = candidate_first = False
    while open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(list(open_fds), [], [], remaining)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                candidate_first = candidate_first or tests_fd in open_fds
                if fd == tests_fd:
                    # The verdict is in; whatever the candidate still runs is ended.
                    groups[1].kill_all()
                continue
            total += len(chunk)
            room = max(0, cap - len(kept[tests_fd]) - len(kept[candidate_fd]))
            kept[fd] += chunk[:room]
        if total > cap:
            # Killing at the cap keeps the outcome independent of machine speed.
            over_cap = True
            break
    if over_cap or timed_out:
        for group in groups:
            group.kill_all()
    output = bytes(kept[tests_fd]) + bytes(kept[candidate_fd])
    return Reading(
        output=output,
        tests_bytes=len(kept[tests_fd]),
        total=total,
        over_cap=over_cap,
        timed_out=timed_out,
        candidate_ended_first=candidate_first,
    )


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
    objects: Sequence[str] = (),
    skips_fail: bool = False,
) -> SandboxRun:
    """Run pytest on ``tests`` (names in ``files``) against ``files[module + ".py"]``.

    The candidate module goes into the candidate sandbox alone; every other
    file goes into the tests sandbox. ``objects``: the candidate's classes whose
    instances the tests may hold (every other value crosses as plain data only).
    ``skips_fail``: a test the test file skips (a marker, a fixture) fails the run too;
    by default it is reported as skipped, and a run passes when every other test passed
    and at least one did. A skip raised in a test's body is always a failure.
    Raises SandboxError when a sandbox
    cannot be created (bwrap missing, namespaces refused, cgroups
    unavailable); every other ending, including timeouts and limit hits, is a
    SandboxRun outcome.
    """
    limits = limits or Limits()
    rt = runtime()
    source_name = f"{module}.py"
    if source_name not in files:
        raise SandboxError(f"no candidate source {source_name} among the files to run")
    rlimits = {
        "cpu_s": limits.cpu_s,
        "as_bytes": limits.memory_mb * 1024 * 1024 + _AS_HEADROOM_BYTES,
        "fsize_bytes": limits.file_mb * 1024 * 1024,
        "nofile": limits.nofile,
    }
    sites = [f"/opt/jurat/site{i}" for i in range(len(rt.sites))]
    tests_config = {
        "files": {name: text for name, text in files.items() if name != source_name},
        "tests": list(tests),
        "module": module,
        "sites": sites,
        "coverage": coverage,
        "hypothesis": hypothesis,
        "objects": list(objects),
        "skips_fail": skips_fail,
        "limits": rlimits,
    }
    candidate_config = {
        "source": files[source_name],
        "module": module,
        "sites": sites,
        "coverage": coverage,
        "limits": rlimits,
    }
    nonce = secrets.token_hex(16)
    fds: list[int] = []
    groups: list[RunGroup] = []
    try:
        for _ in range(2):
            groups.append(
                RunGroup.create(
                    pids_max=limits.procs + _HARNESS_PROCS,
                    memory_bytes=limits.memory_mb * 1024 * 1024,
                )
            )
        to_candidate = os.pipe()
        from_candidate = os.pipe()
        fds += [*to_candidate, *from_candidate]
        control = _tests_control(tests_config, nonce)
        result = os.memfd_create("jurat-result")
        candidate_control = _memfd("jurat-candidate", json.dumps(candidate_config).encode())
        fds += [control, result, candidate_control]
        tests_side = _Side(
            name="tests",
            program="_sandbox_tests.py",
            modules=("_sandbox_wire.py", "_sandbox_proxy.py", "_sandbox_limits.py"),
            fds={"--control": control, "--result": result,
                 "--rx": from_candidate[0], "--tx": to_candidate[1]},
        )  # fmt: skip
        candidate_side = _Side(
            name="candidate",
            program="_sandbox_candidate.py",
            modules=("_sandbox_wire.py", "_sandbox_limits.py"),
            fds={"--control": candidate_control, "--rx": to_candidate[0],
                 "--tx": from_candidate[1]},
        )  # fmt: skip
        lines = files[source_name].count("\n") + 1
        return _launch(
            rt, limits, (groups[0], groups[1]), (tests_side, candidate_side), nonce, fds, lines
        )
    finally:
        for fd in fds:
            os.close(fd)
        for group in groups:
            group.remove()


def _spawn(rt: Runtime, limits: Limits, group: RunGroup, side: _Side) -> subprocess.Popen[bytes]:
    procs = group.procs_files
    argv = ["/bin/sh", "-c", _SH_JOIN_CGROUP, "sh", str(len(procs)), *procs]
    argv += _bwrap_argv(rt, limits, side)
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=tuple(side.fds.values()),
            env={"PATH": "/usr/bin:/bin"},
            start_new_session=True,
        )
    except OSError as exc:
        raise SandboxError(f"cannot start the {side.name} sandbox: {exc}") from exc


def _launch(
    rt: Runtime,
    limits: Limits,
    groups: tuple[RunGroup, RunGroup],
    sides: tuple[_Side, _Side],
    nonce: str,
    open_fds: list[int],
    source_lines: int,
) -> SandboxRun:
    start = time.monotonic()
    tests = _spawn(rt, limits, groups[0], sides[0])
    try:
        candidate = _spawn(rt, limits, groups[1], sides[1])
    except SandboxError:
        groups[0].kill_all()
        tests.wait()
        raise
    # Only the sandboxes may hold the channel: its ends must close when they exit.
    # Removed from ``open_fds`` first, so the caller never closes a number twice (another
    # thread's run may already have been given it).
    for side in sides:
        for flag in ("--rx", "--tx"):
            open_fds.remove(side.fds[flag])
            os.close(side.fds[flag])
    with tests, candidate:
        reading = _read_outputs(tests, candidate, limits, groups)
        for proc, group in ((tests, groups[0]), (candidate, groups[1])):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                group.kill_all()
                proc.kill()
                proc.wait()
    wall = time.monotonic() - start
    stats = (groups[0].stats(), groups[1].stats())
    cleanup_ok = all(group.remove() for group in groups)
    started, result = _read_result(sides[0].fds["--result"], nonce)
    # A limit too small for the interpreter to start is the run's outcome, not a
    # broken sandbox: it is reported as that limit.
    limit_hit = any(s.oom_kills or s.pids_max_hits for s in stats)
    if not started and not (reading.timed_out or limit_hit):
        # Only the tests sandbox's output: bwrap's words, since its interpreter never
        # started. The candidate sandbox's may be the candidate's, and this error is
        # signed into the tests gate.
        message = reading.output[: reading.tests_bytes].decode("utf-8", "replace")
        raise SandboxError(
            "the sandbox did not start (bwrap could not create its namespaces or mounts): "
            + (message.strip()[-800:] or f"exit status {tests.returncode}")
        )
    ending = Ending(reading=reading, tests=stats[0], candidate=stats[1],
                    candidate_status=candidate.returncode)  # fmt: skip
    return classify(ending, result, wall, limits, cleanup_ok, source_lines)
