"""``jurat diff BASE NEW``: which artifacts changed decision or reasons between two runs.

A side is a ledger (a file or a URL), a receipts directory (``jurat run --out``) or a run
result (``jurat run --json``, ``jurat.run-result/v1``). Each gives, per artifact, its
current decision, its reasons as codes (``jurat.explain``, the codes the CI files carry)
and its receipt. Artifacts are matched by campaign and id; with ``campaign`` (and
``base_campaign``) one campaign of each side is compared by artifact id alone, so two
versions of a suite kept as two campaigns of one ledger compare too.

Trust rule: a diff is a trusted output (CI reads it, the HTML is shown to people), so it
holds what the CI files hold: operator ids, decision words, reason codes with the signed
policy's ids and counts, receipt paths or ledger positions; never text the judged party
wrote, rationales or reference material.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from jurat.canonical import loads_strict
from jurat.errors import ConfigError, IntakeError, JuratError
from jurat.models import Frozen
from jurat.report._codes import reason_codes
from jurat.report._report_data import ReportReceipt
from jurat.report._sources import load_receipt_files, receipts_from_ledger

__all__ = ["DIFF_SCHEMA", "Diff", "DiffEntry", "DiffRow", "Side", "compare", "diff_json",
           "read_side", "reason_text"]

#: The ``schema`` of ``jurat diff --json``.
DIFF_SCHEMA = "jurat.diff/v1"
_RUN_RESULT = "jurat.run-result/v1"
#: A run result larger than this is not one jurat wrote for CI (about 200 bytes per artifact).
_MAX_RESULT_BYTES = 512 * 1024 * 1024

Change = Literal["decision", "reasons", "added", "removed"]


class DiffEntry(Frozen):
    """One artifact's current verdict on one side."""

    campaign: str
    """The campaign id."""
    artifact: str
    """The artifact id."""
    decision: str | None
    """Its decision word (accept, SHIP, ...); None when the run had none for it."""
    reasons: tuple[dict[str, str | int], ...]
    """Its reasons as codes, in the decision's order (docs/ci.md, "Reason codes")."""
    receipt: str | None
    """Its receipt: a file, or ``<ledger> entry <seq>``; None when unknown."""
    review_version: int
    """The review version of that receipt."""


class Side(Frozen):
    """What one side of a diff holds."""

    source: str
    """The side as the user named it."""
    kind: Literal["ledger", "receipts", "run-result"]
    """What it turned out to be."""
    entries: tuple[DiffEntry, ...]
    """Current verdicts, one per artifact."""


class DiffRow(Frozen):
    """An artifact that changed."""

    campaign: str
    """The campaign id (the new side's, when campaigns were named)."""
    artifact: str
    """The artifact id."""
    change: Change
    """decision: its decision changed; reasons: only its reasons did; added / removed: it
    is on one side only."""
    base: DiffEntry | None
    """Its verdict on the base side; None when added."""
    new: DiffEntry | None
    """Its verdict on the new side; None when removed."""


class Diff(Frozen):
    """The comparison of two sides."""

    base: Side
    """The base side (before the change)."""
    new: Side
    """The new side (after it)."""
    compared: int
    """Artifacts on both sides."""
    rows: tuple[DiffRow, ...]
    """What changed: decision changes first, then reasons, added, removed; by id within."""

    def count(self, change: Change) -> int:
        """How many rows have that change."""
        return sum(1 for r in self.rows if r.change == change)


