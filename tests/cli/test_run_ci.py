"""`jurat run --json FILE --junit FILE` and `[gate]` (issue 29): a CI-style run of a small
criteria suite writes a result valid under the shipped JSON Schema and a JUnit file that a
JUnit consumer library reads and the JUnit XSD accepts, and the suite gate decides the exit
status: 0 when it holds despite a BLOCK, 2 when it fails, and today's rule without it.
Neither file holds artifact text (the trust rule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import junitparser
import xmlschema

from jurat.runner._run_result import schema_path
from tests.cli._run_support import Run, run

XSD = Path(__file__).parents[1] / "runner" / "junit_ant.xsd"

#: One SHIP, one BLOCK (the blocker fails), one WARN (a non-blocker fails), one SHIP.
CAMPAIGN = """\
[campaign]
id = "suite"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "correct", text = "Is the answer correct?", blocker = true }},
         {{ id = "polite", text = "Is the reply polite?" }}]

[[judges]]
id = "s"
provider = "sim"
reliability = 1.0
seed = 3

[[artifacts]]
id = "a1"
text = "marker-one-7f3a Thank you, it is 4."
truth = {{ correct = "yes", polite = "yes" }}

[[artifacts]]
id = "a2"
text = "marker-two-9c1b It is 5."
truth = {{ correct = "no", polite = "yes" }}

[[artifacts]]
id = "a3"
text = "marker-three-2d8e Four, obviously."
truth = {{ correct = "yes", polite = "no" }}

[[artifacts]]
id = "a4"
text = "marker-four-4b6f Thanks: 4."
truth = {{ correct = "yes", polite = "yes" }}
{gate}"""

MARKERS = ("marker-one-7f3a", "marker-two-9c1b", "marker-three-2d8e", "marker-four-4b6f",
           "Is the answer correct?")


def _ci_run(root: Path, gate: str) -> tuple[Run, dict[str, Any], str]:
    campaign = root / "campaign.toml"
    campaign.write_text(CAMPAIGN.format(gate=gate))
    done = run(root, campaign, None, "--json", str(root / "result.json"),
               "--junit", str(root / "junit.xml"))
    result = json.loads((root / "result.json").read_text())
    return done, result, (root / "junit.xml").read_text()


def test_a_ci_run_writes_a_valid_json_result_and_junit_file(tmp_path: Path) -> None:
    done, result, xml = _ci_run(tmp_path, "\n[gate]\nmin_ship_rate = 0.5\nmax_block = 1\n")
    # The gate holds (2 of 4 ship, 1 block) although a2 BLOCKs: exit 0, said why.
    assert done.code == 0, done.out + done.err
    assert "exit status 0: suite gate holds: min_ship_rate = 0.5: ship rate 0.50 holds, " \
           "max_block = 1: 1 blocked holds" in done.out

    schema = json.loads(schema_path().read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(result)
    assert result["schema"] == "jurat.run-result/v1"
    assert [(a["id"], a["decision"]) for a in result["artifacts"]] == [
        ("a1", "SHIP"), ("a2", "BLOCK"), ("a3", "WARN"), ("a4", "SHIP")]
    blocked = result["artifacts"][1]
    assert blocked["reasons"] == [{"code": "criterion_not_passed", "judge": "s",
                                   "criterion": "correct", "verdict": "no",
                                   "stability": "block", "agree": 1, "samples": 1}]
    assert blocked["receipt"].endswith("a2.sigstore.json")
    assert (tmp_path / "out" / "a2.sigstore.json").exists()
    assert blocked["cost"] == {"calls": 2, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
    assert result["totals"]["outcomes"] == {"SHIP": 2, "WARN": 1, "BLOCK": 1}
    ship, correct, polite = result["headline"]
    assert (ship["metric"], ship["successes"], ship["n"]) == ("ship_rate", 2, 4)
    assert (correct["criterion"], correct["successes"]) == ("correct", 3)
    # Wilson 95% for 3 of 4 (E. B. Wilson 1927): [0.3006, 0.9544].
    assert round(correct["interval"]["low"], 4) == 0.3006
    assert round(correct["interval"]["high"], 4) == 0.9544
    assert "not of the judge" in ship["measures"]
    gate = result["suite_gate"]
    assert gate["holds"] and gate["declared"] == {"min_ship_rate": 0.5, "max_block": 1,
                                                  "max_warn": None}
    assert result["exit"] == {"status": 0, "rule": "suite_gate",
                              "meaning": "suite gate holds: min_ship_rate = 0.5: ship rate "
                                         "0.50 holds, max_block = 1: 1 blocked holds"}
    assert "pass rate correct 0.75 [0.30, 0.95] (n=4)" in done.out

    # The JUnit file, as a consumer library reads it and as the JUnit XSD accepts it.
    xmlschema.XMLSchema(str(XSD)).validate(str(tmp_path / "junit.xml"))
    report = junitparser.JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    suites = {suite.name: suite for suite in report}
    assert set(suites) == {"suite", "suite/criteria"}
    decisions = suites["suite"]
    assert (decisions.tests, decisions.failures, decisions.errors, decisions.skipped) == (
        4, 1, 1, 0)
    outcome = {case.name: [(type(r).__name__, r.type) for r in case.result]
               for case in decisions}
    assert outcome == {"a1": [], "a2": [("Failure", "BLOCK")], "a3": [("Error", "undecided")],
                       "a4": []}
    criteria = {case.name: [type(r).__name__ for r in case.result]
                for case in suites["suite/criteria"]}
    assert criteria["a2/correct"] == ["Failure"] and criteria["a3/polite"] == ["Error"]
    assert criteria["a2/polite"] == [] and len(criteria) == 8
    properties = {p.name: p.value for p in decisions.properties()}
    assert properties["jurat.headline.ship_rate"] == "ship rate 0.50 [0.15, 0.85] (n=4)"

    # The trust rule: no artifact text or criterion question in either file.
    for marker in MARKERS:
        assert marker not in xml and marker not in json.dumps(result)


def test_a_failing_gate_exits_2(tmp_path: Path) -> None:
    done, result, _ = _ci_run(tmp_path, "\n[gate]\nmax_block = 0\nmax_warn = 1\n")
    assert done.code == 2, done.out + done.err
    assert "exit status 2: suite gate fails: max_block = 0: 1 blocked FAILS, " \
           "max_warn = 1: 1 warned holds" in done.out
    assert result["exit"]["status"] == 2 and result["exit"]["rule"] == "suite_gate"
    assert [c["holds"] for c in result["suite_gate"]["checks"]] == [False, True]


def test_without_a_gate_the_decisions_decide(tmp_path: Path) -> None:
    done, result, _ = _ci_run(tmp_path, "")
    assert done.code == 2  # any BLOCK
    assert result["suite_gate"] is None
    assert result["exit"] == {"status": 2, "rule": "decisions",
                              "meaning": "at least one reject or BLOCK"}
    assert "suite gate" not in done.out


def test_a_bad_gate_value_exits_3_naming_the_field(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(CAMPAIGN.format(gate="\n[gate]\nmin_ship_rate = 1.5\n"))
    done = run(tmp_path, campaign, None, "--json", str(tmp_path / "result.json"))
    assert done.code == 3
    assert "gate.min_ship_rate" in done.err and "must be from 0.0 to 1.0, got 1.5" in done.err
    assert not done.has_ledger() and not (tmp_path / "result.json").exists()


def test_an_unwritable_result_path_exits_3_before_anything_is_sent(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(CAMPAIGN.format(gate=""))
    done = run(tmp_path, campaign, None, "--junit", str(tmp_path / "no-such-dir" / "j.xml"))
    assert done.code == 3
    assert "--junit" in done.err and "no-such-dir" in done.err
    assert not done.has_ledger()


RUBRIC = """\
[campaign]
id = "rub"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 0.5, minimum = 3 }, { id = "clarity", weight = 0.5 }]

