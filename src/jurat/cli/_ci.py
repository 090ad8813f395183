"""``jurat run``'s results for CI: the exit status rule, the headline and gate lines, and the
``--json`` / ``--junit`` files (docs/ci.md).

The exit status is decided once, here, for the terminal and the files alike:

1. the decisions (any BLOCK or reject → 2, any WARN, escalate or undecided → 1, else 0), or,
   for a criteria or rubric campaign with ``[gate]``, the suite gate (0 holds, 2 fails);
2. then the overrides that need a person whatever was decided: a judge that errored on
   every sample → 1; a bias alarm turns a 0 into 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.fold import SuiteGateResult, suite_gate
from jurat.models import Campaign, MonitorBounds
from jurat.runner import JudgeHealth, RunTally
from jurat.runner._headline import MEASURES, Rate, headline
from jurat.runner._junit import junit_xml
from jurat.runner._run_result import (
    ExitRule,
    check_writable,
    dumps,
    run_result,
    write_atomically,
)

__all__ = ["MEANING", "CiFiles", "RunStatus", "Verdicts", "print_verdicts", "run_status",
           "verdicts", "write_files"]

#: What each decision status means, for the line that ends the summary.
MEANING = {
    ExitCode.OK: "every decision final: accepted, shipped or equivalence settled",
    ExitCode.ESCALATE: "a decision needs a person: escalate, WARN or undecided",
    ExitCode.REJECT: "at least one reject or BLOCK",
}


@dataclass(frozen=True)
class CiFiles:
    """Where ``--json`` and ``--junit`` write (None: not asked for)."""

    json: Path | None = None
    junit: Path | None = None

    def check(self) -> None:
        """Refuse, before anything is sent, a file that could not be written (ConfigError)."""
        if self.json is not None:
            check_writable(self.json, "--json")
        if self.junit is not None:
            check_writable(self.junit, "--junit")


@dataclass(frozen=True)
class Verdicts:
    """What the run says about the suite beyond each decision: headline rates and the gate."""

    rates: list[Rate]
    gate: SuiteGateResult | None


@dataclass(frozen=True)
class RunStatus:
    """The exit status, why, and which rule decided it."""

    code: ExitCode
    why: str
    rule: ExitRule


def verdicts(campaign: Campaign, tally: RunTally) -> Verdicts:
    """The headline rates and, with ``[gate]``, the suite gate over the run's decisions."""
    gate = None
    if campaign.gate is not None:
        gate = suite_gate(campaign.gate, campaign.policy.kind, tally.outcomes(), tally.artifacts)
    return Verdicts(headline(campaign.policy, tally.results), gate)


def print_verdicts(found: Verdicts, out: Console) -> None:
    """The headline (what it measures said once) and the suite gate, one line each."""
    out.print(f"headline, {MEASURES} (Wilson 95%):", highlight=False)
    for rate in found.rates:
        out.print(f"  {shown(rate.text())}", markup=False, highlight=False, soft_wrap=True)
    if found.gate is not None:
        out.print(shown(found.gate.text()) + " ([gate]: decides the exit status; not part of "
                  "the policy or any receipt)", markup=False, highlight=False, soft_wrap=True)


def run_status(tally: RunTally, health: Sequence[JudgeHealth], bounds: MonitorBounds,
               gate: SuiteGateResult | None = None) -> RunStatus:
    """The run's exit status (the module docstring's rule).

    A judge that errored on every sample (an endpoint down, a key refused) cast no vote, so
    the others decided without it; that is not a decision to act on unseen, whatever it
    was: 1, like an escalation.
    """
    rule: ExitRule
    if gate is None:
        code, rule = ExitCode.for_decisions(tally.decisions), "decisions"
        meaning = MEANING[code]
    else:
        code, rule = (ExitCode.OK if gate.holds else ExitCode.REJECT), "suite_gate"
        meaning = gate.text()
    dead = [shown(h.judge) for h in health if h.dead]
    if dead:
        return RunStatus(ExitCode.ESCALATE, (
            f"judge {', '.join(dead)} errored on every sample, so the decisions lack "
            f"{'its votes' if len(dead) == 1 else 'their votes'}; the "
            f"{'decisions' if gate is None else 'suite gate'} alone would exit {int(code)} "
            f"({meaning})"), "judge_dead")
    alarms = [a for b in tally.bias_readings() for a in b.alarms(bounds)]
    if alarms and code == ExitCode.OK:
        # An alarm changes no decision, but a biased judge's decisions need a person.
        return RunStatus(ExitCode.ESCALATE, (
            f"{len(alarms)} bias alarm{'s' if len(alarms) > 1 else ''} (above): a person "
            "should look before these decisions are acted on; the "
            f"{'decisions' if gate is None else 'suite gate'} alone would exit 0"),
            "bias_alarm")
    return RunStatus(code, meaning, rule)


def write_files(files: CiFiles, campaign: Campaign, tally: RunTally, found: Verdicts,
                status: RunStatus, *, run_id: str | None, campaign_artifacts: int,
                out: Console) -> None:
    """Write the files asked for, each whole or not at all, and say where."""
    if files.json is not None:
        document = run_result(campaign, tally, found.rates, found.gate,
                              status=int(status.code), rule=status.rule, meaning=status.why,
                              run_id=run_id, campaign_artifacts=campaign_artifacts)
        write_atomically(files.json, dumps(document), "--json")
        out.print(f"json: {files.json} (jurat.run-result/v1)", markup=False, highlight=False,
                  soft_wrap=True)
    if files.junit is not None:
        xml = junit_xml(campaign, list(tally.results), found.rates, found.gate,
                        status=int(status.code), meaning=status.why)
        write_atomically(files.junit, xml, "--junit")
        out.print(f"junit: {files.junit}", markup=False, highlight=False, soft_wrap=True)
