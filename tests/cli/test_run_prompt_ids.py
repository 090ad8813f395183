"""The equivalence prompt's own id (issue 27): jurat's changed prompt is recorded as
``jurat/equivalence@1`` with the seed's id as what it derives from (seed 002 §4: a changed
prompt declares its own id), and receipts that earlier versions wrote under the seed's id
keep verifying, replaying and being reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.receipts import read_statement
from tests.support.cli import invoke

from .conftest import EQUIVALENCE, campaign


def _run(root: Path, path: Path, keys: tuple[Path, Path]) -> str:
    r = invoke("run", str(path), "--out", str(root / "out"), "--ledger",
               f"sqlite:///{root / 'l.db'}", "--key", str(keys[0]), "--quiet")
    assert r.exit_code == 0, r.output
    return r.stdout


def _checked(root: Path, keys: tuple[Path, Path]) -> None:
    receipt = root / "out" / "p1.sigstore.json"
    verified = invoke("verify", str(receipt), "--key", str(keys[1]), "--checkpoint",
                      str(root / "l.db.checkpoint"), "--log-key",
                      str(keys[1].with_name("jurat-log.pub")))
    assert verified.exit_code == 0, verified.output
    replayed = invoke("replay", f"sqlite:///{root / 'l.db'}", "--key", str(keys[1]))
    assert replayed.exit_code == 0, replayed.output


def _pins(root: Path) -> list[dict[str, object]]:
    signed = (root / "out" / "p1.sigstore.json").read_bytes()
    judges: list[dict[str, object]] = read_statement(signed)["predicate"]["judges"]
    return judges


def test_the_equivalence_prompt_is_pinned_under_jurat_s_id_derived_from_the_seed_s(
        tmp_path: Path, signing_key: tuple[Path, Path]) -> None:
    _run(tmp_path, campaign(tmp_path, EQUIVALENCE, "own-id", "always-equivalent"), signing_key)
    (pin,) = _pins(tmp_path)
    assert pin["prompt_id"] == "jurat/equivalence@1"
    assert pin["prompt_derived_from"] == "invariance-checker/judge/v1"
    signed = (tmp_path / "out" / "p1.sigstore.json").read_bytes()
    votes = read_statement(signed)["predicate"]["votes"]
    assert [v["prompt_id"] for v in votes] == ["jurat/equivalence@1"]
    _checked(tmp_path, signing_key)


def test_a_receipt_written_under_the_seed_s_id_still_verifies_replays_and_is_reused(
        tmp_path: Path, signing_key: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = campaign(tmp_path, EQUIVALENCE, "old-id", "always-equivalent")
    with monkeypatch.context() as old:
        # The id earlier versions sent this text under, as they recorded it.
        old.setattr("jurat.judges._prompts.EQUIVALENCE_TEMPLATE",
                    ("invariance-checker/judge/v1", "2"))
        _run(tmp_path, path, signing_key)
    (pin,) = _pins(tmp_path)
    assert pin["prompt_id"] == "invariance-checker/judge/v1@2"
    assert "prompt_derived_from" not in pin  # what those receipts hold: their normal form
    before = (tmp_path / "out" / "p1.sigstore.json").read_bytes()
    _checked(tmp_path, signing_key)
    # This version runs the same campaign on that ledger: the old receipt is reused as is.
    said = _run(tmp_path, path, signing_key)
    assert "0 drawn in this run" in said and "(reused)" in said
    assert (tmp_path / "out" / "p1.sigstore.json").read_bytes() == before
    _checked(tmp_path, signing_key)
