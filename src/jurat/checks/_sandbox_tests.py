"""The trusted test program, run inside the *tests* sandbox (protocol ``jurat.sandbox/v3``).

Started by the bootstrap in ``_sandbox.py`` with ``--control FD --result FD --rx FD --tx FD``.
No candidate code ever runs in this process or this sandbox: the candidate
lives in a second sandbox (``_sandbox_candidate.py``) and is reached only
through the pipe pair ``--tx``/``--rx``, over which only plain data crosses
(``_sandbox_wire.py``). The candidate module seen by the tests is a proxy
(``_sandbox_proxy.py``): ``from solution import add`` yields a handle whose only
operation is a call, which sends the arguments as data and decodes the result into
fresh built-in objects (anything but plain data, or an object of a class the task
declared, fails the test), so ``assert add(1, 2) == 3`` compares built-ins here,
where the candidate cannot reach.

Two processes, so that the verdict never depends on how the test run ends:

``supervisor``
    Reads the run configuration, writes the test files into the tmpfs
    workdir, forks the test process, and only *then* reads the per-run nonce.
    It collects the test process's event stream, decides passed / failed /
    error from it, and writes the result line with the nonce to the result
    descriptor, which the test process closed first.

``test process``
    Applies the rlimits and runs pytest in-process with a plugin that streams
    one line per event, each carrying a token. At the end it asks the
    candidate process for its coverage summary (measured there, so
    candidate-reported) and passes it on as data.

Taint rule. What this program reports names the hidden tests (node ids with their
parameters, failure excerpts, collection errors) and relays what the candidate's
process sent (coverage, exception names). The host reads only its closed-set fields
(``outcome``, ``reason``, per-test outcomes) and counts as trusted; everything else it
keeps as ``Untrusted`` for the operator (``checks/_sandbox_result.py``). The candidate's
names reach a test module's namespace only as ``_sandbox_proxy.exportable`` allows:
never a builtin, a keyword, a loaded module's name or a name the test files bind.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from typing import TYPE_CHECKING, Any

PROTOCOL = "jurat.sandbox/v3"
WORKDIR = "/work"
PR_SET_DUMPABLE = 4
MAX_EVENT_BYTES = 4 * 1024 * 1024
EXCERPT_CHARS = 1200

# pytest's builtin plugins that do nothing for a one-shot, non-interactive run;
# dropping them saves about a third of pytest's start-up time. ``debugging`` stays:
# the unittest integration reads its ``--trace`` option (stdin is /dev/null, so a
# stray breakpoint() cannot wait for input).
_DISABLED_PLUGINS = (
    "cacheprovider",
    "terminal",
    "doctest",
    "junitxml",
    "pastebin",
    "legacypath",
    "stepwise",
    "faulthandler",
    "setuponly",
    "setupplan",
    "lsof",
)


# --------------------------------------------------------------------------- supervisor


def main(argv: list[str]) -> int:
    """Supervisor entry point; returns the process exit status."""
    control_fd = int(argv[argv.index("--control") + 1])
    result_fd = int(argv[argv.index("--result") + 1])
    channel = (int(argv[argv.index("--rx") + 1]), int(argv[argv.index("--tx") + 1]))
    os.write(result_fd, b"started\n")
    config = _read_config(control_fd)
    _write_files(config["files"])
    token = os.urandom(16).hex()
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    _set_nondumpable()
    pid = os.fork()
    if pid == 0:
        os.close(control_fd)
        os.close(result_fd)
        os.close(read_end)
        _child(config, write_end, token, channel)
    os.close(write_end)
    # Only the test process talks to the candidate: its exit must close the channel.
    for fd in channel:
        os.close(fd)
    # Read after the fork: the test process never holds the nonce in memory.
    nonce = os.read(control_fd, 256).decode("ascii").strip()
    os.close(control_fd)
    raw, status, cpu_s = _collect(read_end, pid)
    result = verdict(raw, token, status, cpu_s, config)
    result["nonce"] = nonce
    result["protocol"] = PROTOCOL
    os.write(result_fd, json.dumps(result, sort_keys=True).encode("utf-8") + b"\n")
    os.close(result_fd)
    return 0


def _read_config(fd: int) -> dict[str, Any]:
    # Length-prefixed so that exactly the config is read before the fork and
    # the nonce after it stays in the descriptor.
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            raise RuntimeError("control stream ended before the config header")
        header += byte
    size = int(header)
    body = b""
    while len(body) < size:
        chunk = os.read(fd, size - len(body))
        if not chunk:
            raise RuntimeError("control stream ended inside the config")
        body += chunk
    config: dict[str, Any] = json.loads(body)
    return config


def _write_files(files: dict[str, str]) -> None:
    for name, text in files.items():
        path = os.path.join(WORKDIR, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def _set_nondumpable() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def _collect(fd: int, pid: int) -> tuple[bytes, int, float]:
    """Read the event stream until the test process exits; return (bytes, status, cpu)."""
    chunks: list[bytes] = []
    size = 0
    status = 0
    cpu_s = 0.0
    exited = False
    while not exited:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            chunk = os.read(fd, 65536)
            if chunk and size < MAX_EVENT_BYTES:
                chunks.append(chunk)
                size += len(chunk)
        done_pid, status, usage = os.wait4(pid, os.WNOHANG)
        if done_pid == pid:
            exited = True
            cpu_s = usage.ru_utime + usage.ru_stime
    # A grandchild may still hold the write end, so drain without waiting for EOF.
    os.set_blocking(fd, False)
    while size < MAX_EVENT_BYTES:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size >= MAX_EVENT_BYTES:
        chunks.append(b'\n{"e": "overflow"}\n')
    return b"".join(chunks), status, cpu_s


def _parse_events(raw: bytes, token: str) -> tuple[list[dict[str, Any]], str | None]:
    events: list[dict[str, Any]] = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            return events, "unparseable line in the event stream"
        if not isinstance(event, dict) or event.get("t") != token:
            return events, "event without the run token (forged or corrupted)"
        events.append(event)
    return events, None


def _child_exit(status: int, cpu_s: float) -> dict[str, Any]:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return {"signal": signal.Signals(number).name, "code": None, "cpu_s": round(cpu_s, 3)}
    return {"signal": None, "code": os.waitstatus_to_exitcode(status), "cpu_s": round(cpu_s, 3)}


def _tests_table(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    tests: dict[str, dict[str, Any]] = {}
    for event in events:
        kind = event.get("e")
        if kind not in ("report", "call"):
            continue
        entry = tests.setdefault(
            str(event["id"]),
            {"id": str(event["id"]), "phases": {}, "called": False, "raised": None, "excerpt": ""},
        )
        if kind == "call":
            entry["called"] = True
            entry["raised"] = event.get("raised")
            entry["memory_error"] = bool(event.get("memory_error"))
        else:
            entry["phases"][event["when"]] = event["outcome"]
            if event.get("excerpt"):
                entry["excerpt"] = event["excerpt"]
            if event.get("raised") and not entry.get("raised_name"):
                entry["raised_name"] = event["raised"]
    return tests


def _test_outcome(entry: dict[str, Any]) -> str:
    phases = entry["phases"]
    if any(phases.get(w) == "failed" for w in ("setup", "teardown")):
        return "error"
    call = phases.get("call")
    if call == "failed" or (call == "passed" and entry["raised"] not in (None, "")):
        return "failed"
    # A skip decided before the test's body (a marker, a fixture) is the test file's own
    # condition; one raised in the body, which reads the candidate, may be the candidate's
    # doing, so it is a failure (issue 37).
    if phases.get("setup") == "skipped":
        return "skipped"
    if call == "skipped":
        return "failed"
    if call == "passed" and entry["called"] and phases.get("teardown") == "passed":
        return "passed"
    return "incomplete"


def verdict(
    raw: bytes, token: str, status: int, cpu_s: float, config: dict[str, Any]
) -> dict[str, Any]:
    """Decide passed / failed / error from the event stream and how the test process ended."""
    events, forged = _parse_events(raw, token)
    child = _child_exit(status, cpu_s)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_kind.setdefault(str(event.get("e")), []).append(event)
    collected = [str(i) for e in by_kind.get("collected", []) for i in e.get("ids", [])]
    properties = [str(i) for e in by_kind.get("collected", []) for i in e.get("properties", [])]
    table = _tests_table(events)
    tests = [
        {
            "id": test_id,
            "outcome": _test_outcome(table[test_id]) if test_id in table else "not_run",
            "excerpt": table[test_id]["excerpt"] if test_id in table else "",
            "raised": table[test_id].get("raised_name", "") if test_id in table else "",
            "property": test_id in properties,
        }
        for test_id in collected
    ]
    collect_errors = [
        {"id": str(e.get("id", "")), "excerpt": str(e.get("excerpt", ""))}
        for e in by_kind.get("collect_error", [])
    ]
    memory_error = any(entry.get("memory_error") for entry in table.values()) or any(
        "MemoryError" in e["excerpt"] for e in collect_errors
    )
    coverage = by_kind["coverage"][-1].get("data") if "coverage" in by_kind else None
    outcome, reason, detail = _overall(forged, by_kind, collected, table, tests, child, config)
    return {
        "outcome": outcome,
        "reason": reason,
        "detail": detail,
        "tests": tests,
        "collect_errors": collect_errors,
        "coverage": coverage,
        "memory_error": memory_error,
        "child": child,
    }


def _overall(
    forged: str | None,
    by_kind: dict[str, list[dict[str, Any]]],
    collected: list[str],
    table: dict[str, dict[str, Any]],
    tests: list[dict[str, Any]],
    child: dict[str, Any],
    config: dict[str, Any],
) -> tuple[str, str, str]:
    # (outcome, reason, detail): the host reads only the first two (closed sets); the
    # detail names tests and may quote the candidate, so it is kept for the operator.
    if forged:
        return "error", "harness_tampered", f"harness_tampered: {forged}"
    if "overflow" in by_kind:
        return "error", "harness_tampered", "harness_tampered: event stream exceeded its bound"
    unknown = sorted(set(table) - set(collected))
    if unknown:
        return (
            "error", "harness_tampered",
            f"harness_tampered: results for tests never collected: {unknown[:3]}",
        )  # fmt: skip
    if "done" not in by_kind:
        return _ended_early(child, config)
    if "crash" in by_kind:
        crash = str(by_kind["crash"][0].get("error", ""))
        return "error", "runner_crashed", "test runner crashed: " + crash
    if by_kind.get("collect_error"):
        where = str(by_kind["collect_error"][0].get("id", ""))
        return "error", "collection_error", "collection error: " + where
    if not collected:
        return "error", "no_tests", "no tests collected"
    skips_fail = bool(config.get("skips_fail"))
    bad = [t for t in tests if t["outcome"] != "passed"
           and (skips_fail or t["outcome"] != "skipped")]
    if not bad and not any(t["outcome"] == "passed" for t in tests):
        bad = tests  # every test skipped: nothing was shown to pass
    passed = sum(1 for t in tests if t["outcome"] == "passed")
    if bad:
        counts: dict[str, int] = {}
        for test in bad:
            counts[test["outcome"]] = counts.get(test["outcome"], 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return "failed", "tests_failed", f"{passed}/{len(collected)} passed ({summary})"
    return "passed", "all_passed", f"{passed}/{len(collected)} passed"


def _ended_early(child: dict[str, Any], config: dict[str, Any]) -> tuple[str, str, str]:
    sig = child["signal"]
    if sig == "SIGXCPU" or child["cpu_s"] >= float(config["limits"]["cpu_s"]):
        return "timeout", "cpu_limit", f"cpu limit of {config['limits']['cpu_s']} s reached"
    if sig == "SIGXFSZ":
        return "output_limit", "file_size_limit", "file size limit reached"
    how = f"signal {sig}" if sig else f"exit status {child['code']}"
    return "error", "ended_early", f"test process ended before the run completed ({how})"


# --------------------------------------------------------------------------- test process


class Emitter:
    """Writes one JSON line per event; holds its own references to os.write and json.dumps."""

    def __init__(self, fd: int, token: str) -> None:
        self._fd = fd
        self._token = token
        self._write = os.write
        self._dumps = json.dumps

    def emit(self, kind: str, **fields: Any) -> None:
        fields["t"] = self._token
        fields["e"] = kind
        data = self._dumps(fields, default=str).encode("utf-8") + b"\n"
        view = memoryview(data)
        while view:
            view = view[self._write(self._fd, view) :]


def _child(config: dict[str, Any], fd: int, token: str, channel: tuple[int, int]) -> None:
    """Run the tests in this process and exit; never returns."""
    emitter = Emitter(fd, token)
    try:
        if TYPE_CHECKING:
            from jurat.checks._sandbox_limits import apply_rlimits
            from jurat.checks._sandbox_proxy import Candidate
        else:
            from _sandbox_limits import apply_rlimits
            from _sandbox_proxy import Candidate
        apply_rlimits(config["limits"])
        os.chdir(WORKDIR)
        sys.path[:0] = [WORKDIR, *config["sites"]]
        sys.dont_write_bytecode = True

        candidate = Candidate(channel[0], channel[1], config["module"],
                              frozenset(config.get("objects", ())))
        run_pytest(config, emitter, WORKDIR, candidate)
    except BaseException as exc:  # noqa: B036 - report whatever stopped the run
        try:
            emitter.emit("crash", error=f"{type(exc).__name__}: {exc}"[:EXCERPT_CHARS])
        except BaseException:  # noqa: B036 - the stream may already be gone
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: B036 - a test may have replaced the stream
                pass
        os._exit(0)


def run_pytest(config: dict[str, Any], emitter: Emitter, workdir: str, candidate: Any) -> None:
    """The check program: pytest with the streaming plugin, the candidate behind a proxy."""
    import pytest

    if config["hypothesis"]:
        _hypothesis_profile()
    candidate.install(_reserved_names(config["files"]))
    plugin = _make_plugin(emitter)
    args = ["-s", "--disable-plugin-autoload", "-c", os.devnull, "--rootdir", workdir]
    for name in _DISABLED_PLUGINS:
        args += ["-p", f"no:{name}"]
    args += list(config["tests"])
    code = pytest.main(args, plugins=[plugin])
    if config["coverage"]:
        emitter.emit("coverage", data=candidate.finish())
    emitter.emit("done", exitstatus=int(code))


def _reserved_names(files: dict[str, str]) -> frozenset[str]:
    """Every name the campaign's test files bind (docs/checks.md, "The tests' view").

    ``from solution import *`` must never rebind one of them (nor a builtin, a keyword or
    a loaded module's name: ``_sandbox_proxy.exportable`` adds those), whatever the
    candidate defines: a candidate's ``abs`` or ``pytest`` would otherwise replace the
    trusted test's own.
    """
    import ast

    names: set[str] = set()
    for text in files.values():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue  # pytest reports the file's collection error itself
        for node in ast.walk(tree):
            # Names only read (a helper the prompt defines, ``poly``) stay importable.
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(names)


def _hypothesis_profile() -> None:
    from hypothesis import settings

    # Derandomised and without a database, so a property run replays exactly.
    settings.register_profile(
        "jurat", derandomize=True, database=None, deadline=None, print_blob=False
    )
    settings.load_profile("jurat")


def _make_plugin(emitter: Emitter) -> object:
    import pytest

    skip_exceptions = (pytest.skip.Exception, pytest.xfail.Exception)

    class JuratPlugin:
        """Streams collection and per-phase results."""

        def pytest_collectreport(self, report: Any) -> None:
            if report.failed:
                emitter.emit("collect_error", id=report.nodeid, excerpt=_excerpt(report))

        def pytest_collection_finish(self, session: Any) -> None:
            ids = [item.nodeid for item in session.items]
            props = [
                item.nodeid
                for item in session.items
                if getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
            ]
            emitter.emit("collected", ids=ids, properties=props)

        @pytest.hookimpl(wrapper=True, trylast=True)
        def pytest_runtest_call(self, item: Any) -> Any:
            try:
                result = yield
            except BaseException as exc:  # noqa: B036 - observe, then re-raise
                emitter.emit(
                    "call",
                    id=item.nodeid,
                    raised=type(exc).__name__,
                    skipped=isinstance(exc, skip_exceptions),
                    memory_error=isinstance(exc, MemoryError),
                )
                raise
            emitter.emit("call", id=item.nodeid, raised=None)
            return result

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
            report = yield
            emitter.emit(
                "report",
                id=item.nodeid,
                when=call.when,
                outcome=report.outcome,
                excerpt=_excerpt(report) if report.outcome != "passed" else "",
                raised=_raised(call),
            )
            return report

    return JuratPlugin()


def _raised(call: Any) -> str:
    excinfo = getattr(call, "excinfo", None)
    return type(excinfo.value).__name__ if excinfo is not None else ""


def _excerpt(report: Any) -> str:
    try:
        text = str(report.longreprtext)
    except Exception:  # a broken longrepr must not stop the report
        return "<unavailable>"
    return text[-EXCERPT_CHARS:]
