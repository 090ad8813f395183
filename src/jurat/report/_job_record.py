"""One job as the operator's ledger records it: what the hidden tests' run measured, every
judge answer with its raw text and rationale, and the reviews of its artifact.

The one reader of these entries for the two places that show them: ``jurat report
--operator`` (report/_operator.py) and the reviewer's view of ``jurat serve``
(service/_review.py), so both show the same thing.

Threat model. These records hold what no receipt does: the operator's record of the
sandboxed run (``checks_recorded``: numbers and enums, docs/ledger-format.md), text a judge
endpoint wrote (a sample's ``debug`` record, judges/_debug.py: at most ``RAW_CAP`` bytes,
and none when the prompt carried reference material) and a reviewer's private rationale.
They are for the operator and the reviewers only; each reader marks the text as untrusted
where it shows it (the report escapes it, the service sends it as JSON strings marked
``"untrusted": true``). The hidden tests' text and names are in none of them.
"""

from __future__ import annotations

from typing import Any

from jurat.canonical import loads_strict, sha256_digest
from jurat.errors import IntakeError, JuratError
from jurat.judges import SampleDebug
from jurat.ledger import Entry, Ledger, decode_receipt
from jurat.models import Adjudication, Vote, outcome_word
from jurat.models._base import Frozen
from jurat.receipts import read_decision_statement

__all__ = ["JobRecord", "JudgeAnswer", "RecordedChecks", "ReviewStep", "artifact_reviews",
           "job_record", "judge_answer", "review_step"]


class JudgeAnswer(Frozen):
    """One judge sample: the vote as the receipt records it, and what the judge sent."""

    ledger_seq: int
    """Its ``sample_recorded`` entry."""
    job_id: str
    """The ledger job of the sample (for ``jurat sample``)."""
    vote: Vote
    """The vote: its answer holds the judge's explanation by digest only."""
    debug: SampleDebug | None
    """The operator's debug record: the raw answer (capped), and why it was refused; None
    for a sample that got no answer or was recorded before jurat kept one (issue 28)."""
    rationale: str | None
    """The judge's explanation (its ``explanation`` member), when the raw answer is whole
    and its explanation is the one whose digest the vote records; else None."""


class RecordedChecks(Frozen):
    """The operator's record of the job's sandboxed gates (its last ``checks_recorded``)."""

    ledger_seq: int
    """Its ledger entry."""
    record_sha256: str
    """The commitment the receipt's gates carry (``record_sha256``)."""
    record: dict[str, Any]
    """The measurements (schema ``jurat.check-record/v1``): each test's outcome by index,
    counts, the run's outcome and reason, resources, coverage, mutants."""


class ReviewStep(Frozen):
    """One review version of an artifact, as its receipt entry records it."""

    ledger_seq: int
    """Its ``receipt`` entry."""
    version: int
    """Its review version."""
    job_id: str
    """The job it reviews (for an adjudicated review, the job it settled)."""
    disposition: str
    """The decision's word (``jurat.models.outcome_word``): its disposition, rollout
    (criteria) or equivalence word; ``missing`` when it has none."""
    adjudication: Adjudication | None
    """The reviewer's adjudication it records, rationale included (public or not)."""
    duplicate_of: str | None
    """The job that first submitted this work, when the receipt names one."""


class JobRecord(Frozen):
    """What the ledger holds about one job beyond its receipts."""

    job_id: str
    """The job."""
    checks: RecordedChecks | None
    """The hidden tests' run, when the job ran the sandboxed gates."""
    answers: tuple[JudgeAnswer, ...]
    """Every recorded sample, in ledger order."""


def judge_answer(entry: Entry) -> JudgeAnswer:
    """A ``sample_recorded`` entry read."""
    vote = Vote.model_validate(entry.payload["vote"])
    kept = entry.payload.get("debug")
    debug = None if kept is None else SampleDebug.model_validate(kept)
    return JudgeAnswer(ledger_seq=entry.seq, job_id=entry.job_id, vote=vote, debug=debug,
                       rationale=_rationale(vote, debug))


def _rationale(vote: Vote, debug: SampleDebug | None) -> str | None:
    """The explanation the vote binds by digest, read back from the raw answer with the
    validator's own parser (judges/_validate.py reads the whole text as one document)."""
    digest = (vote.answer or {}).get("explanation_sha256")
    if debug is None or debug.answer is None or debug.answer_capped or debug.whole_body \
            or not isinstance(digest, str):
        return None
    try:
        parsed = loads_strict(debug.answer)
    except ValueError:
        return None
    text = parsed.get("explanation") if isinstance(parsed, dict) else None
    return text if isinstance(text, str) and sha256_digest(text) == digest else None


def recorded_checks(ledger: Ledger, job_id: str) -> RecordedChecks | None:
    """The job's last ``checks_recorded`` entry (a resumed job runs its checks again; its
    receipt binds the last), or None."""
    last: Entry | None = None
    for last in ledger.entries(job_id=job_id, kind="checks_recorded"):  # noqa: B007
        pass
    if last is None:
        return None
    # Imported here: the checks are heavy, and only a ledger with a sandboxed run needs them.
    from jurat.checks import CheckRecord

    sealed = CheckRecord.model_validate(last.payload)
    return RecordedChecks(ledger_seq=last.seq, record_sha256=sealed.sha256,
                          record=sealed.record)


def job_record(ledger: Ledger, job_id: str) -> JobRecord:
    """The job's checks record and judge answers; the caller opens and closes the ledger."""
    answers = tuple(judge_answer(e) for e in ledger.entries(job_id=job_id,
                                                            kind="sample_recorded"))
    return JobRecord(job_id=job_id, checks=recorded_checks(ledger, job_id), answers=answers)


def review_step(entry: Entry) -> ReviewStep:
    """A ``receipt`` entry read as a review of its job."""
    try:
        statement = read_decision_statement(decode_receipt(entry.payload, seq=entry.seq))
    except JuratError as exc:
        raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
    predicate = statement.predicate
    decision = predicate.decision
    word = outcome_word(predicate.campaign.kind, disposition=decision.disposition,
                        rollout=decision.rollout, equivalent=decision.equivalent)
    adjudication = predicate.review.adjudication
    if "adjudicates" in entry.payload and adjudication is None:
        raise IntakeError(f"ledger entry {entry.seq}: names the job it adjudicates, but its "
                          "receipt records no adjudication")
    return ReviewStep(ledger_seq=entry.seq, version=predicate.review.version,
                      job_id=str(entry.payload.get("adjudicates", entry.job_id)),
                      disposition=word or "missing", adjudication=adjudication,
                      duplicate_of=predicate.inputs.duplicate_of)


def artifact_reviews(ledger: Ledger, campaign_id: str, artifact_id: str
                     ) -> tuple[ReviewStep, ...]:
    """Every review of the artifact (``artifact_id`` as the ledger records it), oldest
    first, whichever job each reviews."""
    return tuple(review_step(e) for e in ledger.entries(
        kind="receipt", campaign_id=campaign_id, artifact_id=artifact_id))
