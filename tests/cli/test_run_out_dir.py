"""Receipt files never overwrite another campaign's or another artifact's (issue 27)."""

from __future__ import annotations

import shutil
from pathlib import Path

from jurat.receipts import read_statement
from tests.support.cli import invoke

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"


def _run(root: Path, campaign: Path, out: Path) -> tuple[int, str]:
    keys = root / "keys"
    if not (keys / "jurat.key").exists():
        assert invoke("keygen", "--out", str(keys)).exit_code == 0
    r = invoke("run", str(campaign), "--out", str(out), "--ledger",
               f"sqlite:///{root / 'l.db'}", "--key", str(keys / "jurat.key"), "--quiet")
    return r.exit_code, r.stdout + r.stderr


def _campaign(root: Path, name: str, campaign_id: str, artifact_id: str) -> Path:
    folder = root / name
    shutil.copytree(QUICKSTART, folder)
    path = folder / "campaign.toml"
    text = path.read_text()
    head, _, _ = text.partition("[[artifacts]]")
    head = head.replace('id = "quickstart-rubric"', f'id = "{campaign_id}"')
    path.write_text(head + f'[[artifacts]]\nid = "{artifact_id}"\n'
                    'path = "contributions/c1_canonical.py"\n')
    return path


def test_a_second_campaign_into_the_same_out_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, said = _run(tmp_path, _campaign(tmp_path, "a", "camp-a", "alice"), out)
    assert code in (0, 1, 2), said
    before = (out / "alice.sigstore.json").read_bytes()
    code, said = _run(tmp_path, _campaign(tmp_path, "b", "camp-b", "alice"), out)
    assert code == 3, said
    assert "holds the receipts of campaign 'camp-a'" in said and "own --out" in said
    assert (out / "alice.sigstore.json").read_bytes() == before


def test_an_unmarked_directory_of_another_campaigns_receipts_is_refused(
        tmp_path: Path) -> None:
    """A receipts directory made before the marker existed is read, not claimed: another
    campaign's receipts in it refuse the run; this campaign's own are resumed into."""
    out = tmp_path / "out"
    code, said = _run(tmp_path, _campaign(tmp_path, "a", "camp-a", "alice"), out)
    assert code in (0, 1, 2), said
    (out / ".jurat-campaign").unlink()  # as an older jurat left it
    before = (out / "alice.sigstore.json").read_bytes()
    code, said = _run(tmp_path, _campaign(tmp_path, "b", "camp-b", "alice"), out)
    assert code == 3 and "holds the receipts of campaign 'camp-a'" in said, said
    assert (out / "alice.sigstore.json").read_bytes() == before
    assert not (out / ".jurat-campaign").exists()
    code, said = _run(tmp_path, tmp_path / "a" / "campaign.toml", out)
    assert code in (0, 1, 2), said
    assert (out / ".jurat-campaign").read_text().strip() == "camp-a"


def test_an_artifact_with_the_bytes_of_a_decided_one_gets_no_foreign_receipt(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _campaign(tmp_path, "a", "camp-a", "alice")
    code, said = _run(tmp_path, first, out)
    assert code in (0, 1, 2), said
    # The same campaign, the same bytes, under another artifact id.
    first.write_text(first.read_text().replace('id = "alice"', 'id = "bob"'))
    code, said = _run(tmp_path, first, out)
    assert code == 3, said
    assert "'bob' has the same bytes as 'alice'" in said
    assert not (out / "bob.sigstore.json").exists()
    predicate = read_statement((out / "alice.sigstore.json").read_bytes())["predicate"]
    assert predicate["artifact"]["id"] == "alice"
