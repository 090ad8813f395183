"""The candidate as the trusted tests see it: plain data over the sandbox channel.

Runs in the trusted test process (``_sandbox_tests.py``), stdlib-only.

Threat model. The candidate process answers every request as it likes: any wire value,
any exception name and message, or nothing at all. The test process must behave as if
the candidate's functions were local functions that return *plain data*, and must never
run candidate-defined behaviour of any other kind: no special method of the candidate's
objects, no control-flow exception, no object the tests did not declare. So
(``jurat.sandbox/v3``, docs/design.md "The code sandbox"):

* **The interface is declared.** By default the tests may call the candidate's
  functions and read its constants, and every value that comes back is plain data
  (``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``bytearray``,
  ``tuple``, ``list``, ``dict``, ``set``, ``frozenset``), built fresh here by the bounded
  decoder (``_sandbox_wire.decode``). A value of any other type is a test failure,
  ``NotPlainData``: "returned <type> where plain data was expected". Object handles exist
  only for the classes the task declares (``[checks.python] objects``), as ``Instance``.
* **A name looked up is a ``Function``**: an opaque handle whose only operation is
  ``__call__`` (whatever the candidate claims its type is). It forwards no special method:
  ``==`` is identity, ``in``, ``len``, iteration, indexing and ``str`` are refused as they
  are for any object without them, ``repr`` is written here.
* **A declared object's special methods are coerced here**: ``len`` must come back as a
  non-negative ``int``, ``bool`` as a ``bool``, ``str`` as a ``str``; ``in`` is ``bool`` of
  plain data; iteration asks for the items once, as a list of plain data, and iterates
  that list here. ``==`` and ``hash`` are identity.
* **Exceptions come back as data** and are raised here as the built-in exception or a
  local class per candidate class. ``StopIteration``, ``StopAsyncIteration``,
  ``GeneratorExit`` and every ``BaseException`` that is not an ``Exception`` become
  ``RuntimeError`` (PEP 479's rule), so ``map``, ``filter``, ``next`` and ``for`` in a
  test never read a candidate's exception as "end of iteration".
* **Arguments are copied, and copied back**: a call sends its arguments as data; the
  candidate reports the arguments' state after the call, and a mutable argument (list,
  dict, set, bytearray, and those nested in it) is updated in place here, so a test of
  in-place behaviour sees what a local call would. Only plain data is written back.

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

__all__ = [
    "CONTROL_FLOW_EXCEPTIONS",
    "Candidate",
    "CandidateError",
    "CandidateGone",
    "Function",
    "Instance",
    "NotPlainData",
    "exportable",
]

# Standard-library modules the candidate may hand over by name (``import math`` in a
# HumanEval prompt, used by its check through ``from solution import *``): the tests
# get their own copy. Any other module stays an opaque handle.
_SAFE_MODULES = frozenset(
    "bisect cmath collections copy dataclasses datetime decimal enum fractions functools "
    "hashlib heapq itertools json math numbers operator random re statistics string "
    "textwrap typing unicodedata".split()
)
#: Exceptions that steer the caller's control flow rather than report an error; a
#: candidate's is raised here as ``RuntimeError`` (PEP 479).
CONTROL_FLOW_EXCEPTIONS = frozenset({"StopIteration", "StopAsyncIteration", "GeneratorExit"})
_MESSAGE_CHARS = 2000
_NAME_CHARS = 200


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


class NotPlainData(CandidateError):
    """The candidate gave a value outside the declared interface (not plain data)."""


class _Handle:
    """A reference to an object that stays in the candidate's process."""

    __slots__ = ("_candidate", "_ref", "_type")
    __test__ = False  # never collected by pytest, even when named test_*
    _candidate: Candidate
    _ref: int
    _type: str

    def __init__(self, candidate: Candidate, ref: int, type_name: str) -> None:
        object.__setattr__(self, "_candidate", candidate)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", type_name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot set {name!r} on a candidate object across the sandbox")

    def __repr__(self) -> str:
        return f"<candidate {self._type} #{self._ref}>"


