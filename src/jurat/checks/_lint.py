"""Lint with the pinned ruff and a named rule set (seed 000, "Code correctness pipeline", step 3).

ruff runs on the host as a subprocess that only *reads* the candidate from
stdin; nothing of the candidate is executed. ``--isolated`` ignores any
configuration file near the working directory and ``--ignore-noqa`` keeps
the candidate from silencing findings with comments, so the result depends
only on the source, the rule set and the ruff version. ``--preview`` is part of
the rule set: ruff ships pycodestyle's whitespace, indentation and blank-line
rules (E1, E2, E3), the core of PEP 8, only as preview rules; with ruff pinned
they are as reproducible as the stable ones.

A large flat source can make ruff report a finding per few bytes (a 256 KiB list literal
gives 130,000, about 100 MB of JSON): ruff writes one JSON object per line, read one at a
time, so only each finding's code and place are kept. ruff has a time budget
(``RUFF_TIMEOUT_S``); past it the lint gate is ``checker_timeout`` (``_guard``).
"""

from __future__ import annotations

import functools
import io
import json
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurat.checks._guard import BeyondBounds
from jurat.errors import ConfigError, DependencyError
from jurat.models._base import Frozen

__all__ = ["LINE_LENGTH", "PEP8_RULES", "LintFinding", "rule_set", "rule_set_id", "run_ruff"]

PEP8_RULES = ("E", "W")
"""pycodestyle's errors and warnings: the PEP 8 part of every rule set."""
LINE_LENGTH = 79
"""PEP 8's maximum line length."""
_SELECTOR = re.compile(r"^[A-Z]{1,4}[0-9]{0,4}$")
_RULE_SET_VERSION = "jurat.lint/v1"
RUFF_TIMEOUT_S = 60
"""Seconds ruff may take on one candidate."""


class LintFinding(Frozen):
    """One ruff diagnostic."""

    code: str
    """Rule code, e.g. ``E501``."""
    message: str
    """ruff's message."""
    line: int
    """1-based line."""
    column: int
    """1-based column."""


def rule_set(extra: Sequence[str]) -> tuple[str, ...]:
    """The PEP 8 selectors plus the campaign's, sorted; ConfigError on a malformed selector."""
    for selector in extra:
        if not _SELECTOR.match(selector):
            raise ConfigError(
                f"checks.python.lint_rules: {selector!r} is not a ruff rule selector "
                '(fix: use codes like "E", "F", "B006")'
            )
    return tuple(sorted(set(PEP8_RULES) | set(extra)))


def rule_set_id(selectors: Sequence[str], target: str) -> str:
    """A stable id for the rule set, recorded with the gate."""
    return (
        f"{_RULE_SET_VERSION}[select={','.join(selectors)};preview;"
        f"line-length={LINE_LENGTH};target={target}]"
    )


@functools.cache
def ruff_binary() -> tuple[str, str]:
    """(path, version) of the ruff next to this interpreter, else the one on PATH.

    A fact of the process, found once (a DependencyError is not kept: the next call looks
    again)."""
    candidate = Path(sysconfig.get_path("scripts")) / "ruff"
    path = str(candidate) if candidate.is_file() else shutil.which("ruff")
    if path is None:
        raise DependencyError("ruff is not installed (fix: pip install 'ruff==0.17.6')")
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise DependencyError(f"cannot run {path} --version: {exc}") from exc
    return path, out.strip().removeprefix("ruff ").strip()


def run_ruff(
    source: str, *, selectors: Sequence[str], target: str, filename: str = "solution.py"
) -> tuple[LintFinding, ...]:
    """Lint ``source`` read from stdin; DependencyError if ruff is missing or fails,
    BeyondBounds (``checker_timeout``) if it takes longer than ``RUFF_TIMEOUT_S``."""
    path, _ = ruff_binary()
    argv = [
        path,
        "check",
        "--isolated",
        "--no-cache",
        "--ignore-noqa",
        "--preview",
        "--output-format",
        "json-lines",
        "--select",
        ",".join(selectors),
        "--line-length",
        str(LINE_LENGTH),
        "--target-version",
        target,
        "--stdin-filename",
        filename,
        "-",
    ]
    try:
        done = subprocess.run(
            argv, input=source, capture_output=True, text=True, timeout=RUFF_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        # The candidate's text made ruff slow: the gate's cause, not a missing tool.
        raise BeyondBounds("checker_timeout", f"ruff took over {RUFF_TIMEOUT_S} s") from exc
    except (OSError, subprocess.SubprocessError) as exc:
        raise DependencyError(f"ruff did not run: {exc}") from exc
    if done.returncode not in (0, 1):
        raise DependencyError(f"ruff failed (exit {done.returncode}): {done.stderr.strip()[:300]}")
    findings = [_finding(line) for line in io.StringIO(done.stdout) if line.strip()]
    return tuple(sorted(findings, key=lambda f: (f.line, f.column, f.code)))


def _finding(line: str) -> LintFinding:
    """One line of ruff's ``json-lines`` output."""
    try:
        item: dict[str, Any] = json.loads(line)
        return LintFinding(
            code=str(item.get("code") or "syntax"),
            message=str(item.get("message", "")),
            line=int(item["location"]["row"]),
            column=int(item["location"]["column"]),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise DependencyError(f"ruff printed unreadable JSON: {exc}") from exc
