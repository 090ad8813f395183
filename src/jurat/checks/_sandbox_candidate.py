"""The program that hosts the candidate inside *its own* sandbox (protocol ``jurat.sandbox/v3``).

Started by the bootstrap in ``_sandbox.py`` with ``--control FD --rx FD --tx FD``. It
writes the candidate module into its private tmpfs, applies the rlimits,
optionally starts coverage, imports the module and then answers requests
from the trusted test process: look up a name, call a handle (and report the
arguments again when the call changed them), a declared object's special methods
(``len``, ``getitem``, ``contains``, ``bool``, ``str``, and ``iter``, which
answers with the items as one list), and ``finish`` (coverage summary, then exit).

Nothing here is trusted. This process runs contributor code that can
replace any of it, so it holds no verdict, no test source and no secret:
the tests live in another sandbox, and what crosses back is decoded there
by ``_sandbox_wire.decode`` into fresh built-in objects. This file only has
to be correct for honest candidates.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
import types
from typing import TYPE_CHECKING, Any

# In the sandbox the programs sit side by side in /opt/jurat, without the jurat package.
if TYPE_CHECKING:
    from jurat.checks._sandbox_limits import apply_rlimits
    from jurat.checks._sandbox_wire import Resolver, decode, encode, read_frame, write_frame
else:
    from _sandbox_limits import apply_rlimits
    from _sandbox_wire import Resolver, decode, encode, read_frame, write_frame

WORKDIR = "/work"
MESSAGE_CHARS = 2000
#: Items a declared object's iteration may yield; the trusted side's decoder has its own
#: bound on parts, this one keeps an endless iterator from running forever here.
MAX_ITEMS = 100_000
_SPECIAL = {
    "len": len,
    "bool": bool,
    "str": str,
    "iter": lambda obj: list(itertools.islice(iter(obj), MAX_ITEMS + 1)),
    "getitem": lambda obj, key: obj[key],
    "contains": lambda obj, key: key in obj,
}


def _read_config(fd: int) -> dict[str, Any]:
    with os.fdopen(fd, "rb") as handle:
        config: dict[str, Any] = json.loads(handle.read())
    return config


def _builtin_base(cls: type) -> str:
    for klass in cls.__mro__:
        if klass.__module__ == "builtins" and issubclass(klass, BaseException):
            return klass.__name__
    return "Exception"


class Registry:
    """Candidate objects the trusted side holds handles to, by small integer ref."""

    def __init__(self, module: types.ModuleType) -> None:
        self.objects: list[Any] = [module]
        self.refs: dict[int, int] = {id(module): 0}

    def ref(self, obj: Any) -> int:
        ref = self.refs.get(id(obj))
        if ref is None:
            ref = len(self.objects)
            self.objects.append(obj)
            self.refs[id(obj)] = ref
        return ref

    def register(self, obj: Any) -> list[Any]:
        if isinstance(obj, types.ModuleType):
            return ["m", self.ref(obj), str(obj.__name__)]
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return ["x", self.ref(obj), obj.__name__, _builtin_base(obj)]
        return ["r", self.ref(obj), type(obj).__name__]

    def resolve(self, wire: Any) -> Any:
        # The trusted side only ever sends plain data and handles it was given.
        objects = self.objects

        class _Local(Resolver):
            def handle(self, ref: int, type_name: str) -> Any:
                return objects[ref]

        return decode(wire, _Local())


def _error(exc: BaseException, registry: Registry) -> dict[str, Any]:
    try:
        message = str(exc)[:MESSAGE_CHARS]
    except BaseException:  # noqa: B036 - a candidate's __str__ may raise anything
        message = "<unprintable>"
    cls = type(exc)
    ref = registry.ref(cls) if cls.__module__ != "builtins" else None
    return {"type": cls.__name__, "base": _builtin_base(cls), "ref": ref, "message": message}


def serve(rx: int, tx: int, registry: Registry, coverage: Any) -> None:
    """Answer the trusted side's requests until it finishes or goes away."""

    while True:
        try:
            request = read_frame(rx)
        except EOFError:
            return
        op = request.get("op")
        if op == "finish":
            write_frame(tx, {"ok": encode(_coverage_summary(coverage), registry.register)})
            return
        try:
            target = registry.objects[int(request["ref"])]
            if op == "get":
                reply = {"ok": encode(getattr(target, str(request["name"])), registry.register)}
            elif op == "call":
                reply = _call(target, request, registry)
            elif op in _SPECIAL:
                extra = [registry.resolve(a) for a in request.get("args", [])]
                result = _SPECIAL[op](target, *extra)  # type: ignore[operator]
                reply = {"ok": encode(result, registry.register)}
            else:
                raise ValueError(f"unknown operation {op!r}")
        except BaseException as exc:  # noqa: B036 - everything the candidate raises is data
            reply = {"raise": _error(exc, registry)}
        write_frame(tx, reply)


def _call(target: Any, request: dict[str, Any], registry: Registry) -> dict[str, Any]:
    """Call ``target`` with the arguments as data; report them again if the call changed
    them, so the trusted side sees in-place changes as a local call would."""
    args = registry.resolve(["l", *request["args"]])
    kwargs = registry.resolve(["d", *request["kwargs"]])
    result = target(*args, **kwargs)
    reply: dict[str, Any] = {"ok": encode(result, registry.register)}
    after = [encode(a, registry.register) for a in args]
    if after != request["args"]:
        reply["after"] = after
    kwafter = [[key, encode(value, registry.register)] for key, value in kwargs.items()]
    if kwafter != [[k, v] for k, v in request["kwargs"]]:
        reply["kwafter"] = kwafter
    return reply


def _coverage_summary(cov: Any) -> Any:
    if cov is None:
        return None
    cov.stop()
    path = "/tmp/.jurat-coverage.json"
    try:
        cov.json_report(outfile=path, pretty_print=False)
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except Exception:  # coverage raises NoDataError and friends
        return {"error": "not_measured"}
    entry = next(iter(report.get("files", {}).values()), None)
    if entry is None:
        return {"error": "not_imported"}
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


def main(argv: list[str]) -> int:
    config = _read_config(int(argv[argv.index("--control") + 1]))
    rx = int(argv[argv.index("--rx") + 1])
    tx = int(argv[argv.index("--tx") + 1])
    sys.path[:0] = [WORKDIR, *config["sites"]]
    sys.dont_write_bytecode = True

    module_name = str(config["module"])
    path = os.path.join(WORKDIR, module_name + ".py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(config["source"])
    apply_rlimits(config["limits"])
    os.chdir(WORKDIR)
    cov = None
    if config["coverage"]:
        import coverage

        cov = coverage.Coverage(data_file=None, branch=True, include=[path], config_file=False)
        cov.start()
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: B036 - an import failure is reported, not fatal here
        registry = Registry(types.ModuleType(module_name))
        write_frame(tx, {"import_error": _error(exc, registry)})
        os._exit(0)
    registry = Registry(module)
    exported = getattr(module, "__all__", None)
    if not (isinstance(exported, list | tuple) and all(isinstance(n, str) for n in exported)):
        exported = [n for n in vars(module) if not n.startswith("_")]
    write_frame(tx, {"ready": {"names": [str(n) for n in exported][:10_000]}})
    serve(rx, tx, registry, cov)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