class Function(_Handle):
    """A name of the candidate's: it can be called, and that is all it does here."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._candidate.call(self._ref, args, kwargs)


class Instance(_Handle):
    """An object of a class the task declared; its special methods are coerced here."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if _local_only(name):
            raise AttributeError(name)
        return self._candidate.lookup(self._ref, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._candidate.call(self._ref, args, kwargs)

    def __len__(self) -> int:
        value = self._candidate.special("len", self._ref)
        if type(value) is not int or value < 0:
            raise NotPlainData(f"{self._type}.__len__ returned {_kind(value)}, not a count")
        return value

    def __bool__(self) -> bool:
        value = self._candidate.special("bool", self._ref)
        if type(value) is not bool:
            raise NotPlainData(f"{self._type}.__bool__ returned {_kind(value)}, not a bool")
        return value

    def __str__(self) -> str:
        value = self._candidate.special("str", self._ref)
        if type(value) is not str:
            raise NotPlainData(f"{self._type}.__str__ returned {_kind(value)}, not a str")
        return value

    def __contains__(self, item: Any) -> bool:
        return bool(self._candidate.special("contains", self._ref, item))

    def __getitem__(self, key: Any) -> Any:
        return self._candidate.special("getitem", self._ref, key)

    def __iter__(self) -> Any:
        items = self._candidate.special("iter", self._ref)
        if type(items) is not list:
            raise NotPlainData(f"{self._type}.__iter__ gave {_kind(items)}, not items")
        return iter(items)


def _local_only(name: str) -> bool:
    # Dunder and pytest probes (``__test__``, ``pytestmark``, ``__code__``) are answered
    # here, so introspection by pytest or inspect never reaches the candidate.
    return (name.startswith("__") and name.endswith("__")) or name.startswith(("_pytest", "pytest"))


def _kind(value: Any) -> str:
    if isinstance(value, _Handle):
        return f"a {value._type} object"
    return f"a {type(value).__name__}"


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
        return candidate.lookup(0, name)


class _Lookup(Resolver):
    """Decoding a name's value: plain data, a ``Function``, a declared ``Instance``, an
    exception class (rebuilt here) or one of the safe standard-library modules."""

    def __init__(self, candidate: Candidate) -> None:
        self._candidate = candidate

    def handle(self, ref: int, type_name: str) -> Any:
        declared = self._candidate.declared(ref, type_name)
        return declared if declared is not None else self._candidate.function(ref, type_name)

    def exception_class(self, ref: int, name: str, base: str) -> Any:
        return self._candidate.exception_class(ref, name, base)

    def module(self, ref: int, name: str) -> Any:
        if name in _SAFE_MODULES:
            return importlib.import_module(name)
        return self._candidate.function(ref, "module")


class _Result(_Lookup):
    """Decoding what a call returned: plain data or a declared ``Instance``, nothing else."""

    def handle(self, ref: int, type_name: str) -> Any:
        declared = self._candidate.declared(ref, type_name)
        if declared is None:
            raise NotPlainData(f"returned {type_name or 'an object'} where plain data was "
                               "expected")
        return declared

    def module(self, ref: int, name: str) -> Any:
        raise NotPlainData("returned a module where plain data was expected")


class Candidate:
    """The channel to the candidate process, and the rules for decoding its replies."""

    def __init__(self, rx: int, tx: int, module: str,
                 objects: frozenset[str] = frozenset()) -> None:
        self._rx, self._tx = rx, tx
        self._module = module
        self._objects = objects
        self._functions: dict[int, Function] = {}
        self._instances: dict[int, Instance] = {}
        self._exceptions: dict[int, type[Exception]] = {}
        self._broken: str | None = None
        self._lookup = _Lookup(self)
        self._result = _Result(self)
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
            self.import_error = (f"{str(error.get('type'))[:_NAME_CHARS]}: "
                                 f"{str(error.get('message'))[:_MESSAGE_CHARS]}")
        else:
            raise CandidateGone("the candidate process did not report its import")
        exported = exportable(names[:10_000], reserved)
        sys.modules[self._module] = ProxyModule(self._module, self, exported)

    def finish(self) -> Any:
        """Coverage summary measured in the candidate process (candidate-reported data:
        the host keeps it in the operator's record only)."""
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

    # ------------------------------------------------------------------ operations

    def lookup(self, ref: int, name: str) -> Any:
        """A name of the candidate module (``ref`` 0) or of a declared object."""
        return self._request({"op": "get", "ref": ref, "name": name}, self._lookup)

    def call(self, ref: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a handle with copies of ``args``; mutable arguments are updated in place
        from the state the candidate reports after the call."""
        sent_args = [self.send(a) for a in args]
        sent_kwargs = [[key, self.send(value)] for key, value in kwargs.items()]
        reply = self._exchange({"op": "call", "ref": ref, "args": sent_args,
                                "kwargs": sent_kwargs})
        result = self._value(reply, self._result)
        self._copy_back(reply, args, kwargs)
        return result

    def special(self, op: str, ref: int, *args: Any) -> Any:
        """One of a declared object's special methods; its result is plain data."""
        reply = self._exchange({"op": op, "ref": ref, "args": [self.send(a) for a in args]})
        return self._value(reply, self._result)

    def send(self, value: Any) -> Any:
        """Encode a test-side argument; only plain data and candidate handles may cross."""
        return encode(value, self._refuse)

    @staticmethod
    def _refuse(value: Any) -> list[Any]:
        if isinstance(value, _Handle):
            return ["r", value._ref, value._type]
        raise TypeError(
            f"cannot pass a {type(value).__name__} to the candidate: only plain data "
            "(numbers, strings, bytes, lists, tuples, dicts, sets) crosses the sandbox boundary"
        )

    # ------------------------------------------------------------------ handles

    def declared(self, ref: int, type_name: str) -> Instance | None:
        """The ``Instance`` for ``ref`` if its class is one the task declared."""
        if type_name not in self._objects:
            return None
        instance = self._instances.get(ref)
        if instance is None:
            instance = self._instances[ref] = Instance(self, ref, type_name)
        return instance

    def function(self, ref: int, type_name: str) -> Function:
        """The opaque callable handle for ``ref``."""
        function = self._functions.get(ref)
        if function is None:
            function = self._functions[ref] = Function(self, ref, type_name[:_NAME_CHARS])
        return function

    def exception_class(self, ref: int, name: str, base: str) -> type[Exception]:
        """A local class for a candidate exception class, under its nearest safe base."""
        cls = self._exceptions.get(ref)
        if cls is None:
            safe_name = name if name.isidentifier() else "CandidateException"
            cls = self._exceptions[ref] = type(safe_name, (_safe_base(base),),
                                               {"__module__": self._module})
        return cls

    # ------------------------------------------------------------------ the channel

    def _request(self, message: dict[str, Any], resolver: Resolver) -> Any:
        return self._value(self._exchange(message), resolver)

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._broken:
            raise CandidateGone(self._broken)
        try:
            write_frame(self._tx, message)
        except OSError as exc:
            self._broken = f"the candidate process is gone ({exc.strerror})"
            raise CandidateGone(self._broken) from None
        reply = self._receive()
        if not isinstance(reply, dict) or not ({"ok", "raise"} & reply.keys()):
            self._broken = "the candidate sent a malformed reply"
            raise CandidateGone(self._broken)
        return reply

    def _value(self, reply: dict[str, Any], resolver: Resolver) -> Any:
        if "ok" in reply:
            try:
                return decode(reply["ok"], resolver)
            except WireError as exc:
                raise CandidateError(f"the candidate returned an unreadable value: {exc}") from None
        if isinstance(reply.get("raise"), dict):
            raise self._exception(reply["raise"])
        self._broken = "the candidate sent a malformed reply"
        raise CandidateGone(self._broken)

    def _copy_back(self, reply: dict[str, Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> None:
        after, kwafter = reply.get("after"), reply.get("kwafter")
        try:
            if type(after) is list and len(after) == len(args):
                for original, wire in zip(args, after, strict=True):
                    _copy_into(original, decode(wire, self._lookup))
            if type(kwafter) is list:
                for pair in kwafter:
                    if type(pair) is list and len(pair) == 2 and pair[0] in kwargs:
                        _copy_into(kwargs[pair[0]], decode(pair[1], self._lookup))
        except WireError as exc:
            raise CandidateError(f"the candidate reported unreadable arguments: {exc}") from None

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

    def _exception(self, error: dict[str, Any]) -> Exception:
        message = str(error.get("message", ""))[:_MESSAGE_CHARS]
        name = str(error.get("type", ""))[:_NAME_CHARS]
        ref = error.get("ref")
        if type(ref) is int:
            cls: type[Exception] = self.exception_class(ref, name, str(error.get("base", "")))
        else:
            cls = _safe_base(name)
        if cls is RuntimeError and name != "RuntimeError":
            message = f"the candidate raised {name}: {message}"
        try:
            return cls(message)
        except Exception:  # e.g. UnicodeDecodeError needs five arguments
            return CandidateError(f"{name}: {message}")


def _safe_base(name: str) -> type[Exception]:
    """The built-in class a candidate exception is raised as here: its own, unless it
    would steer control flow (``StopIteration``: PEP 479) or is not an ``Exception``."""
    builtin = getattr(builtins, name, None)
    if name in CONTROL_FLOW_EXCEPTIONS:
        return RuntimeError
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        if issubclass(builtin, StopIteration | StopAsyncIteration):
            return RuntimeError
        return builtin
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return RuntimeError
    return CandidateError


_MUTABLE = (list, dict, set, bytearray)


def _copy_into(original: Any, after: Any) -> None:
    """An argument the test passed, updated in place to the state the candidate reported:
    what a local call that mutated it would have left."""
    if type(original) not in (*_MUTABLE, tuple):
        return  # immutable: nothing a local call could have changed
    if type(after) is not type(original):
        raise CandidateError("the candidate reported an argument of another type after the call")
    _merge(original, after)


def _merge(original: Any, after: Any) -> Any:
    """What a place that held ``original`` holds after the call: ``original`` itself,
    updated in place, where it is a container of the same type; else ``after``."""
    kind = type(original)
    if kind is not type(after):
        return after
    if kind is list:
        original[:] = [_merge(original[i], item) if i < len(original) else item
                       for i, item in enumerate(after)]
    elif kind is dict:
        merged = {key: (_merge(original[key], value) if key in original else value)
                  for key, value in after.items()}
        original.clear()
        original.update(merged)
    elif kind is set:
        original.clear()
        original.update(after)
    elif kind is bytearray:
        original[:] = after
    elif kind is tuple and len(original) == len(after):
        # A tuple cannot change, but the lists inside it can.
        kept = [_merge(mine, theirs) for mine, theirs in zip(original, after, strict=True)]
        return original if all(a is b for a, b in zip(kept, original, strict=True)) else after
    else:
        return after
    return original
