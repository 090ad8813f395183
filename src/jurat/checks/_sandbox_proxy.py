"""The candidate as the trusted tests see it: a proxy module over the sandbox channel.

Runs in the trusted test process (``_sandbox_tests.py``), stdlib-only. The
candidate module is replaced in ``sys.modules`` by ``ProxyModule``: looking
up a name asks the candidate process for it, and what comes back is decoded
by ``_sandbox_wire.decode`` into plain built-in values, or into a ``Remote``
handle for anything else (functions, classes, instances, generators). A
``Remote`` forwards calls and a few special methods as requests; it never
forwards ``__eq__``, ``__hash__`` or any other dunder, so an object built to
"equal anything" equals only itself here. Arguments cross as plain data too
(pass by value: an in-place change by the candidate is not seen here).

Exceptions raised by the candidate come back as data (type name, nearest
built-in base, message) and are re-raised here as the built-in exception,
or as a local subclass of it named like the candidate's class (one per
class, so ``pytest.raises(solution.InvalidInput)`` works). Nothing the
candidate sends can raise a ``BaseException`` that is not an ``Exception``
here (``SystemExit``, ``KeyboardInterrupt`` become ``CandidateError``).

The module's ``__all__`` (what ``from solution import *`` binds in a test module) is the
candidate's public names less any builtin, keyword, loaded module or name the test files
bind (``exportable``): the candidate chooses its names, and a wrong answer defining
``abs`` would otherwise rebind the builtin inside the trusted test.
"""

from __future__ import annotations

import builtins
import importlib
import keyword
import sys
import types
from typing import TYPE_CHECKING, Any

# In the sandbox the programs sit side by side without the jurat package.
if TYPE_CHECKING:
    from jurat.checks._sandbox_wire import (
        Resolver,
        WireError,
        decode,
        encode,
        read_frame,
        write_frame,
    )
else:
    from _sandbox_wire import Resolver, WireError, decode, encode, read_frame, write_frame

__all__ = ["Candidate", "CandidateError", "Remote", "exportable"]

# Standard-library modules the candidate may hand over by name (``import math`` in a
# HumanEval prompt, used by its check through ``from solution import *``): the tests
# get their own copy. Any other module stays a handle in the candidate process.
_SAFE_MODULES = frozenset(
    "bisect cmath collections copy dataclasses datetime decimal enum fractions functools "
    "hashlib heapq itertools json math numbers operator random re statistics string "
    "textwrap typing unicodedata".split()
)


def exportable(names: list[str], reserved: frozenset[str] = frozenset()) -> list[str]:
    """The candidate's names that ``from <module> import *`` may bind in a test module.

    The candidate chooses its names (and its ``__all__``), so a wrong answer defining
    ``abs`` would replace the builtin inside the trusted test (``assert abs(x - y) <
    1e-6`` then holds for anything). A star import therefore never yields a builtin, a
    keyword, a private name, the name of a module already loaded here (``pytest``,
    ``math``) or a name the campaign's test files bind (``reserved``). An explicit
    ``from solution import name`` still reaches any of the candidate's names.
    """
    loaded = {name.split(".")[0] for name in sys.modules}
    builtin_names = set(dir(builtins))
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        if (
            not isinstance(name, str)
            or not name.isidentifier()
            or name.startswith("_")
            or keyword.iskeyword(name)
            or keyword.issoftkeyword(name)
            or name in builtin_names
            or name in loaded
            or name in reserved
            or name in seen
        ):
            continue
        seen.add(name)
        out.append(name)
    return out


class CandidateError(Exception):
    """The candidate failed in a way that is not a plain built-in exception."""


class CandidateGone(CandidateError):
    """The candidate process ended or broke the protocol; every later call fails too."""


