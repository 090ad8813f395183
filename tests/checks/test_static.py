"""Parse, import/operation policy and lint: the steps that only read the candidate."""

from __future__ import annotations

import ast
from importlib import metadata

import pytest

from jurat.checks import IMPORT_POLICIES, inspect_operations, rule_set_id
from jurat.checks._lint import ruff_binary, rule_set, run_ruff
from jurat.checks._parse import declared_version, parse_candidate
from jurat.checks._policy import policy_for
from jurat.errors import ConfigError

POLICY = IMPORT_POLICIES["jurat.imports/v1"]


# --------------------------------------------------------------------------- parse


def test_parse_accepts_valid_source() -> None:
    tree, error = parse_candidate("def f(x):\n    return x + 1\n", "3.11")
    assert error is None and isinstance(tree, ast.Module)


def test_syntax_error_reports_line_and_column() -> None:
    tree, error = parse_candidate("def f(x):\n    return x +\n", "3.11")
    assert tree is None and error is not None
    assert (error.line, error.column) == (2, 15)
    assert "invalid syntax" in error.message
    assert error.text == "return x +"


def test_declared_grammar_is_enforced() -> None:
    source = "match x:\n    case 1:\n        pass\n"
    assert parse_candidate(source, "3.10")[1] is None
    _, error = parse_candidate(source, "3.9")
    assert error is not None and "3.10" in error.message


def test_nul_byte_is_a_parse_failure_not_a_crash() -> None:
    tree, error = parse_candidate("x = 1\0\n", "3.11")
    assert tree is None and error is not None


@pytest.mark.parametrize("version", ["3", "python3.11", "4.0", "3.99", "3.2", ""])
def test_bad_declared_versions_are_config_errors(version: str) -> None:
    with pytest.raises(ConfigError, match="checks.python.version"):
        declared_version(version)


# --------------------------------------------------------------------------- policy


def _findings(source: str) -> set[tuple[str, str, str, int]]:
    return {
        (f.rule, f.name, f.severity, f.line) for f in inspect_operations(ast.parse(source), POLICY)
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import subprocess\n", ("JI001", "subprocess", "deny", 1)),
        ("import socket as s\n", ("JI001", "socket", "deny", 1)),
        ("from ctypes import CDLL\n", ("JI001", "ctypes", "deny", 1)),
        ("import os\nos.system('ls')\n", ("JI002", "os.system", "deny", 2)),
        ("import os as o\n\n\no.execv('/bin/sh', [])\n", ("JI002", "os.execv", "deny", 4)),
        ("from os import system as run\nrun('ls')\n", ("JI002", "os.system", "deny", 1)),
        ("import os\nf = os.kill\n", ("JI002", "os.kill", "deny", 2)),
        ("x = eval('1')\n", ("JI002", "eval", "deny", 1)),
        ("exec('x = 1')\n", ("JI002", "exec", "deny", 1)),
        ("m = __import__('os')\n", ("JI002", "__import__", "deny", 1)),
        (
            "c = ().__class__.__bases__[0].__subclasses__()\n",
            ("JI003", "__subclasses__", "deny", 1),
        ),
        ("g = getattr(f, '__globals__')\n", ("JI003", "__globals__", "deny", 1)),
        ("b = __builtins__\n", ("JI003", "__builtins__", "deny", 1)),
        ("import sys\nsys.modules['x'] = 1\n", ("JI002", "sys.modules", "deny", 2)),
        ("import importlib\n", ("JI001", "importlib", "deny", 1)),
        ("import _pytest.runner\n", ("JI001", "_pytest.runner", "deny", 1)),
        ("import gc\n", ("JI001", "gc", "deny", 1)),
        ("data = open('x').read()\n", ("JW102", "open", "warn", 1)),
        ("import threading\n", ("JW101", "threading", "warn", 1)),
        ("import os\nkey = os.environ['K']\n", ("JW102", "os.environ", "warn", 2)),
        ("v = getattr(obj, name)\n", ("JW103", "getattr", "warn", 1)),
    ],
)
def test_policy_reports_each_operation_with_its_location(
    source: str, expected: tuple[str, str, str, int]
) -> None:
    assert expected in _findings(source)


def test_clean_code_has_no_findings() -> None:
    source = (
        "import math\nimport os.path\nfrom collections import Counter\n\n\n"
        "def f(xs):\n    return math.fsum(xs) + len(Counter(xs)) + len(os.path.join('a', 'b'))\n"
    )
    assert _findings(source) == set()


def test_a_local_definition_shadows_the_builtin() -> None:
    assert _findings("def compile(x):\n    return x\n\n\ncompile(1)\n") == set()


def test_findings_are_in_source_order() -> None:
    findings = inspect_operations(ast.parse("import os\nos.system('a')\nimport socket\n"), POLICY)
    assert [f.line for f in findings] == sorted(f.line for f in findings)


def test_unknown_policy_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="jurat.imports/v1"):
        policy_for("jurat.imports/v999")


# --------------------------------------------------------------------------- lint


def test_ruff_is_the_pinned_version() -> None:
    assert ruff_binary()[1] == metadata.version("ruff")


def test_rule_set_has_pep8_and_campaign_rules() -> None:
    assert rule_set(["F", "B"]) == ("B", "E", "F", "W")
    assert (
        rule_set_id(("E", "W"), "py311")
        == "jurat.lint/v1[select=E,W;preview;line-length=79;target=py311]"
    )
    with pytest.raises(ConfigError, match="lint_rules"):
        rule_set(["E; rm -rf /"])


def test_ruff_reports_pep8_findings_with_locations() -> None:
    source = "import os\ndef f(a,b):\n    return a+b\n"
    codes = {(f.code, f.line) for f in run_ruff(source, selectors=("E", "F", "W"), target="py311")}
    assert ("F401", 1) in codes  # unused import
    assert ("E302", 2) in codes  # two blank lines expected
    assert ("E231", 2) in codes  # missing whitespace after ','


def test_noqa_comments_cannot_silence_findings() -> None:
    source = "import os  # noqa\n"
    assert [f.code for f in run_ruff(source, selectors=("F",), target="py311")] == ["F401"]


def test_clean_source_has_no_lint_findings() -> None:
    source = "def add(a, b):\n    return a + b\n"
    assert run_ruff(source, selectors=("E", "F", "W"), target="py311") == ()


def test_lint_does_not_read_a_config_file_next_to_the_run(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nignore = ["F401"]\n')
    monkeypatch.chdir(tmp_path)
    assert [f.code for f in run_ruff("import os\n", selectors=("F",), target="py311")] == ["F401"]