def _from_receipts(receipts: Sequence[ReportReceipt], ledger: str | None) -> list[DiffEntry]:
    latest: dict[tuple[str, str], tuple[int, int, DiffEntry]] = {}
    for order, receipt in enumerate(receipts):
        p = receipt.statement.predicate
        where = (receipt.receipt_path if receipt.receipt_path is not None and ledger is None
                 else f"{ledger} entry {receipt.ledger_seq}" if receipt.ledger_seq is not None
                 else receipt.receipt_path)
        entry = DiffEntry(campaign=p.campaign.id, artifact=p.artifact.id,
                          decision=p.decision.outcome,
                          reasons=tuple(r.to_json() for r in reason_codes(p)),
                          receipt=where, review_version=p.review.version)
        key = (entry.campaign, entry.artifact)
        # The highest review version is current; among equals (a new job for the same id
        # after a policy change), the later one in the log.
        rank = (p.review.version, order)
        if key not in latest or rank >= latest[key][:2]:
            latest[key] = (*rank, entry)
    return [e for _, _, e in latest.values()]


def _from_result(path: Path) -> list[DiffEntry]:
    try:
        if path.stat().st_size > _MAX_RESULT_BYTES:
            raise IntakeError(f"{path}: larger than {_MAX_RESULT_BYTES} bytes: not a run result")
        doc = loads_strict(path.read_bytes(), max_bytes=_MAX_RESULT_BYTES)
    except OSError as exc:
        raise IntakeError(f"{path}: unreadable: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise IntakeError(f"{path}: not JSON ({exc}); give a file `jurat run --json` "
                          "wrote, a receipts directory or a ledger") from exc
    _check_result(doc, path)
    campaign = str(doc["campaign"]["id"])
    return [DiffEntry(campaign=campaign, artifact=str(a["id"]), decision=a["decision"],
                      reasons=tuple(a["reasons"]), receipt=a["receipt"],
                      review_version=int(a["review_version"])) for a in doc["artifacts"]]


def _check_result(doc: Any, path: Path) -> None:
    import jsonschema

    from jurat.runner._run_result import schema_path

    if not isinstance(doc, dict) or doc.get("schema") != _RUN_RESULT:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise IntakeError(f"{path}: schema is {found!r}, not {_RUN_RESULT!r} (fix: give a "
                          "file `jurat run --json` wrote)")
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise IntakeError(f"{path}: {where}: {error.message} (the file is not a "
                          f"{_RUN_RESULT} document as `jurat run --json` writes it)")


def read_side(source: str) -> Side:
    """One side: a run result file (``.json``), a receipts directory, or a ledger."""
    from jurat.ledger import open_ledger
    from jurat.runner import ledger_url

    path = Path(source)
    if path.is_dir():
        return Side(source=source, kind="receipts",
                    entries=tuple(_from_receipts(load_receipt_files(path), None)))
    if path.suffix == ".json" and path.is_file():
        return Side(source=source, kind="run-result", entries=tuple(_from_result(path)))
    try:
        with open_ledger(ledger_url(source), create=False) as ledger:
            receipts = receipts_from_ledger(ledger, source=source)
    except JuratError as exc:
        raise IntakeError(f"{source}: {exc} (fix: give a ledger, a receipts directory "
                          "or a `jurat run --json` file)") from exc
    return Side(source=source, kind="ledger", entries=tuple(_from_receipts(receipts, source)))


def _only(side: Side, campaign: str | None, option: str) -> dict[str, DiffEntry]:
    if campaign is None:
        return {f"{e.campaign}\0{e.artifact}": e for e in side.entries}
    picked = {e.artifact: e for e in side.entries if e.campaign == campaign}
    if not picked:
        held = sorted({e.campaign for e in side.entries})
        raise ConfigError(f"{option} {campaign}: {side.source} has no verdict of that "
                          f"campaign (it has: {', '.join(held) or 'none'})")
    return picked


_ORDER: dict[Change, int] = {"decision": 0, "reasons": 1, "added": 2, "removed": 3}