class Remote:
    """A handle to an object that stays in the candidate's process."""

    __slots__ = ("_candidate", "_ref", "_type")
    __test__ = False  # never collected by pytest, even when named test_*

    def __init__(self, candidate: Candidate, ref: int, type_name: str) -> None:
        object.__setattr__(self, "_candidate", candidate)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", type_name)

    def __getattr__(self, name: str) -> Any:
        if _local_only(name):
            raise AttributeError(name)
        return self._candidate.request("get", self._ref, name=name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._candidate.request(
            "call",
            self._ref,
            args=[self._candidate.send(a) for a in args],
            kwargs=[[key, self._candidate.send(value)] for key, value in kwargs.items()],
        )

    def __iter__(self) -> Any:
        return self._candidate.request("iter", self._ref)

    def __next__(self) -> Any:
        return self._candidate.request("next", self._ref)

    def __len__(self) -> int:
        return self._candidate.request("len", self._ref)  # type: ignore[no-any-return]

    def __bool__(self) -> bool:
        return self._candidate.request("bool", self._ref)  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self._candidate.request("str", self._ref)  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return self._candidate.request("getitem", self._ref, args=[self._candidate.send(key)])

    def __contains__(self, key: Any) -> bool:
        return self._candidate.request(  # type: ignore[no-any-return]
            "contains", self._ref, args=[self._candidate.send(key)]
        )

    def __repr__(self) -> str:
        return f"<candidate {self._type} object #{self._ref}>"


def _local_only(name: str) -> bool:
    # Dunder and pytest probes (``__test__``, ``pytestmark``, ``__code__``) are answered
    # here, so introspection by pytest or inspect never reaches the candidate.
    return (name.startswith("__") and name.endswith("__")) or name.startswith(("_pytest", "pytest"))


class ProxyModule(types.ModuleType):
    """``sys.modules[<candidate module>]`` in the test process."""

    def __init__(self, name: str, candidate: Candidate, names: list[str]) -> None:
        super().__init__(name)
        self.__dict__["_candidate"] = candidate
        self.__dict__["__all__"] = names

    def __getattr__(self, name: str) -> Any:
        if _local_only(name) or name == "_candidate":
            raise AttributeError(name)
        candidate: Candidate = self.__dict__["_candidate"]
        if candidate.import_error is not None:
            raise ImportError(f"the candidate module failed to import: {candidate.import_error}")
        return candidate.request("get", 0, name=name)


class Candidate(Resolver):
    """The channel to the candidate process, and the decoding rules for its replies."""

    def __init__(self, rx: int, tx: int, module: str) -> None:
        self._rx, self._tx = rx, tx
        self._module = module
        self._handles: dict[int, Remote] = {}
        self._exceptions: dict[int, type[Exception]] = {}
        self._broken: str | None = None
        self.import_error: str | None = None

    def install(self, reserved: frozenset[str] = frozenset()) -> None:
        """Wait for the candidate's import and put the proxy module in ``sys.modules``.

        ``reserved``: names the test files bind, which a star import must not rebind.
        """
        try:
            hello = self._receive()
        except CandidateGone as exc:
            hello = {"import_error": {"type": "CandidateGone", "message": str(exc)}}
        names: list[str] = []
        if isinstance(hello, dict) and isinstance(hello.get("ready"), dict):
            names = [n for n in hello["ready"].get("names", []) if isinstance(n, str)]
        elif isinstance(hello, dict) and isinstance(hello.get("import_error"), dict):
            error = hello["import_error"]
            self.import_error = f"{str(error.get('type'))[:200]}: {str(error.get('message'))}"
        else:
            raise CandidateGone("the candidate process did not report its import")
        exported = exportable(names[:10_000], reserved)
        sys.modules[self._module] = ProxyModule(self._module, self, exported)

    def finish(self) -> Any:
        """Coverage summary measured in the candidate process (candidate-reported data).

        Errors are named kinds only (the host maps anything else to ``not_measured``).
        """
        if self.import_error:
            return {"error": "not_imported"}
        if self._broken:
            return {"error": "not_reported"}
        try:
            write_frame(self._tx, {"op": "finish"})
            reply = self._receive()
            return decode(reply.get("ok")) if isinstance(reply, dict) else None
        except (CandidateError, WireError, OSError):
            return {"error": "not_reported"}

    def send(self, value: Any) -> Any:
        """Encode a test-side argument; only plain data and candidate handles may cross."""
        return encode(value, self._refuse)

    @staticmethod
    def _refuse(value: Any) -> list[Any]:
        if isinstance(value, Remote):
            return ["r", value._ref, value._type]
        raise TypeError(
            f"cannot pass a {type(value).__name__} to the candidate: only plain data "
            "(numbers, strings, bytes, lists, tuples, dicts, sets) crosses the sandbox boundary"
        )

    def request(self, op: str, ref: int, **fields: Any) -> Any:
        """Send one request and return the decoded reply (or raise what the candidate raised)."""
        if self._broken:
            raise CandidateGone(self._broken)
        try:
            write_frame(self._tx, {"op": op, "ref": ref, **fields})
        except OSError as exc:
            self._broken = f"the candidate process is gone ({exc.strerror})"
            raise CandidateGone(self._broken) from None
        reply = self._receive()
        if not isinstance(reply, dict) or len(reply) != 1:
            self._broken = "the candidate sent a malformed reply"
            raise CandidateGone(self._broken)
        if "ok" in reply:
            try:
                return decode(reply["ok"], self)
            except WireError as exc:
                raise CandidateError(f"the candidate returned an unreadable value: {exc}") from None
        if reply.get("stop") is True:
            raise StopIteration
        if isinstance(reply.get("raise"), dict):
            raise self._exception(reply["raise"])
        self._broken = "the candidate sent a malformed reply"
        raise CandidateGone(self._broken)

    def _receive(self) -> Any:
        try:
            return read_frame(self._rx)
        except EOFError:
            self._broken = "the candidate process ended (crashed, exited or was killed)"
        except WireError as exc:
            self._broken = f"the candidate broke the protocol: {exc}"
        except OSError as exc:
            self._broken = f"the candidate channel failed ({exc.strerror})"
        raise CandidateGone(self._broken)

    # ------------------------------------------------------------------ Resolver

    def handle(self, ref: int, type_name: str) -> Any:
        remote = self._handles.get(ref)
        if remote is None:
            remote = self._handles[ref] = Remote(self, ref, type_name)
        return remote

    def exception_class(self, ref: int, name: str, base: str) -> Any:
        cls = self._exceptions.get(ref)
        if cls is None:
            parent = getattr(builtins, base, None)
            if not (isinstance(parent, type) and issubclass(parent, Exception)):
                parent = CandidateError
            safe_name = name if name.isidentifier() else "CandidateException"
            cls = self._exceptions[ref] = type(safe_name, (parent,), {"__module__": self._module})
        return cls

    def module(self, ref: int, name: str) -> Any:
        if name in _SAFE_MODULES:
            return importlib.import_module(name)
        return self.handle(ref, "module")

    def _exception(self, error: dict[str, Any]) -> Exception:
        message = str(error.get("message", ""))[:2000]
        name, base = str(error.get("type", ""))[:200], str(error.get("base", ""))
        ref = error.get("ref")
        cls: Any = None
        if type(ref) is int:
            cls = self.exception_class(ref, name, base)
        else:
            builtin = getattr(builtins, name, None)
            if isinstance(builtin, type) and issubclass(builtin, Exception):
                cls = builtin
        try:
            return cls(message) if cls is not None else CandidateError(f"{name}: {message}")
        except Exception:  # e.g. UnicodeDecodeError needs five arguments
            return CandidateError(f"{name}: {message}")
