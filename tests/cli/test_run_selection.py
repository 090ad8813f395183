"""`jurat run --limit N` / `--only ID`, `jurat --version`, and bare ledger paths (issue 29).

A selection judges some artifacts and leaves the others unjudged, without changing what a
judged artifact's job or receipt is: a later run of the whole campaign reuses them from the
ledger (no sample drawn again, the receipt's bytes unchanged, still review v1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat._version import __version__
from jurat.ledger import ledger_url, open_ledger
from tests.cli._run_support import run
from tests.support.cli import invoke

CAMPAIGN = """\
[campaign]
id = "selection"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 1
blocker_samples = 1
items = [{ id = "polite", text = "Is the reply polite?" }]

[[judges]]
id = "s"
provider = "sim"
reliability = 1.0
seed = 3

[[artifacts]]
id = "a1"
text = "Thank you."
truth = "yes"

[[artifacts]]
id = "a2"
text = "Kind regards."
truth = "yes"

[[datasets]]
path = "rows.jsonl"
"""

ROWS = [{"id": f"r{i}", "text": f"reply number {i}", "truth": "yes"} for i in range(1, 5)]


def _campaign(tmp_path: Path) -> Path:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    path = tmp_path / "campaign.toml"
    path.write_text(CAMPAIGN)
    return path


def _receipts(root: Path) -> dict[str, bytes]:
    return {p.name.removesuffix(".sigstore.json"): p.read_bytes()
            for p in sorted((root / "out").glob("*.sigstore.json"))}


def test_limit_judges_the_first_n_and_a_full_run_reuses_them(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    first = run(tmp_path, campaign, None, "--limit", "3")
    assert first.code == 0, first.out + first.err
    # The plan, before the run; campaign order is [[artifacts]] first, then the rows.
    assert "selected 3 of 6 artifacts (--limit 3); the other 3 are not judged" in first.err
    assert "not selected: 3 of 6 artifacts (--limit 3): not judged" in first.out
    limited = _receipts(tmp_path)
    assert sorted(limited) == ["a1", "a2", "r1"]
    assert first.samples() == 3

    full = run(tmp_path, campaign, None)
    assert full.code == 0, full.out + full.err
    assert "selected" not in full.err and "not selected" not in full.out
    # The three judged before are reused: same job, same receipt bytes, no new sample.
    assert "judge calls: 3 drawn in this run, 3 reused from the ledger" in full.out
    after = _receipts(tmp_path)
    assert sorted(after) == ["a1", "a2", "r1", "r2", "r3", "r4"]
    assert all(after[k] == limited[k] for k in limited)
    assert full.samples() == 6
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        assert sum(1 for _ in ledger.entries(kind="receipt")) == 6


def test_only_picks_ids_inline_and_in_rows(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    done = run(tmp_path, campaign, None, "--only", "r3", "--only", "a2")
    assert done.code == 0, done.out + done.err
    assert "selected 2 of 6 artifacts (--only r3 --only a2)" in done.err
    assert sorted(_receipts(tmp_path)) == ["a2", "r3"]
    # With --limit, the first N of those kept, in campaign order: a2 before r3.
    again = run(tmp_path / "b", campaign, None, "--only", "r3", "--only", "a2",
                "--limit", "1")
    assert sorted(_receipts(tmp_path / "b")) == ["a2"], again.err


def test_unknown_only_id_exits_3_naming_it_and_writes_nothing(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    done = run(tmp_path, campaign, None, "--only", "r2", "--only", "r1x")
    assert done.code == 3
    assert "--only 'r1x'" in done.err and "did you mean 'r1'" in done.err
    assert "'r2'" not in done.err  # a known id is not named as unknown
    assert not done.has_ledger()
    assert not list(tmp_path.glob("out/*.sigstore.json"))
    two = run(tmp_path, campaign, None, "--only", "zz", "--only", "yy")
    assert two.code == 3 and "--only 'zz', 'yy'" in two.err


def test_limit_must_be_positive(tmp_path: Path) -> None:
    done = run(tmp_path, _campaign(tmp_path), None, "--limit", "0")
    assert done.code == 3
    assert not done.has_ledger()


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"jurat {__version__}\n"


def test_ledger_url_helper() -> None:
    assert ledger_url("l.db") == "sqlite:///l.db"
    assert ledger_url("/abs/l.db") == "sqlite:////abs/l.db"
    assert ledger_url("sqlite:///x.db") == "sqlite:///x.db"
    assert ledger_url("postgresql://u@h/db") == "postgresql://u@h/db"


def test_every_command_takes_a_bare_ledger_path(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    campaign = _campaign(tmp_path)
    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    monkeypatch.chdir(tmp_path)
    key = str(tmp_path / "keys" / "jurat.key")
    # Relative and bare, as the issue typed it: refused by `run` before.
    done = invoke("run", str(campaign), "--ledger", "bare.db", "--out", "out", "--key", key,
                  "--quiet", "--limit", "2")
    assert done.exit_code == 0, done.output
    assert "ledger: sqlite:///bare.db" in done.stdout
    assert not (tmp_path / "jurat.db").exists()
    log_key = str(tmp_path / "keys" / "jurat-log.pub")
    for args in (("replay", "bare.db", "--key", str(tmp_path / "keys" / "jurat.pub")),
                 ("log", "verify", "bare.db", "--log-key", log_key),
                 ("log", "prove", "bare.db", "1"),
                 ("sample", "bare.db", "a1"),
                 ("board", "bare.db", "--out", "board", "--key",
                  str(tmp_path / "keys" / "jurat.pub"))):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
    created = invoke("token", "create", "--campaign", "selection", "--role", "verifier",
                     "--ledger", "bare.db")
    assert created.exit_code == 0, created.output
    revoked = invoke("token", "revoke", "--ledger", "bare.db", created.stdout.strip())
    assert revoked.exit_code == 0, revoked.output
    # A bare path that names no ledger is still not created by a reader.
    missing = invoke("replay", "missing.db")
    assert missing.exit_code == 3
    assert not (tmp_path / "missing.db").exists()
