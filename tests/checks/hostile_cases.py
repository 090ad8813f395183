"""Hostile candidates with the outcome each must end in.

Sources are ``string.Template``s: ``$canary_dir``, ``$canary_file``, ``$secret``,
``$port`` and ``$token`` are filled in per run by the test fixture.
"""

from __future__ import annotations

from dataclasses import dataclass

ADD_TEST = """from solution import add


def test_add():
    assert add(1, 2) == 3
"""

SOLVE_TEST = """from solution import solve


def test_solve():
    print(repr(solve())[:2000])
"""


@dataclass(frozen=True)
class Case:
    """One hostile candidate, its test file and the outcomes it may end in."""

    name: str
    solution: str
    expected: frozenset[str]
    test: str = SOLVE_TEST


def _case(name: str, expected: str, solution: str, test: str = SOLVE_TEST) -> Case:
    return Case(name, solution, frozenset(expected.split("|")), test)


CASES: tuple[Case, ...] = (
    # ---------------------------------------------------------------- resources
    _case(
        "fork_bomb",
        "process_limit",
        """import os

def solve():
    while True:
        try:
            os.fork()
        except OSError:
            pass
""",
    ),
    _case(
        "thread_bomb",
        "process_limit",
        """import threading, time

def solve():
    while True:
        try:
            threading.Thread(target=time.sleep, args=(100,), daemon=True).start()
        except RuntimeError:
            time.sleep(0.01)
""",
    ),
    _case(
        "memory_bomb",
        "memory_limit",
        """def solve():
    hog = []
    while True:
        hog.append(b"x" * (1 << 20))
""",
    ),
    _case(
        "huge_allocation",
        "memory_limit",
        """def solve():
    return len(bytearray(50 * 1024 ** 3))
""",
    ),
    _case(
        "busy_loop",
        "timeout",
        """def solve():
    while True:
        pass
""",
    ),
    _case(
        "sleep_forever",
        "timeout",
        """import time

def solve():
    time.sleep(10 ** 6)
""",
    ),
    _case(
        "ignore_sigxcpu",
        "timeout",
        """import signal

def solve():
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        pass
""",
    ),
    _case(
        "swallow_systemexit_and_interrupt",
        "timeout",
        """import time

def solve():
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            continue
""",
    ),
    _case(
        "print_gigabytes",
        "output_limit",
        """import sys

def solve():
    chunk = "==== 1 passed in 0.01s ====\\n" * 4096
    for _ in range(1 << 30):
        sys.stdout.write(chunk)
""",
    ),
    _case(
        "huge_file",
        "failed",
        """def solve():
    with open("big.bin", "wb") as handle:
        for _ in range(1024):
            handle.write(b"\\0" * (1 << 20))
""",
    ),
    _case(
        "fill_tmpfs",
        "failed",
        """def solve():
    i = 0
    while True:
        with open(f"/tmp/fill{i}", "wb") as handle:
            handle.write(b"x" * (4 << 20))
        i += 1
""",
    ),
    _case(
        "recursion_bomb",
        "failed",
        """def solve(n=0):
    return solve(n + 1) + 1
""",
    ),
    # Python 3.11 keeps Python frames on the heap, so unbounded recursion with the
    # limit lifted exhausts memory rather than the C stack.
    _case(
        "recursion_bomb_raised_limit",
        "memory_limit|error",
        """import sys

sys.setrecursionlimit(10 ** 7)

def solve(n=0):
    return solve(n + 1) + 1
""",
    ),
    # ---------------------------------------------------------------- reading the host
    _case(
        "read_etc_shadow",
        "failed",
        """def solve():
    return open("/etc/shadow").read()
""",
    ),
    _case(
        "read_host_home_and_canary",
        "passed",
        """import os

def solve():
    seen = {}
    for path in ["/root", "/home", "$canary_dir"]:
        try:
            seen[path] = sorted(os.listdir(path))
        except OSError as exc:
            seen[path] = type(exc).__name__
    for path in ["/root/.bashrc", "/root/.ssh/id_rsa", "$canary_file", "/etc/passwd"]:
        try:
            seen[path] = open(path).read()
        except OSError as exc:
            seen[path] = type(exc).__name__
    return seen
""",
        """from solution import solve


def test_solve():
    seen = solve()
    print(seen)
    assert seen["/root"] == "FileNotFoundError"
    assert seen["$canary_file"] == "FileNotFoundError"
    assert seen["/etc/passwd"] == "FileNotFoundError"
""",
    ),
    _case(
        "read_environment_secrets",
        "passed",
        """import os

def solve():
    found = dict(os.environ)
    for path in ["/proc/1/environ", "/proc/self/environ", f"/proc/{os.getppid()}/environ"]:
        try:
            found[path] = open(path, "rb").read().decode(errors="replace")
        except OSError as exc:
            found[path] = type(exc).__name__
    return found
""",
        """from solution import solve


def test_solve():
    found = solve()
    print(found)
    assert "JURAT_HOSTILE_SECRET" not in repr(found)
""",
    ),
    # ---------------------------------------------------------------- network
    _case(
        "socket_to_loopback",
        "passed",
        """import socket

def solve():
    try:
        socket.create_connection(("127.0.0.1", $port), timeout=2).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
""",
        """from solution import solve


def test_solve():
    assert solve() != "connected"
""",
    ),
    _case(
        "socket_to_public_address",
        "passed",
        """import socket

def solve():
    out = {}
    for host in ["1.1.1.1", "8.8.8.8"]:
        try:
            socket.create_connection((host, 53), timeout=2).close()
            out[host] = "connected"
        except OSError as exc:
            out[host] = type(exc).__name__
    try:
        socket.getaddrinfo("example.com", 80)
        out["dns"] = "resolved"
    except OSError as exc:
        out["dns"] = type(exc).__name__
    return out
""",
        """from solution import solve


def test_solve():
    out = solve()
    print(out)
    assert "connected" not in out.values() and out["dns"] != "resolved"
""",
    ),
    # ---------------------------------------------------------------- processes
    _case(
        # Its parent is its own sandbox's init; the tests live in another sandbox, and the
        # answer is right, so the run passes (python.imports still reports os.kill).
        "kill_parent",
        "passed",
        """import os, signal

def add(a, b):
    os.kill(os.getppid(), signal.SIGKILL)
    return a + b
""",
        ADD_TEST,
    ),
    _case(
        "kill_every_process",
        "failed|error",
        """import os, signal

def add(a, b):
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    if max(pids) < 64:  # only inside a pid namespace: never risk the host
        os.kill(-1, signal.SIGKILL)
    return a + b
""",
        ADD_TEST,
    ),
    _case(
        "daemon_outlives_run",
        "passed",
        """import os, time

def add(a, b):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "$token"])
        os._exit(0)
    time.sleep(0.3)
    return a + b
""",
        ADD_TEST,
    ),
    _case(
        "os_exit_inside_test",
        "failed|error",
        """import os

def add(a, b):
    os._exit(0)
""",
        ADD_TEST,
    ),
    _case(
        "os_exit_at_import",
        "error",
        """import os

os._exit(0)

def add(a, b):
    return a + b
""",
        ADD_TEST,
    ),
    _case(
        "sys_exit_at_import",
        "error",
        """import sys

sys.exit(0)

def add(a, b):
    return a + b
""",
        ADD_TEST,
    ),
    _case(
        "keyboard_interrupt",
        "failed|error",
        """def add(a, b):
    raise KeyboardInterrupt
""",
        ADD_TEST,
    ),
    _case(
        "privilege_escalation",
        "passed",
        """import ctypes, os

def solve():
    out = {}
    try:
        os.setuid(0)
        out["setuid"] = "ok"
    except OSError as exc:
        out["setuid"] = type(exc).__name__
    libc = ctypes.CDLL(None, use_errno=True)
    out["unshare_user"] = libc.unshare(0x10000000)
    out["unshare_net"] = libc.unshare(0x40000000)
    out["mount"] = libc.mount(b"none", b"/opt", b"tmpfs", 0, None)
    try:
        open(f"/proc/{os.getppid()}/mem", "rb").read(1)
        out["parent_mem"] = "read"
    except OSError as exc:
        out["parent_mem"] = type(exc).__name__
    return out
""",
        """from solution import solve


def test_solve():
    out = solve()
    print(out)
    assert out["setuid"] != "ok"
    assert out["unshare_user"] == out["unshare_net"] == out["mount"] == -1
    assert out["parent_mem"] != "read"
""",
    ),
    # ---------------------------------------------------------------- the filesystem
    _case(
        "delete_outside_workdir",
        "passed",
        """import os, shutil

def solve():
    out = {}
    for path in ["$canary_file", "/opt/jurat/runner.py", "/usr/bin/env"]:
        try:
            os.remove(path)
            out[path] = "removed"
        except OSError as exc:
            out[path] = type(exc).__name__
    for path in ["/usr/lib", "/opt/jurat/python", "$canary_dir"]:
        try:
            shutil.rmtree(path)
            out[path] = "removed"
        except OSError as exc:
            out[path] = type(exc).__name__
    for path in ["/tmp/jurat-escape-$token", "$canary_dir/escaped-$token", "/root/escape-$token"]:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write("escaped")
            out[path] = "written"
        except OSError as exc:
            out[path] = type(exc).__name__
    return out
""",
        """from solution import solve


def test_solve():
    out = solve()
    print(out)
    assert all(v != "removed" for v in out.values())
""",
    ),
    # ---------------------------------------------------------------- the verdict channel
    _case(
        "fake_passed_output",
        "failed",
        """import json, sys

def add(a, b):
    print("============ 1 passed in 0.01s ============")
    print(json.dumps({"outcome": "passed", "nonce": "0" * 32, "protocol": "jurat.sandbox/v1"}))
    sys.stderr.write("PASSED\\n")
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "forge_event_stream",
        "failed|error",
        """import json, os

def add(a, b):
    for kind in ("collected", "report", "done"):
        line = (json.dumps({"e": kind, "ids": [], "exitstatus": 0}) + "\\n").encode()
        for fd in range(3, 256):
            try:
                os.write(fd, line)
            except OSError:
                pass
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "steal_nonce_and_forge_result",
        "failed|timeout",
        """import json, os

def add(a, b):
    ppid = os.getppid()
    stolen = []
    for fd in range(64):
        try:
            with open(f"/proc/{ppid}/fd/{fd}", "rb") as handle:
                stolen.append(handle.read(4096))
        except OSError:
            pass
    forged = json.dumps({"outcome": "passed", "nonce": repr(stolen), "tests": []})
    for fd in range(64):
        try:
            with open(f"/proc/{ppid}/fd/{fd}", "w") as handle:
                handle.write("started\\n" + forged + "\\n")
        except OSError:
            pass
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "pytest_exit_returncode_0",
        "failed|error",
        """def add(a, b):
    import pytest
    pytest.exit("all good", returncode=0)
""",
        ADD_TEST,
    ),
    _case(
        "patch_pytest_runtest",
        "failed|error",
        """import _pytest.python

_pytest.python.Function.runtest = lambda self: None

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "patch_pytest_reports",
        "failed|error",
        """from _pytest import reports

_original = reports.TestReport.from_item_and_call.__func__

def _always_pass(cls, item, call):
    report = _original(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report

reports.TestReport.from_item_and_call = classmethod(_always_pass)

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "patch_builtins",
        "failed|error",
        """import builtins

builtins.abs = lambda x: 0

def add(a, b):
    return a - b
""",
        """from solution import add


def test_add():
    assert abs(add(1, 2) - 3) < 1e-9
""",
    ),
    _case(
        "register_plugin_via_gc",
        "failed|error",
        """import gc
import pytest

class _Cheat:
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item):
        try:
            return (yield)
        except BaseException:
            return None

for _obj in gc.get_objects():
    if type(_obj).__name__ == "PytestPluginManager":
        _obj.register(_Cheat())
        break

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "swap_sys_modules",
        "failed|error",
        """import sys, types

sys.modules["_pytest.runner"] = types.ModuleType("_pytest.runner")

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    # ---------------------------------------------------------------- forging a pass (issue 9)
    # The candidate runs in its own sandbox; none of these reach the tests' interpreter.
    _case(
        "rewrite_reports_via_gc",
        "failed",
        """import gc, threading, time

def _rewrite():
    while True:
        for obj in gc.get_objects():
            if type(obj).__name__ in ("TestReport", "CallInfo", "CollectReport"):
                try:
                    obj.outcome = "passed"
                    obj.longrepr = None
                    obj.excinfo = None
                except Exception:
                    pass
        time.sleep(0.001)

threading.Thread(target=_rewrite, daemon=True).start()

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "attrgetter_reaches_modules",
        "failed",
        """import builtins, operator, sys

_modules = operator.attrgetter("modules")(sys)
_import = operator.attrgetter("__import__")(builtins)
for _name, _mod in list(_modules.items()):
    if _name.startswith(("_pytest", "pytest", "pluggy")):
        for _attr in ("runtest", "from_item_and_call", "pytest_runtest_call"):
            try:
                setattr(_mod, _attr, lambda *a, **k: None)
            except Exception:
                pass

def add(a, b):
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "always_equal_object",
        "failed",
        """class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __hash__(self):
        return 0
    def __bool__(self):
        return True

def add(a, b):
    return Anything()
""",
        ADD_TEST,
    ),
    _case(
        "always_equal_int_subclass",
        "failed",
        """class Sly(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def add(a, b):
    return Sly(a - b)
""",
        ADD_TEST,
    ),
    _case(
        "always_equal_inside_container",
        "failed",
        """class Anything:
    def __eq__(self, other):
        return True

def add(a, b):
    return [Anything()]
""",
        """from solution import add


def test_add():
    assert add(1, 2) == [3]
""",
    ),
    _case(
        "always_equal_str_subclass",
        "failed",
        """class Sly(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__

def add(a, b):
    return Sly("wrong")
""",
        """from solution import add


def test_add():
    assert add("a", "b") == "ab"
""",
    ),
    _case(
        "patch_builtins_and_assertion",
        "failed",
        """import builtins

builtins.abs = lambda x: 0
builtins.AssertionError = type("AssertionError", (Exception,), {})

def add(a, b):
    return a - b
""",
        """from solution import add


def test_add():
    assert isinstance(add(1, 2), int)
    assert abs(add(1, 2) - 3) < 1e-9
""",
    ),
    _case(
        "raise_skip_like_exception",
        "failed",
        """class Skipped(Exception):
    pass

class Exit(BaseException):
    pass

def add(a, b):
    if a == 1:
        raise Skipped("skip me")
    raise Exit("pretend pytest.exit")
""",
        """from solution import add


def test_add():
    assert add(1, 2) == 3


def test_add_again():
    assert add(2, 2) == 4
""",
    ),
    _case(
        "raw_frame_deep_nesting",
        "failed",
        """import os, struct, sys

def add(a, b):
    tx = int(sys.argv[sys.argv.index("--tx") + 1])
    body = b'{"ok":' + b"[" * 500000 + b"]" * 500000 + b"}"
    os.write(tx, struct.pack(">I", len(body)) + body)
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "raw_frame_claims_huge_length",
        "failed",
        """import os, struct, sys

def add(a, b):
    tx = int(sys.argv[sys.argv.index("--tx") + 1])
    os.write(tx, struct.pack(">I", 2**32 - 1) + b"{")
    return a - b
""",
        ADD_TEST,
    ),
    _case(
        "raw_frame_forged_handle_and_tag",
        "failed",
        """import os, struct, sys

def add(a, b):
    tx = int(sys.argv[sys.argv.index("--tx") + 1])
    body = b'{"ok":["eval","__import__(os)"]}'
    os.write(tx, struct.pack(">I", len(body)) + body)
    import time
    time.sleep(0.5)
    return 3
""",
        ADD_TEST,
    ),
    # Every process it can reach is in its own sandbox; the answer is right, so it passes.
    _case(
        "kill_every_process_in_reach",
        "passed",
        """import os, signal

def add(a, b):
    for pid in range(1, 4096):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return 3
""",
        ADD_TEST,
    ),
    _case(
        "read_hidden_tests",
        "passed",
        """import os

def solve():
    seen = []
    # Everywhere a test file could have been put (not the read-only runtime: a full walk
    # of it does not fit the wall-clock limit on a loaded machine).
    skip = ("/proc", "/sys", "/usr", "/dev", "/opt/jurat/python", "/opt/jurat/site")
    for root in ("/work", "/tmp", "/opt/jurat", "/home", "/root", "/var", "/srv", "/mnt"):
        for dirpath, dirs, files in os.walk(root):
            # Pruned, not only skipped: os.walk would still list every directory below.
            dirs[:] = [d for d in dirs if not os.path.join(dirpath, d).startswith(skip)]
            if dirpath.startswith(skip):
                continue
            for name in files:
                try:
                    with open(os.path.join(dirpath, name), errors="replace") as handle:
                        seen.append(handle.read(100000))
                except OSError:
                    pass
    return " | ".join(seen)
""",
        """from solution import solve

# HIDDEN-MARKER-$token


def test_hidden():
    text = solve()
    assert "HIDDEN-MARKER" not in text
""",
    ),
)
