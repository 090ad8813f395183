"""``jurat run --junit FILE``: the run as JUnit XML, the report format CI systems read.

The mapping (docs/ci.md, "JUnit"):

- one ``testsuite`` named after the campaign, one ``testcase`` per artifact judged
  (``classname`` the campaign id, ``name`` the artifact id);
- criteria campaigns add a ``testsuite`` ``<campaign>/criteria`` with one ``testcase``
  per artifact and criterion, named ``artifact/criterion`` (the worst stability gate of any
  judge); rubric campaigns add ``<campaign>/scores``, one per artifact and criterion that
  has a ``minimum``;
- a decision that stops the work (BLOCK, reject, different; a criterion's block; a score
  below its minimum) is a ``<failure>`` whose ``type`` is the decision word;
- a decision that needs a person (WARN, escalate, undecided; a criterion's warn) is an
  ``<error type="undecided">``: neither pass nor fail, and CI shows it apart from failures;
- no verdict (a criterion no judge was asked about because of a veto, a score nobody gave)
  is ``<skipped>``; SHIP, accept, equivalent and a criterion's pass are passes.

Messages and bodies are made of the decision word and the reason codes' words
(``Reason.text``): no artifact text, rationale or reference material (the trust rule).
The XML has the elements and attributes of the Jenkins / Ant JUnit schema that GitHub
Actions reporters, GitLab and Jenkins read; ``tests/runner/junit_ant.xsd`` checks it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from jurat._version import __version__
from jurat.fold import SuiteGateResult
from jurat.models import Campaign, policy_digest, tone_of
from jurat.runner._headline import Rate
from jurat.runner._results import ArtifactResult

__all__ = ["junit_xml"]

#: Characters XML 1.0 cannot hold, even escaped: replaced, so the file always parses.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


class _Suite:
    """One ``testsuite`` being built, with its counts."""

    def __init__(self, name: str) -> None:
        self.element = ET.Element("testsuite", name=_clean(name))
        self.tests = self.failures = self.errors = self.skipped = 0

    def case(self, classname: str, name: str, verdict: str, kind: str = "",
             message: str = "", body: str = "", receipt: str | None = None) -> None:
        """Add a testcase; ``verdict`` is pass, failure, error or skipped."""
        case = ET.SubElement(self.element, "testcase", name=_clean(name),
                             classname=_clean(classname))
        self.tests += 1
        if verdict != "pass":
            attributes = {"message": _clean(message)}
            if verdict != "skipped":
                attributes["type"] = _clean(kind)
            child = ET.SubElement(case, verdict, attributes)
            if body:
                child.text = _clean(body)
            self.failures += verdict == "failure"
            self.errors += verdict == "error"
            self.skipped += verdict == "skipped"
        if receipt is not None:
            ET.SubElement(case, "system-out").text = _clean(f"receipt: {receipt}")

    def finish(self, properties: Sequence[tuple[str, str]] = ()) -> ET.Element:
        """The element with its counts (and properties first, where the schema puts them)."""
        for key, count in (("tests", self.tests), ("failures", self.failures),
                           ("errors", self.errors), ("skipped", self.skipped)):
            self.element.set(key, str(count))
        if properties:
            block = ET.Element("properties")
            for name, value in properties:
                ET.SubElement(block, "property", name=name, value=_clean(value))
            self.element.insert(0, block)
        return self.element


def _decision_case(suite: _Suite, campaign_id: str, item: ArtifactResult) -> None:
    word = item.decision or "no decision"
    why = [r.text() for r in item.reasons]
    message = word + (f": {'; '.join(why)}" if why else "")
    tone = tone_of(item.decision)
    verdict = {"good": "pass", "bad": "failure", "hold": "error"}.get(tone, "skipped")
    kind = word if verdict == "failure" else "undecided"
    suite.case(campaign_id, item.id, verdict, kind, message, "\n".join(why), item.receipt)


def _criterion_cases(suite: _Suite, classname: str, item: ArtifactResult) -> None:
    for c in item.criteria:
        verdict = {"pass": "pass", "block": "failure", "warn": "error"}.get(c.gate, "skipped")
        why = [r.text() for r in item.reasons if r.criterion == c.criterion]
        message = c.gate if c.gate != "not_judged" else "not judged: " + "; ".join(
            r.text() for r in item.reasons if r.code in ("gate_not_passed", "judges_not_asked"))
        suite.case(classname, f"{item.id}/{c.criterion}", verdict,
                   "block" if verdict == "failure" else "undecided",
                   message + (f": {'; '.join(why)}" if why else ""), "\n".join(why))
    for s in item.scores:
        if s.score is None:
            suite.case(classname, f"{item.id}/{s.criterion}", "skipped",
                       message="no panel score")
        else:
            suite.case(classname, f"{item.id}/{s.criterion}",
                       "pass" if s.passed else "failure", "below_minimum",
                       f"score {s.score:g} below minimum {s.minimum}")


def junit_xml(campaign: Campaign, results: Sequence[ArtifactResult], rates: Sequence[Rate],
              gate: SuiteGateResult | None, *, status: int, meaning: str) -> str:
    """The run's JUnit XML document."""
    campaign_id = campaign.id
    decisions = _Suite(campaign_id)
    for item in results:
        _decision_case(decisions, campaign_id, item)
    properties = [
        ("jurat.version", __version__),
        ("jurat.campaign.kind", campaign.policy.kind),
        ("jurat.policy_sha256", policy_digest(campaign.policy)),
        *((f"jurat.headline.{r.name.replace(' ', '_')}", r.text()) for r in rates),
    ]
    if gate is not None:
        properties.append(("jurat.suite_gate", gate.text()))
    properties.append(("jurat.exit", f"{status}: {meaning}"))
    root = ET.Element("testsuites", name=_clean(f"jurat {campaign_id}"))
    suites = [decisions.finish(properties)]
    part = "criteria" if campaign.policy.kind == "criteria" else "scores"
    parts = _Suite(f"{campaign_id}/{part}")
    for item in results:
        _criterion_cases(parts, f"{campaign_id}.{item.id}", item)
    if parts.tests:
        suites.append(parts.finish())
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
