"""``jurat run --json FILE``: the run's result for CI, schema ``jurat.run-result/v1``.

One JSON document: every artifact (id, decision, reasons as codes, receipt, review, cost),
the run's totals, the headline rates with their Wilson intervals, the suite gate and the
exit status. Its JSON Schema (Draft 2020-12) ships beside this module,
``run_result_v1.schema.json``; docs/ci.md documents every field. The schema is closed
(no field it does not name): a new field or a changed meaning is a new schema version.

Trust rule: what ``runner/_results.py`` keeps, and nothing else: operator ids, jurat's
enums, counts and range-checked numbers; never artifact text, judge rationales,
explanations, hidden tests or reference material.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from jurat._version import __version__
from jurat.errors import ConfigError, JuratError
from jurat.fold import SuiteGateResult
from jurat.models import Campaign, policy_digest
from jurat.runner._headline import CONFIDENCE, MEASURES, Rate
from jurat.runner._results import ArtifactResult
from jurat.runner._summary import RunTally

__all__ = [
    "RUN_RESULT_SCHEMA",
    "ExitRule",
    "check_writable",
    "dumps",
    "run_result",
    "schema_path",
    "write_atomically",
]

#: The ``schema`` value of every result this module writes.
RUN_RESULT_SCHEMA = "jurat.run-result/v1"

ExitRule = Literal["decisions", "suite_gate", "judge_dead", "bias_alarm"]
"""What decided the exit status: the decisions (any BLOCK/reject → 2, any WARN/escalate/
undecided → 1), the campaign's ``[gate]``, or an override that turns a 0 (or, for a judge
that never answered, any status) into 1."""


def schema_path() -> Path:
    """The shipped JSON Schema of ``jurat.run-result/v1``."""
    return Path(__file__).with_name("run_result_v1.schema.json")


def _artifact(item: ArtifactResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": item.id,
        "decision": item.decision,
        "reasons": [r.to_json() for r in item.reasons],
        "receipt": item.receipt,
        "review_version": item.review_version,
        "reused": item.reused,
        "judged": item.judged,
        "cost": {"calls": item.calls, "input_tokens": item.input_tokens,
                 "output_tokens": item.output_tokens, "usd": item.usd},
    }
    if item.criteria:
        out["criteria"] = [{"criterion": c.criterion, "gate": c.gate} for c in item.criteria]
    if item.scores:
        out["scores"] = [{"criterion": s.criterion, "score": s.score, "minimum": s.minimum,
                          "passed": s.passed} for s in item.scores]
    return out


def _rate(rate: Rate) -> dict[str, Any]:
    return {
        "metric": rate.metric,
        "criterion": rate.criterion,
        "successes": rate.successes,
        "n": rate.n,
        "unsettled": rate.unsettled,
        "rate": rate.rate,
        "interval": {"method": "wilson", "confidence": CONFIDENCE, "low": rate.low,
                     "high": rate.high},
        "measures": MEASURES,
        "text": rate.text(),
    }


def _gate(result: SuiteGateResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "declared": result.gate.model_dump(mode="json"),
        "artifacts": result.artifacts,
        "ship": result.ship,
        "warn": result.warn,
        "block": result.block,
        "checks": [{"bound": c.bound, "limit": c.limit, "value": c.value, "holds": c.holds}
                   for c in result.checks],
        "holds": result.holds,
    }


def run_result(campaign: Campaign, tally: RunTally, rates: Sequence[Rate],
               gate: SuiteGateResult | None, *, status: int, rule: ExitRule, meaning: str,
               run_id: str | None = None, campaign_artifacts: int | None = None,
               ) -> dict[str, Any]:
    """The ``jurat.run-result/v1`` document of a finished run."""
    total = tally.drawn_cost.total
    return {
        "schema": RUN_RESULT_SCHEMA,
        "jurat_version": __version__,
        "campaign": {"id": campaign.id, "kind": campaign.policy.kind,
                     "policy_sha256": policy_digest(campaign.policy)},
        "run_id": run_id,
        "artifacts": [_artifact(item) for item in tally.results],
        "totals": {
            "artifacts": tally.artifacts,
            "campaign_artifacts": campaign_artifacts,
            "outcomes": tally.outcomes(),
            "judge_calls": {"drawn": tally.drawn_calls, "reused": tally.reused_calls},
            "cost": {"calls": total.calls, "input_tokens": total.input_tokens,
                     "output_tokens": total.output_tokens, "usd": total.usd},
        },
        "headline": [_rate(r) for r in rates],
        "suite_gate": _gate(gate),
        "exit": {"status": status, "rule": rule, "meaning": meaning},
    }


def check_writable(path: Path, option: str) -> None:
    """Refuse, before anything is sent, a result file that could not be written at the end:
    its directory must exist and be writable, and the path must not be a directory."""
    parent = path.parent
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory (fix: a file path)")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ConfigError(f"{option} {path}: cannot write in {parent} (fix: an existing, "
                          "writable directory)")


def write_atomically(path: Path, text: str, option: str) -> None:
    """Write ``text`` whole or not at all: a CI step never reads half a result."""
    temporary: Path | None = None
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                         prefix=f".{path.name}.", delete=False) as handle:
            temporary = Path(handle.name)
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise JuratError(f"{option} {path}: cannot write: {exc.strerror}") from exc


def dumps(document: dict[str, Any]) -> str:
    """The document as the file holds it: indented, keys in the order above."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
