"""The program that runs *inside* the bubblewrap sandbox (protocol ``jurat.sandbox/v1``).

It is copied into the sandbox read-only and started as ``python -I -S runner.py
--control FD --result FD``. It imports only the standard library at the top
because jurat itself is not mounted in the sandbox; pytest and coverage are
imported by the test process from the read-only site directory.

Two processes, so that the verdict never comes from candidate-controlled code
alone (seed 000, "Code correctness pipeline", step 4):

``supervisor``
    Reads the run configuration, writes the files into the tmpfs workdir,
    marks itself non-dumpable (so a process of the same uid without
    capabilities cannot ptrace it or open its ``/proc/PID/fd``), forks the test
    process, and only *then* reads the per-run nonce. It collects the test
    process's event stream, decides passed / failed / error from it, and
    writes the result line with the nonce to the result descriptor, which the
    test process closed before any candidate code ran.

``test process``
    Applies the rlimits, runs pytest in-process with a plugin that streams
    one line per event (each carrying a token the candidate never sees
    written down), measures coverage, and checks that pytest's and pluggy's
    machinery and the builtins were not replaced while tests ran.

Code running in the same interpreter as the tests can, in principle, reach
into that interpreter's memory; the stream token and integrity checks defeat
the generic attacks (fake prints, early exits, ``pytest.exit``, patched
runners or builtins, forged result files), and the import policy reports the
introspection modules that a targeted attack would need.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from typing import Any

PROTOCOL = "jurat.sandbox/v1"
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

# Modules whose callables must be the same objects after every test as before
# the candidate was imported. Prefixes cover every submodule already loaded.
_GUARDED_PREFIXES = ("_pytest", "pluggy", "pytest")
_GUARDED_MODULES = (
    "builtins",
    "os",
    "math",
    "operator",
    "functools",
    "itertools",
    "collections",
    "copy",
    "json",
    "re",
    "string",
    "random",
    "__main__",
)
_GUARDED_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_pyfunc_call",
)


# --------------------------------------------------------------------------- supervisor


def main(argv: list[str]) -> int:
    """Supervisor entry point; returns the process exit status."""
    control_fd = int(argv[argv.index("--control") + 1])
    result_fd = int(argv[argv.index("--result") + 1])
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
        _child(config, write_end, token)
    os.close(write_end)
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
    return tests


def _test_outcome(entry: dict[str, Any]) -> str:
    phases = entry["phases"]
    if any(phases.get(w) == "failed" for w in ("setup", "teardown")):
        return "error"
    call = phases.get("call")
    if call == "failed" or (call == "passed" and entry["raised"] not in (None, "")):
        return "failed"
    if "skipped" in phases.values():
        return "skipped"
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
    outcome, detail = _overall(forged, by_kind, collected, table, tests, child, config)
    return {
        "outcome": outcome,
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
) -> tuple[str, str]:
    if forged:
        return "error", f"harness_tampered: {forged}"
    if "overflow" in by_kind:
        return "error", "harness_tampered: event stream exceeded its size bound"
    if "tamper" in by_kind:
        return "error", "harness_tampered: " + str(by_kind["tamper"][0].get("what", ""))
    unknown = sorted(set(table) - set(collected))
    if unknown:
        return "error", f"harness_tampered: results for tests never collected: {unknown[:3]}"
    if "done" not in by_kind:
        return _ended_early(child, config)
    if "crash" in by_kind:
        return "error", "test runner crashed: " + str(by_kind["crash"][0].get("error", ""))
    if by_kind.get("collect_error"):
        return "error", "collection error: " + str(by_kind["collect_error"][0].get("id", ""))
    if not collected:
        return "error", "no tests collected"
    bad = [t for t in tests if t["outcome"] != "passed"]
    if bad:
        counts: dict[str, int] = {}
        for test in bad:
            counts[test["outcome"]] = counts.get(test["outcome"], 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return "failed", f"{len(collected) - len(bad)}/{len(collected)} passed ({summary})"
    return "passed", f"{len(collected)}/{len(collected)} passed"


def _ended_early(child: dict[str, Any], config: dict[str, Any]) -> tuple[str, str]:
    sig = child["signal"]
    if sig == "SIGXCPU" or child["cpu_s"] >= float(config["limits"]["cpu_s"]):
        return "timeout", f"cpu limit of {config['limits']['cpu_s']} s reached"
    if sig == "SIGXFSZ":
        return "output_limit", "file size limit reached"
    how = f"signal {sig}" if sig else f"exit status {child['code']}"
    return "error", f"test process ended before the run completed ({how})"


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


class _Guard:
    """Identity snapshot of the callables that decide a test's outcome."""

    def __init__(self) -> None:
        self._snapshot: dict[str, dict[str, int]] = {}
        self._manager: Any = None
        self._plugins: frozenset[int] = frozenset()
        self._hooks: dict[str, list[int]] = {}

    @staticmethod
    def _names() -> list[str]:
        names = [n for n in _GUARDED_MODULES if n in sys.modules]
        names += [n for n in list(sys.modules) if n.split(".")[0] in _GUARDED_PREFIXES]
        return sorted(set(names))

    def _hook_impls(self) -> dict[str, list[int]]:
        hooks = self._manager.hook
        return {
            name: [id(impl) for impl in getattr(hooks, name).get_hookimpls()]
            for name in _GUARDED_HOOKS
        }

    def take(self, manager: Any) -> None:
        snap: dict[str, dict[str, int]] = {"sys.modules": {}}
        for name in self._names():
            module = sys.modules[name]
            snap["sys.modules"][name] = id(module)
            members = snap.setdefault(name, {})
            for attr, value in list(vars(module).items()):
                if not callable(value):
                    continue
                members[attr] = id(value)
                if isinstance(value, type) and value.__module__ == name:
                    # Behaviour only: pytest itself keeps run state in class attributes.
                    snap[f"{name}:{attr}"] = {
                        k: id(v) for k, v in list(vars(value).items()) if _is_behaviour(v)
                    }
        self._snapshot = snap
        self._manager = manager
        self._plugins = frozenset(id(p) for p in manager.get_plugins())
        self._hooks = self._hook_impls()

    def broken(self) -> str | None:
        """The first guarded name whose object changed, or None."""
        if frozenset(id(p) for p in self._manager.get_plugins()) != self._plugins:
            return "the set of registered pytest plugins changed"
        if self._hook_impls() != self._hooks:
            return "pytest hook implementations changed"
        missing = object()
        for owner, members in self._snapshot.items():
            container = self._container(owner)
            for attr, ident in members.items():
                current = container.get(attr, missing)
                if current is missing or id(current) != ident:
                    return f"{owner.replace(':', '.')}.{attr} was replaced"
        return None

    @staticmethod
    def _container(owner: str) -> dict[str, Any]:
        if owner == "sys.modules":
            return dict(sys.modules)
        module_name, _, cls_name = owner.partition(":")
        module = sys.modules.get(module_name)
        if module is None:
            return {}
        if not cls_name:
            return dict(vars(module))
        cls = vars(module).get(cls_name)
        return dict(vars(cls)) if isinstance(cls, type) else {}


