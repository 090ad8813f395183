"""Import and operation policy (seed 000, "Code correctness pipeline", step 2).

A policy is a versioned, immutable list of modules, calls and attributes.
Findings carry locations. Static inspection is evidence, not proof of
safety: dynamic tricks can hide an operation from any AST scan, which is why
the sandbox applies regardless of what this step finds.
"""

from __future__ import annotations

import ast
import builtins
from fnmatch import fnmatchcase

from jurat.checks._guard import bounded
from jurat.checks._models import Finding
from jurat.errors import ConfigError
from jurat.models._base import Frozen

__all__ = ["IMPORT_POLICIES", "ImportPolicy", "inspect_operations", "policy_for"]


class ImportPolicy(Frozen):
    """A versioned list of what candidates may not import, call or touch."""

    id: str
    """Policy id recorded in the gate, e.g. ``jurat.imports/v1``."""
    denied_modules: tuple[str, ...]
    """Modules (and their submodules) whose import is denied."""
    warned_modules: tuple[str, ...]
    """Modules whose import is reported but allowed."""
    denied_names: tuple[str, ...]
    """Qualified calls/attributes (fnmatch patterns) that are denied, e.g. ``os.exec*``."""
    warned_names: tuple[str, ...]
    """Qualified calls/attributes that are reported but allowed."""
    denied_attributes: tuple[str, ...]
    """Attribute names used to escape to interpreter internals (``__subclasses__``...)."""


# fmt: off
_V1 = ImportPolicy(
    id="jurat.imports/v1",
    denied_modules=(
        "ctypes", "_ctypes", "cffi", "subprocess", "_posixsubprocess", "socket", "_socket",
        "ssl", "socketserver", "multiprocessing", "pty", "signal", "resource", "mmap",
        "fcntl", "termios", "gc", "inspect", "importlib", "imp", "builtins", "code",
        "codeop", "runpy", "http", "urllib", "urllib3", "ftplib", "smtplib", "poplib",
        "imaplib", "telnetlib", "xmlrpc", "webbrowser", "requests", "httpx", "aiohttp",
        "_pytest", "pytest", "pluggy", "coverage", "posix", "_thread", "faulthandler",
        "pdb", "bdb", "sys.monitoring",
    ),
    warned_modules=(
        "threading", "concurrent", "asyncio", "shutil", "pickle", "marshal", "shelve",
        "atexit", "tempfile", "sysconfig", "platform", "getpass", "pwd", "grp",
    ),
    denied_names=(
        "os.system", "os.popen", "os.exec*", "os.spawn*", "os.posix_spawn*", "os.fork*",
        "os.kill*", "os._exit", "os.abort", "os.setsid", "os.setpgid", "os.setpgrp",
        "os.set*uid", "os.set*gid", "os.remove", "os.unlink", "os.rmdir", "os.removedirs",
        "os.chroot", "os.chown", "os.lchown", "os.putenv", "os.unsetenv", "os.register_at_fork",
        "os.memfd_create", "os.pidfd_open", "sys._getframe", "sys.settrace", "sys.setprofile",
        "sys.addaudithook", "sys.modules", "shutil.rmtree", "eval", "exec", "compile",
        "__import__", "breakpoint",
    ),
    warned_names=(
        "os.environ", "os.getenv", "os.environb", "os.chmod", "os.rename", "os.replace",
        "os.chdir", "os.walk", "os.listdir", "os.scandir", "sys.exit", "sys.setrecursionlimit",
        "sys.stdout", "sys.stderr", "shutil.move", "open", "input", "globals", "locals",
        "vars", "setattr", "delattr", "exit", "quit",
    ),
    denied_attributes=(
        "__subclasses__", "__globals__", "__builtins__", "__code__", "__closure__", "__mro__",
        "__bases__", "__base__", "__loader__", "__spec__", "f_globals", "f_locals", "f_back",
        "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame", "ag_frame", "tb_frame",
        "tb_next", "co_code",
    ),
)
# fmt: on

IMPORT_POLICIES: dict[str, ImportPolicy] = {_V1.id: _V1}
"""Every known policy by id; a new list gets a new id, old ids never change."""


def policy_for(policy_id: str) -> ImportPolicy:
    """The policy with this id; ConfigError naming the known ids otherwise."""
    try:
        return IMPORT_POLICIES[policy_id]
    except KeyError:
        known = ", ".join(sorted(IMPORT_POLICIES))
        raise ConfigError(
            f"checks.python.import_policy: unknown policy {policy_id!r} (fix: use one of {known})"
        ) from None