[[judges]]
id = "A"
provider = "sim"
reliability = 1.0

[[judges]]
id = "B"
provider = "sim"
reliability = 1.0
seed = 2

[[judges]]
id = "C"
provider = "sim"
reliability = 1.0
seed = 3

[[artifacts]]
id = "good"
text = "marker-good-51ae"
truth = "accept"

[[artifacts]]
id = "bad"
text = "marker-bad-80c2"
truth = "reject"

[gate]
max_block = 1
"""


def test_a_rubric_suite_gate_reads_reject_as_block(tmp_path: Path) -> None:
    campaign = tmp_path / "rubric.toml"
    campaign.write_text(RUBRIC)
    done = run(tmp_path, campaign, None, "--json", str(tmp_path / "r.json"),
               "--junit", str(tmp_path / "r.xml"))
    assert done.code == 0, done.out + done.err  # one reject, max_block = 1
    result = json.loads((tmp_path / "r.json").read_text())
    jsonschema.Draft202012Validator(json.loads(schema_path().read_text())).validate(result)
    assert [(a["id"], a["decision"], a["reasons"]) for a in result["artifacts"]] == [
        ("good", "accept", [{"code": "votes_agree"}]),
        ("bad", "reject", [{"code": "below_minimum"}])]
    assert result["artifacts"][1]["scores"] == [
        {"criterion": "correctness", "score": 1.0, "minimum": 3, "passed": False}]
    assert [(r["metric"], r["criterion"], r["successes"]) for r in result["headline"]] == [
        ("accept_rate", None, 1), ("pass_rate", "correctness", 1)]
    assert (result["suite_gate"]["block"], result["suite_gate"]["holds"]) == (1, True)
    xmlschema.XMLSchema(str(XSD)).validate(str(tmp_path / "r.xml"))
    report = junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml"))
    scores = {case.name: [r.type for r in case.result] for suite in report
              if suite.name == "rub/scores" for case in suite}
    assert scores == {"good/correctness": [], "bad/correctness": ["below_minimum"]}
    assert "marker-" not in (tmp_path / "r.xml").read_text() + json.dumps(result)
