"""``jurat qualify CAMPAIGN``: measure each judge's repeatability and vote correlation.

Draws ``--samples`` K samples per item, per judge, in a burst and spaced ``--spacing-ms``
apart, in ``--windows`` time windows ``--pause`` seconds apart, through the judges engine
(``run_samples``, the one dispatch loop a run uses), then prints the figures of
jurat.qualify per judge (docs/qualify.md) and signs a qualification record
(jurat.qualify._record) with the receipts' key. Exit 0 measured and signed; 3 the campaign,
the key or an output could not be read or written, or a judge could not be called.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from jurat.campaign import load_campaign
from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.errors import ConfigError, JuratError
from jurat.fold import canonical_preference
from jurat.judges import Engine, plan_samples
from jurat.judges._sim import sim_truth
from jurat.models import Artifact, Campaign, EvidenceBundle, Policy, Vote
from jurat.qualify import Estimate, JudgeFigures, Sample, measure
from jurat.runner import intake_artifact, wide_console

__all__ = ["qualify_command"]

#: A stand-in for a sample of another cell: the engine skips recorded samples, so each
#: (window, mode) cell draws only its own sample indices through the one dispatch loop.
_OTHER_CELL = "qualify_other_cell"


def _widened(policy: Policy, total: int) -> Policy:
    """The policy with ``total`` samples per (judge, criterion) and no curtailment."""
    judges = tuple(j.model_copy(update={"samples": total}) for j in policy.judges)
    update: dict[str, object] = {"judges": judges}
    if policy.criteria is not None:
        update["criteria"] = policy.criteria.model_copy(
            update={"samples": total, "blocker_samples": total, "curtail": False})
    if policy.equivalence is not None:
        update["equivalence"] = policy.equivalence.model_copy(update={"votes": total})
    return policy.model_copy(update=update)


def _label(vote: Vote, kind: str) -> str | None:
    if vote.answer is None:
        return None
    if kind == "criteria":
        return str(vote.answer["verdict"])
    if kind == "pairwise":
        return canonical_preference(vote)
    if kind == "rubric":
        return str(vote.answer["disposition"])
    return str(vote.answer["decision"])


def campaign_n(policy: Policy) -> tuple[int, float]:
    """The campaign's N per judge (blocker N for criteria) and its blocker quorum."""
    if policy.criteria is not None:
        return policy.criteria.blocker_samples, policy.criteria.blocker_quorum
    if policy.kind == "equivalence" and policy.equivalence is not None:
        return policy.equivalence.votes, 0.8
    return max(j.samples for j in policy.judges), 0.8


async def draw(policy: Policy, artifacts: list[Artifact], *, samples: int, windows: int,
               spacing_ms: int, pause: float) -> list[Sample]:
    """Every qualification sample: windows x (burst, spaced) x K per (judge, criterion)."""
    cells = [(w, mode) for w in range(windows) for mode in ("burst", "spaced")]
    wide = _widened(policy, samples * len(cells))
    out: list[Sample] = []
    async with Engine() as engine:
        for w in range(windows):
            if w > 0 and pause > 0:
                await asyncio.sleep(pause)
            for mode in ("burst", "spaced"):
                cell = cells.index((w, mode))
                mine = range(cell * samples, (cell + 1) * samples)
                for artifact in artifacts:
                    others = [Vote(judge=p.judge.id, criterion=p.criterion, sample=p.sample,
                                   order=p.order, error=_OTHER_CELL)
                              for p in plan_samples(wide, artifact) if p.sample not in mine]
                    votes = await engine.run_samples(
                        wide, artifact, EvidenceBundle(), (), existing=others,
                        spacing_ms=spacing_ms if mode == "spaced" else 0)
                    out.extend(
                        Sample(judge=v.judge, item=artifact.sha256, criterion=v.criterion,
                               window=w, mode=mode, sample=v.sample,
                               label=_label(v, policy.kind), dispatch_ms=v.dispatch_ms)
                        for v in votes if v.error != _OTHER_CELL)
    return out


def gold_labels(policy: Policy, artifacts: list[Artifact]) -> dict[tuple[str, str], str]:
    """(artifact sha256, criterion) → the artifact's ``truth`` label, where it has one."""
    kind = "criterion" if policy.kind == "criteria" else policy.kind
    criteria = ([c.id for c in policy.criteria.items] if policy.criteria is not None
                else [policy.kind if policy.kind != "criteria" else ""])
    gold = {}
    for artifact in artifacts:
        for criterion in criteria:
            label = sim_truth(artifact, kind, criterion)
            if label is not None:
                gold[(artifact.sha256, criterion)] = label
    return gold


def _e(x: Estimate | None, pct: bool = False) -> str:
    if x is None or x.value is None:
        return "-"
    fmt = "{:.1%}" if pct else "{:.3f}"
    if x.low is None or x.high is None:
        return fmt.format(x.value)
    return f"{fmt.format(x.value)} [{fmt.format(x.low)}, {fmt.format(x.high)}]"


