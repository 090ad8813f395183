"""What `--json` and `--junit` say of each artifact (issue 29): the fold's reasons become
codes (never the sentences), the headline rates count missing verdicts against the rate,
the JUnit mapping puts each outcome where CI reads it, and the progress bar's counters."""

from __future__ import annotations

from pathlib import Path

import xmlschema
from statsmodels.stats.proportion import proportion_confint

from jurat.campaign import campaign_from_dict
from jurat.cli._progress import spend_text
from jurat.explain import REASON_CODES, Reason, reason_codes
from jurat.fold import decide
from jurat.judges import combine
from jurat.judges._plan import plan_samples
from jurat.models import Decision, GateOutcome, Policy
from jurat.runner import JobResult
from jurat.runner._headline import headline
from jurat.runner._junit import junit_xml
from jurat.runner._progress import PricedProgress, planned_per_artifact
from jurat.runner._results import ArtifactResult, CriterionResult
from tests.support.builders import (
    artifact,
    criteria_case,
    equivalence_case,
    gates,
    pairwise_case,
    policy,
    rubric_case,
    vote,
)

XSD = Path(__file__).with_name("junit_ant.xsd")


def _job(decision: Decision, gates: list[GateOutcome] | None = None,
         judges_skipped: str | None = None) -> JobResult:
    return JobResult(artifact=artifact(), decision=decision, votes=[], gates=gates or [],
                     receipt_path="out/c1.sigstore.json", drawn_cost=combine(()),
                     reused_cost=combine(()), judges_skipped=judges_skipped)


def _codes(policy: Policy, job: JobResult) -> tuple[Reason, ...]:
    return reason_codes(policy, job.gates, job.decision,
                        judges_asked=job.judges_skipped is None)


def test_every_fold_reason_of_each_kind_has_a_code() -> None:
    for case in (rubric_case(), pairwise_case(), equivalence_case()):
        d = decide(case.policy, case.gates, case.votes)
        codes = [r.code for r in _codes(case.policy, _job(d))]
        assert codes and "other" not in codes, (d.kind, d.reasons)
        assert set(codes) <= set(REASON_CODES)


def test_criteria_reasons_name_the_criterion_and_the_counts() -> None:
    case = criteria_case()
    d = decide(case.policy, case.gates, case.votes)
    reasons = _codes(case.policy, _job(d))
    blocked = [r for r in reasons if r.criterion == "cites"]
    assert [r.to_json() for r in blocked] == [{
        "code": "criterion_not_passed", "judge": "A", "criterion": "cites", "verdict": "no",
        "stability": "block", "agree": 4, "samples": 5}]
    assert blocked[0].text() == "A/cites: block (no, 4/5)"


def test_a_failed_required_gate_is_a_code_with_its_outcome() -> None:
    case = rubric_case()
    failing = gates(ok=False)
    d = decide(case.policy, failing, case.votes)
    job = _job(d, failing, "required gate tests.pass did not pass (a veto)")
    reasons = [r.to_json() for r in _codes(case.policy, job)]
    assert reasons[:2] == [
        {"code": "gate_not_passed", "gate": "tests.pass", "outcome": "fail"},
        {"code": "judges_not_asked", "outcome": "veto"}]
    # The fold's veto sentence (which may carry a check's detail) is not copied.
    assert not any("required gate" in str(value) for r in reasons for value in r.values())


def _results(decisions: list[str | None], criteria: list[tuple[str, ...]] = ()) -> list[
        ArtifactResult]:
    out = []
    for i, word in enumerate(decisions):
        gates_of = criteria[i] if criteria else ()
        out.append(ArtifactResult(
            index=i, id=f"a{i}", decision=word, reasons=(), receipt=f"out/a{i}.json",
            review_version=1, reused=False, judged=True, calls=1, input_tokens=0,
            output_tokens=0, usd=None,
            criteria=tuple(CriterionResult(c, g) for c, g in zip(("c1", "c2"), gates_of,
                                                                  strict=False))))
    return out


def test_the_equivalent_rate_counts_undecided_against_it() -> None:
    pol = policy("equivalence", judges=1, samples=1)
    [rate] = headline(pol, _results(["equivalent"] * 3 + ["undecided", "different"]))
    assert (rate.metric, rate.successes, rate.n, rate.unsettled) == ("equivalent_rate", 3, 5, 1)
    low, high = proportion_confint(3, 5, alpha=0.05, method="wilson")
    assert abs(rate.low - low) < 1e-9 and abs(rate.high - high) < 1e-9  # type: ignore[operator]
    assert rate.text() == (f"equivalent rate 0.60 [{low:.2f}, {high:.2f}] "
                           "(n=5; 1 undecided, counted as not)")


def test_a_criterion_no_judge_was_asked_about_does_not_pass() -> None:
    pol = policy("criteria", judges=1, samples=1)
    rates = headline(pol, _results(
        ["SHIP", "BLOCK", "WARN"],
        [("pass", "pass"), ("not_judged", "not_judged"), ("pass", "warn")]))
    assert [(r.name, r.successes, r.n, r.unsettled) for r in rates] == [
        ("ship rate", 1, 3, 0), ("pass rate c1", 2, 3, 1), ("pass rate c2", 1, 3, 1)]


def test_the_junit_mapping(tmp_path: Path) -> None:
    data = {"campaign": {"id": "m", "kind": "criteria", "allowed_destinations": ["sim"]},
            "criteria": {"items": [{"id": "c1", "text": "?", "blocker": True},
                                   {"id": "c2", "text": "?"}]},
            "judges": [{"id": "s", "provider": "sim"}],
            "artifacts": [{"id": "x", "text": "t"}]}
    campaign = campaign_from_dict(data)
    results = _results(["SHIP", "WARN", "BLOCK", None],
                       [("pass", "pass"), ("pass", "warn"), ("not_judged", "not_judged"),
                        ("pass", "pass")])
    xml = junit_xml(campaign, results, headline(campaign.policy, results), None,
                    status=2, meaning="at least one reject or BLOCK")
    path = tmp_path / "j.xml"
    path.write_text(xml)
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    assert '<error message="WARN" type="undecided"' in xml
    assert '<failure message="BLOCK" type="BLOCK"' in xml
    assert '<testcase name="a3" classname="m">\n      <skipped message="no decision"' in xml
    assert '<testcase name="a2/c1" classname="m.a2">\n      <skipped' in xml
    assert '<testsuite name="m/criteria" tests="8" failures="0" errors="1" skipped="2">' in xml


def test_planned_samples_match_the_plan() -> None:
    for case in (rubric_case(), pairwise_case(), equivalence_case(), criteria_case()):
        assert planned_per_artifact(case.policy) == len(plan_samples(case.policy, artifact()))


def test_a_sample_at_an_unknown_price_makes_the_spend_unknown() -> None:
    counters = PricedProgress()
    counters.vote(vote("A", 0, None, "rubric"), 0.25)
    assert (counters.unpriced, spend_text(counters.spend_usd, counters.unpriced)) == (
        0, "$0.2500")
    counters.vote(vote("A", 1, None, "rubric"), None)
    assert counters.samples == 2 and counters.unpriced == 1
    assert spend_text(counters.spend_usd, counters.unpriced) == "unknown"
