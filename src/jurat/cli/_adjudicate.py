"""``jurat adjudicate LEDGER JOB``: settle an escalated decision without the server.

The same rules as ``POST /v1/jobs/{id}/adjudication`` (service/_adjudication.py): a new
signed review version with ``review.adjudication``, superseding the job's latest receipt,
appended to the ledger and written to ``--out``. Works for jobs of `jurat run` and of
`jurat serve` (a running server learns of it when it restarts).

Like `jurat run` at its end, it then signs a checkpoint with the log key and writes the new
review's inclusion proof beside its receipt, so the command it prints verifies all eight
steps (docs/receipt-format.md §12): a review without a proof could be shown to be signed,
not to be in the log.
"""

from __future__ import annotations

from pathlib import Path

from jurat.cli._exit import ExitCode
from jurat.errors import ConfigError
from jurat.models._invalid import Words, invalid
from jurat.models._problems import Loc

__all__ = ["adjudicate_command"]


class _Flags(Words):
    """An ``Adjudication`` field as the command line spells it: ``--disposition``."""

    def place(self, loc: Loc) -> Loc:
        return (f"--{loc[0]}", *loc[1:]) if loc else ()


def adjudicate_command(ledger_url: str, job: str, *, disposition: str, rationale: str,
                       reviewer: str, key_path: Path | None, out: Path | None,
                       log_key: Path | None = None, rationale_public: bool = False,
                       review_version: int | None = None) -> ExitCode:
    """Sign and record the adjudicated review, sign a checkpoint and prove the review in it;
    print where its receipt was written, its ledger entry and the command that verifies it."""
    import pydantic

    from jurat.cli._keys import check_log_key, choose_log_key, open_log_signer
    from jurat.ledger import decode_receipt, open_ledger
    from jurat.models import Adjudication
    from jurat.receipts import load_or_create_default_key, load_private_key, proof_path_for
    from jurat.runner import write_proofs
    from jurat.service._adjudication import adjudicated_receipt
    from jurat.service._errors import ServiceRefusal
    from jurat.service._jobs import adjudication_job
    from jurat.service._service import now_utc

    given = {"reviewer": reviewer, "at": now_utc(), "disposition": disposition,
             "rationale": rationale, "rationale_public": rationale_public}
    try:
        # The record checks the word; a wrong one is the ValidationError below.
        adjudication = Adjudication.model_validate(given)
    except pydantic.ValidationError as exc:
        raise invalid(exc, Adjudication, given, ConfigError, words=_Flags(),
                      fix="--disposition accept|reject, a non-empty --rationale and "
                          "--reviewer") from exc
    key, key_file = ((load_private_key(key_path), key_path) if key_path
                     else load_or_create_default_key()[:2])
    # The log key as `jurat run` finds it (--log-key, else beside --key, else the default).
    log_choice = choose_log_key(log_key, key_path)
    check_log_key(log_choice)
    with open_ledger(ledger_url, create=False) as ledger:
        # Held against the ledger's checkpoints before anything is appended: a key that
        # cannot sign the next checkpoint would leave a review no proof can be made for.
        log = open_log_signer(log_choice, ledger)
        receipts = list(ledger.entries(kind="receipt", job_id=job))
        # A service job's later reviews are receipts of their own ledger jobs.
        receipts += [e for e in ledger.entries(kind="receipt")
                     if e.payload.get("adjudicates") == job]
        if not receipts:
            raise ConfigError(f"job {job}: no receipt in {ledger.url} (fix: the job_id of a "
                              "decided job, as the receipt's inputs.job_id records it)")
        latest = max(receipts, key=lambda e: e.seq)
        if latest.campaign_id is None or latest.artifact_id is None:
            raise ConfigError(f"job {job}: its receipt names no campaign or artifact")
        signed = decode_receipt(latest.payload, seq=latest.seq)
        slot = ledger.next_review(latest.campaign_id, latest.artifact_id)
        try:
            new, decision = adjudicated_receipt(signed, slot, adjudication, key,
                                                read=review_version)
        except ServiceRefusal as exc:
            raise ConfigError(exc.diagnostics()) from exc
        ledger_job = adjudication_job(job, slot.version)
        ledger.append("decision", ledger_job, decision.model_dump(mode="json"),
                      campaign_id=latest.campaign_id, artifact_id=latest.artifact_id)
        entry = ledger.append_receipt(ledger_job, new, campaign_id=latest.campaign_id,
                                      artifact_id=latest.artifact_id, review=slot,
                                      extra={"adjudicates": job})
        path = out or Path(f"{latest.artifact_id.replace(':', '_')}.v{slot.version}"
                           ".sigstore.json")
        path.write_bytes(new)
        write_proofs(ledger, [(entry.seq, str(path))], ledger.checkpoint(log.signer))
        checkpoint = ledger.checkpoint_path
    if log.created:
        print(f"created a log key at {log.path} (public half beside it)", flush=True)
    log_public = log.public_path or log.signer.verifier_key()
    print(f"review version {slot.version}: {decision.disposition} (adjudicated by {reviewer}); "
          f"receipt {path}", flush=True)
    print(f"ledger entry {entry.seq} (job {ledger_job}, adjudicates {job}); checkpoint: "
          f"{checkpoint}; proof: {proof_path_for(path)}", flush=True)
    print(f"verify:   jurat verify {path} --key {key_file.with_suffix('.pub')} --checkpoint "
          f"{checkpoint} --log-key {log_public}", flush=True)
    return ExitCode.OK
