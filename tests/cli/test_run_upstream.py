"""`jurat run` requires the upstream receipts a campaign declares (issue 27): each
artifact names its receipt files (``upstream = [...]``); a missing, foreign-stage,
expired or superseded one exits 3 before anything is written, naming the artifact, the
file and the reason, and a current one is bound in the receipt with its stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jurat.ledger import open_ledger
from jurat.receipts import keygen
from tests.cli._run_support import Run, run
from tests.service._support import TEXT
from tests.support.upstream import STAGE1, key_sha256, payload_sha256, upstream_receipt

ESSAY = "Essay."


def _campaign(root: Path, upstream: list[str]) -> Path:
    """A text campaign trusting a Stage 1 and a Stage 2 key, Stage 1 required; its one
    artifact names ``upstream``."""
    for stage in ("s1", "s2"):
        if not (root / stage / "jurat.key").exists():
            keygen(root / stage)
    names = ", ".join(json.dumps(u) for u in upstream)
    path = root / "campaign.toml"
    path.write_text(TEXT.format(samples=1, latency=0) + (
        '\n[upstream]\nkeys = [{path = "s1/jurat.pub", stage = "stage1"}, '
        '{path = "s2/jurat.pub", stage = "stage2"}]\nrequired = ["stage1"]\n'
        f'\n[[artifacts]]\nid = "e1"\ntext = "{ESSAY}"\nupstream = [{names}]\n'))
    return path


def _receipt(root: Path, name: str, bundle: dict[str, Any]) -> str:
    (root / "receipts").mkdir(exist_ok=True)
    (root / "receipts" / name).write_text(json.dumps(bundle))
    return f"receipts/{name}"


def _entries(root: Path) -> int:
    if not (root / "l.db").exists():
        return 0
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        return ledger.size()


def _refused(root: Path, upstream: list[str], *said: str) -> Run:
    before = _entries(root)
    done = run(root, _campaign(root, upstream), None)
    assert done.code == 3, done.out + done.err
    for words in said:
        assert words in done.err, done.err
    assert _entries(root) == before
    if not before:
        assert not (root / "out" / "e1.sigstore.json").exists()
    return done


def test_missing_foreign_expired_or_superseded_receipts_exit_3_with_nothing_written(
        tmp_path: Path) -> None:
    keygen(tmp_path / "s1")
    keygen(tmp_path / "s2")
    s1, s2 = tmp_path / "s1" / "jurat.key", tmp_path / "s2" / "jurat.key"
    _refused(tmp_path, [], "artifact 'e1': missing: no stage1 receipt",
             "artifacts[0].upstream")
    foreign = _receipt(tmp_path, "e1.foreign.json",
                       upstream_receipt(s2, ESSAY, stage="stage1"))
    _refused(tmp_path, [foreign], "artifact 'e1': upstream receipt "
             "'receipts/e1.foreign.json' is refused: foreign stage: it says it is a stage1 "
             "receipt, but it is signed by the key for stage2")
    expired = _receipt(tmp_path, "e1.expired.json",
                       upstream_receipt(s1, ESSAY, not_after="2021-01-01T00:00:00Z"))
    _refused(tmp_path, [expired], "'receipts/e1.expired.json' is refused: expired")
    older = _receipt(tmp_path, "e1.old.json",
                     upstream_receipt(s1, ESSAY, issued_at="2026-01-01T00:00:00Z"))
    newer = _receipt(tmp_path, "e1.new.json",
                     upstream_receipt(s1, ESSAY, issued_at="2026-02-01T00:00:00Z"))
    _refused(tmp_path, [older, newer], "'receipts/e1.old.json' is refused: superseded: "
             "upstream receipt [1] is a stage1 receipt of this artifact issued later",
             "artifacts[0].upstream[0]")
    other = _receipt(tmp_path, "e1.other.json", upstream_receipt(s1, "Another essay."))
    _refused(tmp_path, [other], "'receipts/e1.other.json' is refused: it is about other "
             "bytes than this artifact")


def test_a_current_receipt_is_bound_and_an_older_one_is_refused_afterwards(
        tmp_path: Path) -> None:
    keygen(tmp_path / "s1")
    keygen(tmp_path / "s2")
    s1, s2 = tmp_path / "s1" / "jurat.key", tmp_path / "s2" / "jurat.key"
    stage1 = upstream_receipt(s1, ESSAY, issued_at="2026-02-01T00:00:00Z",
                              not_after="2999-01-01T00:00:00Z")
    stage2 = upstream_receipt(s2, ESSAY, stage="stage2")  # optional here, bound when given
    names = [_receipt(tmp_path, "e1.stage1.json", stage1),
             _receipt(tmp_path, "e1.stage2.json", stage2)]
    done = run(tmp_path, _campaign(tmp_path, names), None)
    assert done.code in (0, 1, 2), done.out + done.err
    assert done.predicate("e1")["inputs"]["upstream_receipts"] == [
        {"name": STAGE1, "sha256": payload_sha256(stage1), "stage": "stage1",
         "key_sha256": key_sha256(s1.with_suffix(".pub")),
         "issued_at": "2026-02-01T00:00:00.000000Z"},
        {"name": STAGE1, "sha256": payload_sha256(stage2), "stage": "stage2",
         "key_sha256": key_sha256(s2.with_suffix(".pub")),
         "issued_at": "2026-01-01T00:00:00.000000Z"},
    ]
    # The ledger now knows the February receipt: a January one of the same bytes is old.
    older = _receipt(tmp_path, "e1.jan.json",
                     upstream_receipt(s1, ESSAY, issued_at="2026-01-01T00:00:00Z"))
    _refused(tmp_path, [older], "'receipts/e1.jan.json' is refused: superseded: a stage1 "
             "receipt of this artifact issued at 2026-02-01T00:00:00.000000Z is already "
             "bound in this ledger")
    # A later one is another job, whose receipt supersedes the first review.
    later = upstream_receipt(s1, ESSAY, issued_at="2026-03-01T00:00:00Z")
    done = run(tmp_path, _campaign(tmp_path, [_receipt(tmp_path, "e1.mar.json", later)]),
               None)
    assert done.code in (0, 1, 2), done.out + done.err
    predicate = done.predicate("e1")
    assert predicate["review"]["version"] == 2
    assert [b["sha256"] for b in predicate["inputs"]["upstream_receipts"]] == [
        payload_sha256(later)]


def test_ray_refuses_a_campaign_with_upstream_rather_than_sign_without_it(
        tmp_path: Path) -> None:
    keygen(tmp_path / "s1")
    name = _receipt(tmp_path, "e1.stage1.json",
                    upstream_receipt(tmp_path / "s1" / "jurat.key", ESSAY))
    done = run(tmp_path, _campaign(tmp_path, [name]), None, "--executor", "ray")
    assert done.code == 3, done.out + done.err
    assert "--executor ray does not run campaigns with [upstream]" in done.err
    assert _entries(tmp_path) == 0