def _is_behaviour(value: object) -> bool:
    return callable(value) or isinstance(value, classmethod | staticmethod | property)


def _apply_rlimits(limits: dict[str, Any]) -> None:
    import resource

    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["as_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["fsize_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limits["nofile"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child(config: dict[str, Any], fd: int, token: str) -> None:
    """Run the tests in this process and exit; never returns."""
    emitter = Emitter(fd, token)
    hard_exit = os._exit
    try:
        _apply_rlimits(config["limits"])
        os.chdir(WORKDIR)
        sys.path[:0] = [WORKDIR, *config["sites"]]
        sys.dont_write_bytecode = True
        run_pytest(config, emitter, WORKDIR)
    except BaseException as exc:  # noqa: B036 - the candidate may raise anything
        try:
            emitter.emit("crash", error=f"{type(exc).__name__}: {exc}"[:EXCERPT_CHARS])
        except BaseException:  # noqa: B036 - the stream may already be gone
            pass
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()  # type: ignore[union-attr]
            except BaseException:  # noqa: B036 - a candidate may have replaced the stream
                pass
        # Skips candidate atexit handlers and lingering threads.
        hard_exit(0)


def run_pytest(config: dict[str, Any], emitter: Emitter, workdir: str) -> None:
    """The check program: pytest with the streaming plugin, under coverage.

    Also the unisolated baseline of ``bench/code_checks.py``, which runs exactly
    this in a plain multiprocessing child to price the isolation.
    """
    import pytest

    cov = None
    if config["coverage"]:
        import coverage

        cov = coverage.Coverage(
            data_file=None,
            branch=True,
            include=[os.path.join(workdir, config["module"] + ".py")],
            config_file=False,
        )
    if config["hypothesis"]:
        _hypothesis_profile()
    guard = _Guard()
    plugin = _make_plugin(emitter, guard)
    args = ["-s", "--disable-plugin-autoload", "-c", os.devnull, "--rootdir", workdir]
    for name in _DISABLED_PLUGINS:
        args += ["-p", f"no:{name}"]
    args += list(config["tests"])
    if cov is not None:
        cov.start()
    code = pytest.main(args, plugins=[plugin])
    if cov is not None:
        cov.stop()
        emitter.emit("coverage", data=_coverage_summary(cov, config["module"], workdir))
    broken = guard.broken()
    if broken:
        emitter.emit("tamper", what=broken)
    emitter.emit("done", exitstatus=int(code))


def _hypothesis_profile() -> None:
    from hypothesis import settings

    # Derandomised and without a database, so a property run replays exactly.
    settings.register_profile(
        "jurat", derandomize=True, database=None, deadline=None, print_blob=False
    )
    settings.load_profile("jurat")


def _coverage_summary(cov: Any, module: str, workdir: str) -> dict[str, Any]:
    path = os.path.join(workdir, ".jurat-coverage.json")
    try:
        cov.json_report(outfile=path, pretty_print=False)
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except Exception as exc:  # coverage raises NoDataError and friends
        return {"error": f"{type(exc).__name__}: {exc}"[:EXCERPT_CHARS]}
    files = report.get("files", {})
    entry = next(iter(files.values()), None)
    if entry is None:
        return {"error": f"{module}.py was never imported"}
    summary = entry["summary"]
    return {
        "statements": summary["num_statements"],
        "covered_lines": summary["covered_lines"],
        "missing_lines": entry.get("missing_lines", []),
        "branches": summary.get("num_branches", 0),
        "covered_branches": summary.get("covered_branches", 0),
        "partial_branches": summary.get("num_partial_branches", 0),
        "percent": summary["percent_covered"],
    }


def _make_plugin(emitter: Emitter, guard: _Guard) -> object:
    import pytest

    skip_exceptions = (pytest.skip.Exception, pytest.xfail.Exception)

    class JuratPlugin:
        """Streams collection and per-phase results; checks the guard after each test."""

        @pytest.hookimpl(tryfirst=True)
        def pytest_collection(self, session: Any) -> None:
            # Taken before collection, i.e. before any candidate code is imported.
            guard.take(session.config.pluginmanager)

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
            )
            return report

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
            result = yield
            broken = guard.broken()
            if broken:
                emitter.emit("tamper", what=broken)
            return result

    return JuratPlugin()


def _excerpt(report: Any) -> str:
    try:
        text = str(report.longreprtext)
    except Exception:  # a sabotaged longrepr must not stop the report
        return "<unavailable>"
    return text[-EXCERPT_CHARS:]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