def compare(base: Side, new: Side, *, campaign: str | None = None,
            base_campaign: str | None = None) -> Diff:
    """What changed from ``base`` to ``new``. ``campaign`` names the campaign compared on
    the new side and, unless ``base_campaign`` is given, on the base side too."""
    if base_campaign is not None and campaign is None:
        raise ConfigError("--base-campaign needs --campaign (fix: name the new side's "
                          "campaign too)")
    before = _only(base, base_campaign or campaign, "--base-campaign" if base_campaign
                   else "--campaign")
    after = _only(new, campaign, "--campaign")
    rows: list[DiffRow] = []
    for key in sorted(before.keys() | after.keys()):
        b, n = before.get(key), after.get(key)
        change: Change | None = (
            "added" if b is None else "removed" if n is None
            else "decision" if b.decision != n.decision
            else "reasons" if b.reasons != n.reasons else None)
        if change is not None:
            shown = n or b
            assert shown is not None
            rows.append(DiffRow(campaign=shown.campaign, artifact=shown.artifact,
                                change=change, base=b, new=n))
    rows.sort(key=lambda r: (_ORDER[r.change], r.campaign, r.artifact))
    return Diff(base=base, new=new, compared=len(before.keys() & after.keys()),
                rows=tuple(rows))


def _entry(e: DiffEntry | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"decision": e.decision, "reasons": list(e.reasons), "receipt": e.receipt,
            "review_version": e.review_version}


def diff_json(diff: Diff) -> dict[str, Any]:
    """``jurat diff --json`` (docs/ci.md, "jurat diff")."""
    return {
        "schema": DIFF_SCHEMA,
        "base": {"source": diff.base.source, "kind": diff.base.kind,
                 "artifacts": len(diff.base.entries)},
        "new": {"source": diff.new.source, "kind": diff.new.kind,
                "artifacts": len(diff.new.entries)},
        "compared": diff.compared,
        "changed": {change: diff.count(change) for change in _ORDER},
        "rows": [{"campaign": r.campaign, "artifact": r.artifact, "change": r.change,
                  "base": _entry(r.base), "new": _entry(r.new)} for r in diff.rows],
    }


def reason_text(reasons: Iterable[dict[str, str | int]]) -> str:
    """Reason codes in a few words, as the terminal and the page show them."""
    from jurat.explain import Reason

    shown = []
    for r in reasons:
        try:
            shown.append(Reason(**r).text())  # type: ignore[arg-type]
        except TypeError:
            shown.append(str(r.get("code", "other")))
    return ", ".join(shown) or "none"


def diff_html(diff: Diff) -> str:
    """``jurat diff --html``: one self-contained page (no script, nothing fetched), every
    text escaped (``_report_html``)."""
    from html import escape

    from jurat.report._board import BOARD_CSP
    from jurat.report._report_html import CSS, cell, table

    def side(e: DiffEntry | None) -> str:
        if e is None:
            return cell("—", "absent")
        return (cell(f'<span class="badge">{escape(e.decision or "none")}</span>', "decision")
                + cell(escape(reason_text(e.reasons)), "reasons")
                + cell(f"<code>{escape(e.receipt or 'unknown')}</code> (review "
                       f"{e.review_version})", "receipt"))

    rows = []
    for r in diff.rows:
        before = side(r.base) if r.base is not None else cell("—") * 3
        after = side(r.new) if r.new is not None else cell("—") * 3
        rows.append(f'<tr class="diff-row" data-change="{r.change}" '
                    f'data-artifact="{escape(r.artifact)}">'
                    + cell(escape(r.artifact) + f'<span class="ci">{escape(r.campaign)}</span>',
                           "artifact")
                    + cell(escape(r.change), "change") + before + after + "</tr>")
    counts = ", ".join(f"{diff.count(c)} {c}" for c in _ORDER)
    title = f"jurat diff: {diff.base.source} → {diff.new.source}"
    head = ["artifact", "change", "base decision", "base reasons", "base receipt",
            "new decision", "new reasons", "new receipt"]
    body = (table("diff", head, rows) if rows
            else '<p class="summary">No artifact changed decision or reasons.</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{BOARD_CSP}">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f'<p class="summary" id="diff-summary">{diff.compared} artifacts on both sides; '
        f"changed: {escape(counts)}.</p>\n{body}\n</body>\n</html>\n")