def _table(figures: list[JudgeFigures]) -> Table:
    table = Table(title="judge qualification (95% intervals; docs/qualify.md)")
    table.add_column("figure")
    for f in figures:
        table.add_column(escape(f.judge))
    rows: list[tuple[str, list[str]]] = [
        ("items / samples / errors", [f"{f.items} / {f.samples} / {f.errors}" for f in figures]),
        ("scored against", [f.reference for f in figures]),
        ("error rate", [_e(f.error_rate, True) for f in figures]),
        ("flip rate (mean [min, max])", [_e(f.flip_rate, True) for f in figures]),
        ("test-retest agreement", [_e(f.retest, True) for f in figures]),
        ("drift (positive rate, last - first window)", [_e(f.drift, True) for f in figures]),
        ("rho (all samples)", [_e(f.rho) for f in figures]),
        ("rho burst / spaced", [f"{_e(f.rho_burst)} / {_e(f.rho_spaced)}" for f in figures]),
        ("rho burst - spaced", [_e(f.rho_difference) for f in figures]),
        ("kappa vs gold (target 0.8)", [
            "-" if f.kappa is None else f"{_e(f.kappa)} {'met' if f.kappa_met else 'NOT met'}"
            for f in figures]),
        ("campaign N, quorum", [f"{f.campaign_samples}, {f.quorum}" for f in figures]),
        ("design effect", [_e(f.design_effect) for f in figures]),
        ("effective N", [_e(f.effective_n) for f in figures]),
        ("false block: binomial", [f"{f.false_block.binomial:.4f}" for f in figures]),
        ("false block: beta-binomial", [_e(f.false_block.beta_binomial) for f in figures]),
        ("false block: empirical", [_e(f.false_block.empirical) for f in figures]),
        ("false ship: binomial", [f"{f.false_ship.binomial:.4f}" for f in figures]),
        ("false ship: beta-binomial", [_e(f.false_ship.beta_binomial) for f in figures]),
        ("N for budget: binomial / at rho", [
            f"{f.budget_samples_binomial or 'none'} / {f.budget_samples or 'none'} "
            f"(budget {f.budget})" for f in figures]),
    ]
    for name, values in rows:
        table.add_row(name, *values)
    return table


def _store(url: str, record: bytes | None) -> None:
    from jurat.ledger import open_ledger
    from jurat.qualify._require import store_record
    from jurat.runner import ledger_url

    with open_ledger(ledger_url(url)) as ledger:
        if record is not None:
            store_record(ledger, record)


def qualify_command(path: Path, *, samples: int, windows: int, spacing_ms: int, pause: float,
                    budget: float, json_out: Path | None, record_out: Path | None,
                    key: Path | None, ledger_url: str | None = None) -> ExitCode:
    """Qualify every judge of the campaign's panel; see the module for the exit status."""
    from jurat.qualify._record import qualification_statement, sign_record

    console = wide_console()
    try:
        if samples < 2 or windows < 1 or spacing_ms < 0 or pause < 0:
            raise ConfigError("--samples must be >= 2, --windows >= 1, --spacing-ms and "
                              "--pause >= 0")
        campaign: Campaign = load_campaign(path)
        if ledger_url is not None:
            _store(ledger_url, None)  # a ledger that cannot be opened refuses before any call
        if campaign.datasets:
            raise ConfigError("jurat qualify reads [[artifacts]] only; list the "
                              "qualification items inline")
        artifacts = [intake_artifact(campaign, i) for i in range(len(campaign.artifacts))]
        if not artifacts:
            raise ConfigError(f"{path}: no [[artifacts]] to qualify on")
        policy = campaign.policy
        started = time.time()
        drawn = asyncio.run(draw(policy, artifacts, samples=samples, windows=windows,
                                 spacing_ms=spacing_ms, pause=pause))
        gold = gold_labels(policy, artifacts)
        n, quorum = campaign_n(policy)
        figures = [measure(j.id, policy.kind if policy.kind != "criteria" else "criterion",
                           drawn, gold, campaign_samples=n, quorum=quorum, budget=budget)
                   for j in policy.judges]
        statement = qualification_statement(
            policy, drawn, gold, figures, samples_per_cell=samples, windows=windows,
            spacing_ms=spacing_ms, pause=pause, budget=budget, started=started)
        record, digest = sign_record(statement, key)
        if record_out is not None:
            record_out.write_bytes(record)
        if ledger_url is not None:
            _store(ledger_url, record)
        if json_out is not None:
            json_out.write_text(json.dumps({
                "record_sha256": digest,
                "judges": [f.model_dump(mode="json") for f in figures]}, indent=2) + "\n",
                encoding="utf-8")
    except OSError as exc:
        return print_error(ConfigError(f"cannot write output: {exc.strerror or exc}"))
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    console.print(_table(figures))
    console.print(f"qualification record: sha256:{digest}"
                  + (f" ({escape(str(record_out))})" if record_out else "")
                  + (f"; stored in {escape(ledger_url)}" if ledger_url else ""),
                  soft_wrap=True)  # a digest or path cut in two cannot be copied
    return ExitCode.OK