def policy_entry(name: str, policy: ImportPolicy) -> str:
    """The entry of ``policy`` that ``name`` matched: the policy's words, never the
    candidate's (``subprocess.anything`` matched ``subprocess``)."""
    for patterns in (policy.denied_names, policy.warned_names):
        for pattern in patterns:
            if fnmatchcase(name, pattern):
                return pattern
    for modules in (policy.denied_modules, policy.warned_modules):
        for module in modules:
            if name == module or name.startswith(module + "."):
                return module
    if name in policy.denied_attributes or name in ("__builtins__", "getattr", "hasattr"):
        return name
    return "other"


_RULE_TEXT = {
    "JI001": "import of denied module {}",
    "JW101": "import of sensitive module {}",
    "JI002": "use of denied operation {}",
    "JW102": "use of sensitive operation {}",
    "JI003": "access to interpreter internals {}",
    "JW103": "{}() with a computed attribute name",
}


def finding_text(rule: str, entry: str) -> str:
    """A finding in words, from its rule and the policy entry it matched."""
    return _RULE_TEXT.get(rule, rule + " {}").format(entry)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _module_matches(module: str, modules: tuple[str, ...]) -> bool:
    return any(module == m or module.startswith(m + ".") for m in modules)


class _Inspector(ast.NodeVisitor):
    def __init__(self, policy: ImportPolicy, bound: set[str]) -> None:
        self.policy = policy
        self.bound = bound
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []

    def _add(self, node: ast.AST, rule: str, severity: str, name: str, message: str) -> None:
        self.findings.append(
            Finding(
                rule=rule,
                severity="deny" if severity == "deny" else "warn",
                name=name,
                message=message,
                line=getattr(node, "lineno", 0),
                col=getattr(node, "col_offset", 0),
            )
        )

    def _check_module(self, node: ast.AST, module: str) -> None:
        if _module_matches(module, self.policy.denied_modules):
            self._add(node, "JI001", "deny", module, f"import of denied module {module}")
        elif _module_matches(module, self.policy.warned_modules):
            self._add(node, "JW101", "warn", module, f"import of sensitive module {module}")

    def _check_name(self, node: ast.AST, name: str) -> bool:
        if _matches(name, self.policy.denied_names):
            self._add(node, "JI002", "deny", name, f"use of denied operation {name}")
            return True
        if _matches(name, self.policy.warned_names):
            self._add(node, "JW102", "warn", name, f"use of sensitive operation {name}")
            return True
        return False

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        self._check_module(node, module)
        for alias in node.names:
            if alias.name == "*":
                continue
            qualified = f"{module}.{alias.name}"
            self._check_module(node, qualified)
            self._check_name(node, qualified)
            self.aliases[alias.asname or alias.name] = qualified

    def _dotted(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in self.policy.denied_attributes:
            self._add(
                node, "JI003", "deny", node.attr, f"access to interpreter internals .{node.attr}"
            )
        dotted = self._dotted(node)
        if dotted is not None and self._check_name(node, dotted):
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__builtins__":
            self._add(node, "JI003", "deny", node.id, "access to __builtins__")
        elif node.id not in self.bound and hasattr(builtins, node.id):
            self._check_name(node, node.id)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
            attr = node.args[1] if len(node.args) > 1 else None
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                if attr.value in self.policy.denied_attributes or attr.value == "__builtins__":
                    self._add(node, "JI003", "deny", attr.value, f"{func.id}() of {attr.value!r}")
            elif attr is not None:
                self._add(
                    node, "JW103", "warn", func.id, f"{func.id}() with a computed attribute name"
                )
        self.generic_visit(node)


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the candidate defines itself, so that e.g. its own ``compile`` is not a builtin."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


@bounded
def inspect_operations(tree: ast.Module, policy: ImportPolicy) -> tuple[Finding, ...]:
    """Every policy finding in source order.

    The visitor recurses twice per level: the parse step's depth bound (``_guard``) keeps
    its trees within reach; a deeper tree from another caller is BeyondBounds."""
    inspector = _Inspector(policy, _bound_names(tree))
    inspector.visit(tree)
    return tuple(sorted(inspector.findings, key=lambda f: (f.line, f.col, f.rule, f.name)))
