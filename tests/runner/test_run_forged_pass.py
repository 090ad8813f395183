"""Candidates built to forge a pass are rejected by `jurat run`, whatever the hard gates.

Each candidate answers HumanEval/3 wrongly and then attacks the verdict: rewriting
pytest's reports through ``gc``, reaching modules through names the import policy
cannot see, returning an object that equals anything, patching builtins. The judges
are ``stub:always-accept``, so only the test verdict stands between them and an
accept. Run with and without ``python.imports`` as a hard gate: the import policy is
evidence, not the barrier.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.receipts import read_statement

from ._support import copy_example, jurat, keys, verify

WRONG = "    return len(operations) % 2 == 1\n"

FORGERS = {
    "gc-rewrite": """import gc, threading, time


def _rewrite():
    while True:
        for obj in gc.get_objects():
            if type(obj).__name__ in ("TestReport", "CallInfo"):
                try:
                    obj.outcome = "passed"
                    obj.excinfo = None
                except Exception:
                    pass
        time.sleep(0.001)


threading.Thread(target=_rewrite, daemon=True).start()


def below_zero(operations):
""" + WRONG,
    "attrgetter-modules": """import operator
import sys

_modules = operator.attrgetter("modules")(sys)
for _name, _module in list(_modules.items()):
    if _name.startswith(("_pytest", "pluggy")):
        for _attr in ("runtest", "from_item_and_call", "pytest_runtest_call"):
            if hasattr(_module, _attr):
                setattr(_module, _attr, lambda *a, **k: None)


def below_zero(operations):
""" + WRONG,
    "always-equal": """class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __bool__(self):
        return True


class Sly(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def below_zero(operations):
    return Anything() if operations else Sly(0)
""",
    "patch-builtins": """import builtins

builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.bool = lambda *a: True


def below_zero(operations):
""" + WRONG,
}


def _campaign(tmp: Path, hard_gates: list[str]) -> Path:
    campaign = copy_example("rubric", tmp)
    text = campaign.read_text()
    text = text.split("[[artifacts]]")[0]
    text = text.replace('provider = "sim"\n', 'provider = "stub:always-accept"\n')
    text = text.replace('allowed_destinations = ["sim"]', 'allowed_destinations = ["stub"]')
    text = text.replace(
        'hard_gates = ["python.parse", "python.imports", "tests.pass"]',
        f"hard_gates = {json.dumps(hard_gates)}",
    )
    contributions = campaign.parent / "contributions"
    for name, source in FORGERS.items():
        (contributions / f"{name}.py").write_text(source)
    artifacts = [("c1-canonical", "c1_canonical.py"), *((n, f"{n}.py") for n in FORGERS)]
    for artifact, path in artifacts:
        text += (
            f'\n[[artifacts]]\nid = "{artifact}"\npath = "contributions/{path}"\n'
            'contributor = "mallory"\ntask = "HumanEval/3"\ntruth = "accept"\n'
        )
    campaign.write_text(text)
    return campaign


@pytest.mark.parametrize(
    "hard_gates",
    [["python.parse", "python.imports", "tests.pass"], ["python.parse", "tests.pass"]],
    ids=["with-imports-gate", "without-imports-gate"],
)
def test_forged_passes_are_rejected(tmp_path: Path, hard_gates: list[str]) -> None:
    campaign = _campaign(tmp_path, hard_gates)
    key, pub = keys(tmp_path)
    out = tmp_path / "out"
    r = jurat("run", str(campaign), "--out", str(out), "--ledger", f"sqlite:///{tmp_path / 'l.db'}",
              "--key", str(key), "--quiet", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    for name in ["c1-canonical", *FORGERS]:
        receipt = out / f"{name}.sigstore.json"
        predicate = read_statement(receipt.read_bytes())["predicate"]
        tests_gate = next(g for g in predicate["gates"] if g["id"] == "tests.pass")
        if name == "c1-canonical":
            assert tests_gate["outcome"] == "pass"
            assert predicate["decision"]["disposition"] == "accept"
            continue
        assert tests_gate["outcome"] != "pass", name
        assert tests_gate["required"] is True
        assert predicate["decision"]["disposition"] == "reject", name
        checked = verify(receipt, pub, tmp_path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "reject" in checked.stdout.strip().splitlines()[-1]
