"""``jurat board``: the public board, a static site listing every signed verdict of a ledger.

Seed 001 ("The working proof"): strangers check each verdict from a public page, "No
account. No keys.", honest failing grades beside passes. One row per receipt in the ledger
(every review version, superseded ones tagged), worst outcome first as in the report
(``_rows``), each with its decision, agreement (votes and Wilson interval), N, replay
fidelity level and review version, links to its files, and the exact commands that verify
it with jurat and without it (``_board_files``). The receipts, their inclusion proofs
against the latest checkpoint, the checkpoint and the public keys are written beside the
page, so everything a command names can be downloaded from it.

Like the report, the page is one HTML file with inline CSS and no script, and its
Content-Security-Policy forbids fetching anything: it makes no request outside its own
origin, and an escaping slip could not load a script. Every text from a receipt passes
through ``html.escape``.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from html import escape
from pathlib import Path

from jurat.errors import IntakeError, JuratError
from jurat.ledger import Checkpoint, Ledger
from jurat.models import Frozen, tone_of
from jurat.receipts import read_decision_statement
from jurat.report._board_files import (
    CHECKPOINT_NAME,
    LOG_PUBLIC_NAME,
    OPENSSL_SCRIPT,
    OPENSSL_SCRIPT_NAME,
    PUBLIC_NAME,
    SIGSTORE_PACKAGES,
    SIGSTORE_SCRIPT,
    SIGSTORE_SCRIPT_NAME,
    jurat_command,
    openssl_command,
    receipt_file_name,
    sigstore_command,
)
from jurat.report._codes_html import CODES_CSS, adjudication_markup, codes_markup
from jurat.report._report_data import ArtifactView, ReportReceipt, views_of
from jurat.report._report_html import CSS, cell, interval, review_text, table
from jurat.report._rows import SEVERITY, current, display_order, tag_versions

__all__ = ["BOARD_CSP", "BoardSummary", "write_board"]

#: The page's Content-Security-Policy: inline style, nothing fetched, no script.
BOARD_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_HEAD = ["artifact", "decision", "reasons and gate failures", "agreement (votes)", "N", "RF",
         "review", "files", "verify"]
_EXTRA_CSS = """
td.files a { display: block; white-space: nowrap; }
details.outside > summary { cursor: pointer; color: var(--muted); font-size: 12px; }
details.outside code { display: block; margin: 4px 0; }
p.downloads a { margin-right: 12px; }
td.fidelity, td.review { white-space: nowrap; }
"""


class BoardSummary(Frozen):
    """What ``write_board`` wrote."""

    page: Path
    """The page, ``index.html``."""
    receipts: int
    """Receipts listed (one row each)."""
    proven: int
    """Receipts with an inclusion proof against the published checkpoint."""
    checkpoint: Checkpoint | None
    """The published checkpoint; None when the ledger has none yet."""


class _Row(Frozen):
    view: ArtifactView
    """The receipt as the report reads it."""
    name: str
    """Its file name on the board."""
    proven: bool
    """An inclusion proof was written beside it."""


def _write_receipts(ledger: Ledger, files: Path, checkpoint: Checkpoint | None
                    ) -> list[tuple[ReportReceipt, str, bool]]:
    out: list[tuple[ReportReceipt, str, bool]] = []
    seqs: list[int] = []
    for entry, signed in ledger.receipts():
        try:
            statement = read_decision_statement(signed)
        except JuratError as exc:
            raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
        review = entry.payload.get("review_version")
        name = receipt_file_name(entry.campaign_id or "", entry.artifact_id or "",
                                 review if isinstance(review, int) else None, entry.seq)
        (files / name).write_bytes(signed)
        proven = checkpoint is not None and entry.seq < checkpoint.tree_size
        if proven:
            seqs.append(entry.seq)
        out.append((ReportReceipt(statement=statement, receipt_path=name, key_path=PUBLIC_NAME,
                                  ledger_seq=entry.seq), name, proven))
    if checkpoint is not None and seqs:
        # One read of the stored tree for every proof (Ledger.prove_entries), in seq order.
        names = [name for _, name, has_proof in out if has_proof]
        for name, proof in zip(names, ledger.prove_entries(seqs, checkpoint), strict=True):
            (files / f"{name}.proof.json").write_text(proof.model_dump_json(indent=2) + "\n")
    return out


def _copy_key(source: Path | None, target: Path) -> bool:
    if source is None or not source.is_file():
        return False
    shutil.copyfile(source, target)
    return True


def write_board(ledger: Ledger, out: Path, *, public_key: Path | None,
                log_public_key: Path | None, title: str = "jurat board") -> BoardSummary:
    """Write ``out/index.html`` and ``out/files/``; the caller opened the ledger and closes it.

    ``public_key`` (the receipts' key) and ``log_public_key`` (the checkpoint's) are copied
    beside the receipts when given and present, so the printed commands name real files.
    """
    files = Path(out) / "files"
    files.mkdir(parents=True, exist_ok=True)
    checkpoint = ledger.latest_checkpoint()
    if checkpoint is not None:
        (files / CHECKPOINT_NAME).write_text(checkpoint.note, encoding="utf-8")
    has_key = _copy_key(public_key, files / PUBLIC_NAME)
    has_log_key = _copy_key(log_public_key, files / LOG_PUBLIC_NAME)
    (files / OPENSSL_SCRIPT_NAME).write_text(OPENSSL_SCRIPT, encoding="utf-8")
    (files / SIGSTORE_SCRIPT_NAME).write_text(SIGSTORE_SCRIPT, encoding="utf-8")
    written = _write_receipts(ledger, files, checkpoint)
    views = tag_versions(views_of([receipt for receipt, _, _ in written]))
    rows = [_Row(view=v, name=written[v.index][1], proven=written[v.index][2])
            for v in display_order(views)]
    page = Path(out) / "index.html"
    page.write_text(_page(title, rows, checkpoint, has_key=has_key, has_log_key=has_log_key),
                    encoding="utf-8")
    return BoardSummary(page=page, receipts=len(rows), proven=sum(r.proven for r in rows),
                        checkpoint=checkpoint)


def _link(name: str, text: str, cls: str, element_id: str | None = None) -> str:
    ident = f' id="{escape(element_id)}"' if element_id else ""
    return (f'<a class="{cls}"{ident} href="files/{escape(name)}" download="{escape(name)}">'
            f"{escape(text)}</a>")


def _n(v: ArtifactView) -> str:
    return f"{v.samples} samples ({v.valid_samples} valid)"


def _row(row: _Row, *, has_key: bool, has_log_key: bool) -> str:
    v, name = row.view, row.name
    state = "superseded" if v.superseded else "current"
    attrs = (f'class="verdict tone-{v.tone} {state}" data-artifact="{escape(v.artifact_id)}" '
             f'data-campaign="{escape(v.campaign_id)}" data-outcome="{escape(v.outcome)}" '
             f'data-review="{v.review_version}" data-file="{escape(name)}"')
    files = _link(name, "receipt", "receipt")
    if row.proven:
        files += _link(f"{name}.proof.json", "inclusion proof", "proof")
    verify = jurat_command(name, key=has_key, proof=row.proven, log_key=has_log_key)
    outside = (
        '<details class="outside"><summary>without jurat</summary>'
        f'<code class="verify verify-openssl">{escape(openssl_command(name, key=has_key))}</code>'
        f'<code class="verify verify-sigstore">{escape(sigstore_command(name, key=has_key))}'
        "</code></details>"
    )
    return (
        f"<tr {attrs}>"
        + cell(f"{escape(v.artifact_id)}<span class=\"ci\">{escape(v.campaign_id)}</span>",
               "artifact")
        + cell(f'<span class="badge">{escape(v.outcome)}</span>'
               + adjudication_markup(v.adjudication), "outcome")
        + cell(codes_markup(v.reason_codes, v.gate_failures) or "none", "reasons")
        + cell(escape(v.agreement_text) + interval(v.agreement_text), "agreement")
        + cell(_n(v), "samples")
        + cell(escape(v.fidelity), "fidelity")
        + cell(review_text(v), "review")
        + cell(files, "files")
        + cell(f'<code class="verify verify-jurat">{escape(verify)}</code>{outside}', "verify")
        + "</tr>"
    )


def _summary(rows: Sequence[_Row], checkpoint: Checkpoint | None) -> str:
    latest = current([r.view for r in rows])
    counts: dict[str, int] = {}
    for v in latest:
        counts[v.outcome] = counts.get(v.outcome, 0) + 1
    ranked = sorted(counts.items(), key=lambda o: (SEVERITY[tone_of(o[0])], o[0]))
    shown = " · ".join(f"{n} {escape(o)}" for o, n in ranked) or "none"
    log = ("no checkpoint yet: receipts have no inclusion proof" if checkpoint is None else
           f"checkpoint of {escape(checkpoint.origin)} at tree size {checkpoint.tree_size}")
    return (f'<p class="summary">{len(rows)} signed verdicts ({len(latest)} current: {shown}); '
            f"{log}.</p>" + _failures_summary(latest))


def _failures_summary(latest: Sequence[ArtifactView]) -> str:
    """Gate failures of the current verdicts per kind: the count summed, and how many
    verdicts have that kind (``tests_failed 3 in 2 verdicts``)."""
    counts: dict[str, list[int]] = {}
    for v in latest:
        for f in v.gate_failures:
            total = counts.setdefault(f.kind, [0, 0])
            total[0] += f.count
            total[1] += 1
    if not counts:
        return '<p class="summary" id="gate-failures">No gate failures in current verdicts.</p>'
    shown = " · ".join(
        f'<span class="failure-kind" data-kind="{escape(kind)}" data-count="{n}" '
        f'data-verdicts="{m}">{escape(kind)} {n} in {m} verdict{"" if m == 1 else "s"}</span>'
        for kind, (n, m) in sorted(counts.items()))
    return f'<p class="summary" id="gate-failures">Gate failures in current verdicts: {shown}.</p>'



def _downloads(checkpoint: Checkpoint | None, *, has_key: bool, has_log_key: bool) -> str:
    links = []
    if has_key:
        links.append(_link(PUBLIC_NAME, f"{PUBLIC_NAME} (receipt key)", "key", "public-key"))
    if checkpoint is not None:
        links.append(_link(CHECKPOINT_NAME, "checkpoint", "checkpoint", "checkpoint"))
    if has_log_key:
        links.append(_link(LOG_PUBLIC_NAME, f"{LOG_PUBLIC_NAME} (log key)", "key", "log-key"))
    links.append(_link(OPENSSL_SCRIPT_NAME, OPENSSL_SCRIPT_NAME, "script", "openssl-script"))
    links.append(_link(SIGSTORE_SCRIPT_NAME, SIGSTORE_SCRIPT_NAME, "script", "sigstore-script"))
    return f'<p class="downloads">{"".join(links)}</p>'


def _how(has_key: bool) -> str:
    key = ("" if has_key else " The receipts' public key was not published with this board: "
           "replace <code>&lt;pub&gt;</code> with it.")
    return (
        '<section id="how-section"><h2>How to verify</h2><p class="note">No account. No keys '
        "of your own. Download a receipt, its inclusion proof, the checkpoint and the public "
        "keys into one directory and run the command printed beside the receipt there. "
        "<code>jurat verify</code> checks the signature, re-derives the decision from the "
        "signed votes and checks the receipt is in the log under the signed checkpoint. "
        "Without jurat: the openssl script (jq, base64, openssl) and sigstore-js "
        f"(<code>npm install {escape(SIGSTORE_PACKAGES)}</code>) check the signature; "
        "re-deriving the decision needs jurat or a verifier written from "
        f"docs/receipt-format.md.{key}</p></section>"
    )


def _page(title: str, rows: Sequence[_Row], checkpoint: Checkpoint | None, *,
          has_key: bool, has_log_key: bool) -> str:
    body = [_row(r, has_key=has_key, has_log_key=has_log_key) for r in rows]
    if not rows:
        body.append(f'<tr><td colspan="{len(_HEAD)}">No signed verdicts yet.</td></tr>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{BOARD_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}{CODES_CSS}{_EXTRA_CSS}</style>\n</head>\n<body>\n"
        f"<header><h1>{escape(title)}</h1>{_summary(rows, checkpoint)}"
        f"{_downloads(checkpoint, has_key=has_key, has_log_key=has_log_key)}</header>\n"
        '<section id="verdicts-section"><h2>Signed verdicts</h2><p class="note">Every receipt '
        "in the ledger, failing grades beside passes: by campaign, worst outcome first, then by "
        "artifact; a superseded review follows the one that replaced it. Reasons are codes read "
        "from the signed decision and gate failures are kinds with counts (docs/board.md); an "
        "adjudicated verdict says what the judges said, who decided otherwise and when, and the "
        "reviewer's rationale only where the reviewer published it. Agreement is the share of "
        "votes that agree, with its Wilson 95% interval; N is the number of judge samples. "
        "RF-1: the decision replays from the recorded votes; RF-2: the votes are "
        "reproducible too.</p>"
        + table("verdicts", _HEAD, body)
        + "</section>\n"
        + _how(has_key)
        + "\n</body>\n</html>\n"
    )
