"""`jurat run` on a deep-AST and huge-input corpus: every artifact gets its receipt and the
run exits with its decisions, never 4 (issue 36, item 4; docs/checks.md, "A pathological
input")."""

from __future__ import annotations

import json
from pathlib import Path

from jurat.checks._answers import MAX_TEXT_CHARS
from jurat.checks._guard import MAX_AST_DEPTH, MAX_SOURCE_BYTES
from jurat.receipts import read_statement

from ._support import jurat, keys, verify

#: (source, the cause python.parse names, or None when it parses within the bounds)
CANDIDATES: dict[str, tuple[str, str | None]] = {
    "fine": ("def add(a, b):\n    return a + b\n", None),
    # 4 KB that ended the whole run with an internal RecursionError before issue 36.
    "issue-sum": ("X = " + "+".join(["1"] * 2000) + "\n", "input_too_deep"),
    "brackets": ("X = " + "(" * 300 + "1" + ")" * 300 + "\n", "input_too_deep"),
    "lambdas": ("X = " + "lambda: " * 5000 + "1\n", "input_too_deep"),
    "attributes": ("X = a" + ".b" * (MAX_AST_DEPTH + 10) + "\n", "input_too_deep"),
    "ifs": ("".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n",
            "input_too_deep"),
    "huge": ("x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1), "input_too_large"),
    "long-line": (f"X = '{'a' * (MAX_SOURCE_BYTES // 2)}'\n", None),
}

JUDGES = "".join(
    f'\n[[judges]]\nid = "sim-{n}"\nprovider = "sim"\nreliability = 0.95\nseed = {n}\n'
    f"samples = 3\n"
    for n in (1, 2, 3)
)

RUBRIC = """\
[campaign]
id = "deep-rubric"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "deep/1"
threshold = 0.5
hard_gates = ["python.parse", "python.imports"]
criteria = [{ id = "correctness", weight = 1.0 }]

[checks.python]
version = "3.11"
"""


def _run(campaign: Path, tmp: Path) -> tuple[int, dict[str, dict]]:  # type: ignore[type-arg]
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    assert "internal error" not in r.stderr and "RecursionError" not in r.stderr
    statements = {p.name.removesuffix(".sigstore.json"): read_statement(p.read_bytes())
                  for p in (tmp / "out").glob("*.sigstore.json")}
    return r.returncode, statements


def test_every_deep_or_huge_candidate_gets_its_receipt(tmp_path: Path) -> None:
    work = tmp_path / "campaign"
    work.mkdir()
    artifacts = ""
    for name, (source, _) in CANDIDATES.items():
        (work / f"{name}.py").write_text(source)
        artifacts += (f'\n[[artifacts]]\nid = "{name}"\npath = "{name}.py"\n'
                      'contributor = "c"\ntruth = "accept"\n')
    campaign = work / "campaign.toml"
    campaign.write_text(RUBRIC + JUDGES + artifacts)

    code, statements = _run(campaign, tmp_path)
    assert set(statements) == set(CANDIDATES)
    for name, (_, cause) in CANDIDATES.items():
        predicate = statements[name]["predicate"]
        parse = next(g for g in predicate["gates"] if g["id"] == "python.parse")
        decision = predicate["decision"]["disposition"]
        if cause is None:
            assert parse["outcome"] == "pass", name
            assert decision == "accept", name
        else:
            # A required gate that could not run: never shown to pass, so a person decides.
            assert (parse["outcome"], parse["detail"], parse["data"]["cause"]) == (
                "error", cause, cause), name
            assert decision == "escalate", name
    assert code == 1  # the escalations
    _, pub = keys(tmp_path)
    receipt = tmp_path / "out" / "issue-sum.sigstore.json"
    assert verify(receipt, pub, tmp_path).returncode == 0


EQUIVALENCE = """\
[campaign]
id = "deep-equivalence"
kind = "equivalence"
allowed_destinations = ["sim"]

[equivalence]
votes = 3
min_agreement = 2
deterministic_first = true

[[judges]]
id = "sim-eq"
provider = "sim"
reliability = 0.95
seed = 21
"""

#: Answers the deterministic pass must read within its caps, or leave to the judge.
ANSWERS: dict[str, str] = {
    "plain": "18 + 0 = 18\nA: 18",
    # "answer" and a run of blanks: minutes of regex backtracking before issue 36.
    "blanks": "The answer" + " " * (MAX_TEXT_CHARS - 100) + "is unclear",
    "stars": "answer " + "** " * ((MAX_TEXT_CHARS - 100) // 3),
    "boxes": "\\boxed{" * 14_000,
    "too-long": "1" * (MAX_TEXT_CHARS * 5),
}


def test_pathological_answers_leave_their_pairs_to_the_judge(tmp_path: Path) -> None:
    work = tmp_path / "campaign"
    work.mkdir()
    artifacts = "".join(
        f'\n[[artifacts]]\nid = "{name}"\na = {json.dumps(a)}\nb = "A: 18"\n'
        'truth = "EQUIVALENT"\n'
        for name, a in ANSWERS.items()
    )
    campaign = work / "campaign.toml"
    campaign.write_text(EQUIVALENCE + artifacts)

    _, statements = _run(campaign, tmp_path)
    assert set(statements) == set(ANSWERS)
    for name, statement in statements.items():
        gate = next(g for g in statement["predicate"]["gates"]
                    if g["id"] == "equivalence.deterministic")
        # Only the plain pair is settled before the judge; the others are left to it.
        assert gate["outcome"] == ("pass" if name == "plain" else "skip"), name
