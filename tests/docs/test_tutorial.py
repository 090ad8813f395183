"""docs/tutorial.md, run as written: its files are the shipped ones, its commands run from the
repository root, and the decisions, exit codes and verification steps it shows are the ones
jurat produces, as is every line of output it pastes (``…`` stands for lines left out). So
the tutorial cannot drift from jurat without this test failing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurat.receipts import read_statement

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"
EXAMPLE = REPO / "examples" / "fizzbuzz"

#: A fenced block: its language, an optional file path after it, and its text.
_FENCE = re.compile(r"^```(\w*)(?: (\S+))?\n(.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    lang: str
    path: str | None
    text: str


def blocks() -> list[Block]:
    return [Block(lang, path or None, text)
            for lang, path, text in _FENCE.findall(TUTORIAL.read_text())]


def test_every_file_shown_is_the_file_shipped_and_every_file_is_shown() -> None:
    shown = {b.path: b.text for b in blocks() if b.path}
    shipped = {str(p.relative_to(REPO)) for p in EXAMPLE.rglob("*") if p.is_file()
               and "__pycache__" not in p.parts}
    assert set(shown) == shipped
    for path, text in shown.items():
        assert (REPO / path).read_text() == text, path


@dataclass(frozen=True)
class Step:
    """One shell block of the tutorial, the output it printed, and the output shown after it."""

    commands: str
    printed: str
    shown: str


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Step]]:
    """Every ``sh`` block in order, in one shell, from the repository root.

    The tutorial's ``.venv/bin/`` is this interpreter's directory (the same jurat, whatever
    the virtual environment is called), and ``WORK`` is a directory of this test's. The
    configuration directories are the test's too: a run creates keys there.
    """
    work = tmp_path_factory.mktemp("work")
    found = blocks()
    steps: list[tuple[str, str]] = []
    for index, block in enumerate(found):
        if block.lang == "sh":
            after = found[index + 1] if index + 1 < len(found) else None
            steps.append((block.text, after.text if after and after.lang == "text" else ""))
    script = ""
    for number, (commands, _) in enumerate(steps):
        script += f"echo '@@step {number}@@'\n"
        script += commands.replace("WORK=$(mktemp -d)", f"WORK={work}")
    script = script.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
    env = {**os.environ, "XDG_CONFIG_HOME": str(work / "config"),
           "XDG_STATE_HOME": str(work / "state"), "COLUMNS": "200"}
    # Standard error into standard output: each step's output in the order it was printed,
    # as in a terminal (progress, errors and the report's line are on standard error).
    result = subprocess.run(["bash", "-c", "exec 2>&1\n" + script], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=600)
    printed = re.split(r"^@@step \d+@@\n", result.stdout, flags=re.M)[1:]
    assert len(printed) == len(steps), result.stdout + result.stderr
    return work, [Step(c, p, s) for (c, s), p in zip(steps, printed, strict=True)]


def _exits(text: str) -> list[str]:
    return re.findall(r"^exit \d+$", text, re.M)


def _verify_steps(text: str) -> list[str]:
    """``3. FAIL verify signature`` lines, as (number, status, name)."""
    return re.findall(r"^ {2}(\d)\. (ok|FAIL|--) +(\w[\w ]*?) {2}", text, re.M)


def test_every_command_exits_as_the_tutorial_says(session: tuple[Path, list[Step]]) -> None:
    _, steps = session
    assert len(steps) >= 8
    for step in steps:
        assert _exits(step.printed) == _exits(step.shown), step.commands + step.printed


def test_every_verification_step_shown_is_the_one_printed(
    session: tuple[Path, list[Step]]
) -> None:
    _, steps = session
    checked = 0
    for step in steps:
        shown = _verify_steps(step.shown)
        printed = {s[0]: s for s in _verify_steps(step.printed)}
        for number, status, name in shown:
            assert printed[number] == (number, status, name), step.commands
            checked += 1
    assert checked >= 4 * 4  # alice, the wrong artifact, the forgery, the re-signed forgery


def test_the_decisions_are_the_ones_the_tutorial_claims(
    session: tuple[Path, list[Step]]
) -> None:
    work, _ = session
    claimed = {}
    for name, decision, gates in re.findall(
            r"^ {2}\| (\w+) \| (accept|reject|escalate) \| (.*?) \|$", TUTORIAL.read_text(),
            re.M):
        claimed[name] = (decision, sorted(re.findall(r"[a-z]+\.[a-z]+", gates)))
    assert sorted(claimed) == ["alice", "bob", "carol", "dave", "erin", "frank", "grace",
                               "mallory"]
    for name, (decision, gates) in claimed.items():
        statement = read_statement((work / "receipts" / f"{name}.sigstore.json").read_bytes())
        recorded = statement["predicate"]["decision"]
        assert (recorded["disposition"], sorted(recorded["gates_failed"])) == (
            decision, gates), name


def test_the_campaign_with_mistakes_writes_nothing(session: tuple[Path, list[Step]]) -> None:
    work, steps = session
    broken = next(s for s in steps if "broken" in s.commands)
    assert "4 problems, listed by line" in broken.printed
    for line in broken.shown.splitlines()[1:]:
        if line.lstrip().startswith(("[", "fix:")):
            # The same problems, in the same words; only the scratch path differs.
            said = re.sub(r"/\S+/broken/", "", line)
            assert said in re.sub(r"/\S+/broken/", "", broken.printed), said
    assert not (work / "broken" / "jurat.db").exists()
    assert not (work / "broken" / "receipts").exists()


def test_the_report_shows_every_submission(session: tuple[Path, list[Step]]) -> None:
    work, _ = session
    page = (work / "report.html").read_text()
    rows = re.findall(r'<tr class="decision[^"]*"[^>]*data-artifact="(\w+)"', page)
    assert sorted(rows) == ["alice", "bob", "carol", "dave", "erin", "frank", "grace",
                            "mallory"]


#: What differs from one run to the next, and the placeholder each becomes on both sides
#: (besides the scratch directory): key hints and log ids (fresh keys), a receipt's digest (ECDSA
#: signatures are randomised), the payload's length (the order jobs end in), a ledger
#: entry's sequence number (likewise), and the sign of a correlation of zero.
_VARIES = [
    (re.compile(r"[A-Za-z0-9+/]{43}="), "<key>"),
    (re.compile(r"jurat\.local/log/[0-9a-f]{16}"), "jurat.local/log/<id>"),
    (re.compile(r"receipt sha256:[0-9a-f]{64}"), "receipt sha256:<receipt>"),
    (re.compile(r"\d+ payload bytes"), "<n> payload bytes"),
    (re.compile(r"^│ \d+ +│"), "│ <seq> │"),
    (re.compile(r"[-+]0\.00 "), "0.00 "),
]


#: The scratch directory as the tutorial shows it (``WORK=$(mktemp -d)``).
_SHOWN_WORK = "/tmp/tmp.50JHcBBMZp"


def _pasted(line: str, work: str) -> str:
    line = line.replace(work, "$WORK")
    for pattern, placeholder in _VARIES:
        line = pattern.sub(placeholder, line)
    return " ".join(line.split())


def test_every_pasted_line_is_one_the_command_prints(session: tuple[Path, list[Step]]) -> None:
    """Issue 29: the pasted output had drifted (jurat.fold/v1 for v2, 23 decision fields for
    24, 144 log entries for 69). Every line shown after a command is one it printed, but the
    progress bar, whose timing is the machine's."""
    work, steps = session
    checked = 0
    for step in steps:
        printed = {_pasted(line, str(work)) for line in step.printed.splitlines()}
        for line in step.shown.splitlines():
            if line.strip() in ("", "…") or ("━━━━" in line and " samples " in line):
                continue
            assert _pasted(line, _SHOWN_WORK) in printed, (step.commands, line)
            checked += 1
    assert checked > 100
