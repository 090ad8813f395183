"""Where the report's receipts come from: a directory of bundles, or a ledger.

Both read each receipt as the verifier does up to its statement (``read_decision_statement``:
verification's bounds, the payload type and step 4, schema and normal form), and neither
checks signatures (the page prints the commands that do). A ledger holds every review
version of every artifact, superseded ones included, in log order: the same enumeration
``jurat replay`` re-derives (``Ledger.receipts``, runner/_replay.py). A receipts directory
holds what ``jurat run --out`` wrote there.
"""

from __future__ import annotations

from pathlib import Path

from jurat.errors import IntakeError, JuratError
from jurat.ledger import Ledger
from jurat.receipts import read_decision_statement, receipt_path_for
from jurat.report._report_data import ReportReceipt

__all__ = ["load_receipt_files", "receipts_from_ledger"]


def load_receipt_files(out_dir: Path, *, key_path: Path | None = None) -> list[ReportReceipt]:
    """Read every ``*.sigstore.json`` bundle in ``out_dir`` (sorted by name) and its statement."""
    if not out_dir.is_dir():
        raise IntakeError(f"{out_dir}: not a directory (give the --out directory of `jurat run`)")
    key_text = str(key_path) if key_path is not None else None
    out = []
    for path in sorted(out_dir.glob("*.sigstore.json")):
        try:
            statement = read_decision_statement(path.read_bytes())
        except OSError as exc:
            raise IntakeError(f"{path}: unreadable: {exc.strerror}") from exc
        except JuratError as exc:
            raise IntakeError(f"{path}: not a jurat receipt: {exc}") from exc
        out.append(ReportReceipt(statement=statement, receipt_path=str(path), key_path=key_text))
    return out


def receipts_from_ledger(
    ledger: Ledger,
    *,
    source: str | None = None,
    out_dir: Path | None = None,
    key_path: Path | None = None,
) -> list[ReportReceipt]:
    """Every receipt in ``ledger``, every review version, in log order (bounded, not verified).

    ``source`` is the ledger as the user named it, for the ``jurat replay`` command that
    verifies a superseded review (pass a file or a URL without a password: the page is
    contributor-visible); ``out_dir`` is where ``jurat run --out`` wrote the current receipts,
    so their verify commands name real files. The caller opened the ledger and closes it.
    """
    read = []
    for entry, signed in ledger.receipts():
        try:
            read.append((entry, read_decision_statement(signed)))
        except JuratError as exc:
            raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
    latest: dict[tuple[str | None, str], int] = {}
    for entry, statement in read:
        key = (entry.campaign_id, statement.predicate.artifact.id)
        latest[key] = max(latest.get(key, 0), statement.predicate.review.version)
    key_text = str(key_path) if key_path is not None else None
    out = []
    for entry, statement in read:
        artifact_id, version = statement.predicate.artifact.id, statement.predicate.review.version
        # Only the current review has its file in --out: `jurat run` writes it over the last.
        is_current = version == latest[(entry.campaign_id, artifact_id)]
        path = (str(receipt_path_for(out_dir, artifact_id))
                if out_dir is not None and is_current else None)
        out.append(ReportReceipt(statement=statement, receipt_path=path, key_path=key_text,
                                 ledger=source, ledger_seq=entry.seq))
    return out
