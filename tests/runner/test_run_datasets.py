"""Artifacts from `[[datasets]]`: read inside the campaign directory, checked whole before
anything runs, then streamed; a bad row names its file, line and field and nothing runs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurat.campaign import load_campaign
from jurat.errors import CampaignError, CampaignErrors, ConfigError, JuratError
from jurat.ledger import open_ledger
from jurat.receipts import keygen, load_private_key
from jurat.runner import Progress, RunOptions, intake, run_campaign_async
from jurat.runner import _datasets as datasets_module
from jurat.runner._datasets import check_artifacts, iter_artifacts, row_bytes

from ._support import entries, jurat, keys, verify

HEAD = """\
[campaign]
id = "ds"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "s"
provider = "sim"
samples = 3
"""


def _campaign(camp: Path, *datasets: str, inline: str = "", intake_caps: str = "") -> Path:
    camp.mkdir(parents=True, exist_ok=True)
    text = HEAD + intake_caps + inline + "".join(
        f'\n[[datasets]]\npath = "{d}"\n' for d in datasets)
    (camp / "c.toml").write_text(text)
    return camp / "c.toml"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _problems(exc: CampaignError) -> list[CampaignError]:
    return list(exc.problems) if isinstance(exc, CampaignErrors) else [exc]


def test_rows_become_artifacts_in_order_after_the_inline_ones(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "sol.py").write_text("x = 1\n")
    _jsonl(camp / "a.jsonl", [
        {"id": "j1", "text": "first", "truth": "accept", "task": "t1", "contributor": "ann"},
        {"id": "j2", "path": "sol.py", "truth": None},
    ])
    (camp / "b.csv").write_text('id,text,truth\r\nc1,"two\r\nlines, quoted",reject\r\n\r\n'
                                'c2,plain,\r\n')
    inline = '\n[[artifacts]]\nid = "i1"\ntext = "inline"\n'
    campaign = load_campaign(_campaign(camp, "a.jsonl", "b.csv", inline=inline))
    artifacts = intake(campaign)
    assert [a.id for a in artifacts] == ["i1", "j1", "j2", "c1", "c2"]
    j1, j2, c1, c2 = artifacts[1:]
    assert (j1.text, j1.truth, j1.task, j1.contributor) == ("first", "accept", "t1", "ann")
    assert (j2.text, j2.media_type) == ("x = 1\n", "text/x-python")
    assert (c1.text, c1.truth) == ("two\nlines, quoted", "reject")
    assert (c2.text, c2.truth) == ("plain", None)
    assert check_artifacts(campaign).count == 5


def test_every_bad_row_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "items.jsonl").write_text(
        '{"id": "a1", "text": "ok"}\n'
        "\n"
        '{"id": "a2", "text": "x", "truth": "acept"}\n'
        '{"id": "a3", "txt": "x"}\n'
        '{"id": "a1", "text": "again"}\n'
        "[1, 2]\n"
        '{"id": "a6", "text": "x", "text": "y"}\n'
        '{"id": "a7", "path": "../outside.py"}\n'
        '{"id": "a8", "path": "missing.py"}\n'
        '{"id": "a9", "text": "fine"}\n')
    campaign = load_campaign(_campaign(camp, "items.jsonl"))
    with pytest.raises(CampaignErrors) as info:
        check_artifacts(campaign)
    found = [(p.file, p.line, p.field) for p in info.value.problems]
    file = str(camp / "items.jsonl")
    assert found == [(file, 3, "truth"), (file, 4, "txt"), (file, 5, "id"), (file, 6, None),
                     (file, 7, None), (file, 8, "path"), (file, 9, "path")]
    words = [p.message for p in info.value.problems]
    assert "did you mean 'accept'?" in words[0]
    assert "first at " + file + ":1" in words[2]
    assert "duplicate key" in words[4]
    assert "'..' component" in words[5]


def test_ids_are_unique_across_inline_artifacts_and_datasets(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "a.jsonl", [{"id": "x", "text": "1"}, {"id": "y", "text": "2"}])
    (camp / "b.csv").write_text("id,text\ny,3\nz,4\n")
    inline = '\n[[artifacts]]\nid = "x"\ntext = "0"\n'
    with pytest.raises(CampaignErrors) as info:
        check_artifacts(load_campaign(_campaign(camp, "a.jsonl", "b.csv", inline=inline)))
    first, second = info.value.problems
    assert (first.file, first.line, first.field) == (str(camp / "a.jsonl"), 1, "id")
    assert "artifacts[0]" in first.message
    assert (second.file, second.line) == (str(camp / "b.csv"), 2)
    assert f"first at {camp / 'a.jsonl'}:2" in second.message


def test_two_ids_with_one_content_are_refused(tmp_path: Path) -> None:
    # A job is bound to the content: two ids with one content would share its one receipt.
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "a.jsonl", [{"id": "x2", "text": "42"}, {"id": "y", "a": "1", "b": "2"},
                              {"id": "y2", "a": "1", "b": "2"}, {"id": "z", "a": "2", "b": "1"}])
    inline = '\n[[artifacts]]\nid = "x"\ntext = "42"\n'
    with pytest.raises(CampaignErrors) as info:
        check_artifacts(load_campaign(_campaign(camp, "a.jsonl", inline=inline)))
    first, second = info.value.problems
    assert (first.file, first.line) == (str(camp / "a.jsonl"), 1)
    assert "'x2' has the same content as 'x'" in first.message
    assert (second.line, second.field) == (3, None)
    assert f"'y2' has the same content as 'y' (at {camp / 'a.jsonl'}:2)" in second.message
    twice = '\n[[artifacts]]\nid = "x"\ntext = "42"\n\n[[artifacts]]\nid = "w"\ntext = "42"\n'
    _jsonl(camp / "a.jsonl", [{"id": "v", "text": "other"}])
    with pytest.raises(CampaignError) as one:
        check_artifacts(load_campaign(_campaign(camp, "a.jsonl", inline=twice)))
    assert (one.value.field, one.value.line) == ("artifacts[1]", HEAD.count("\n") + 6)


def test_past_twenty_problems_the_rest_are_counted(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "items.jsonl", [{"id": f"r{i}", "txt": "x"} for i in range(50)])
    with pytest.raises(CampaignErrors) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.jsonl")))
    problems = info.value.problems
    assert len(problems) == 21
    assert [p.line for p in problems[:20]] == list(range(1, 21))
    assert problems[20].message == "and 30 more problems in the datasets"


def test_a_csv_header_or_a_broken_quote_stops_the_file_at_its_line(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "items.csv").write_text("id,txet\nc1,x\n")
    with pytest.raises(CampaignError) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.csv")))
    assert (info.value.line, info.value.field) == (1, "txet")
    assert "did you mean 'text'?" in info.value.message
    (camp / "items.csv").write_text('id,text\nc1,x\nc2,"open\nstill open\n')
    with pytest.raises(CampaignError) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.csv")))
    assert info.value.line == 3
    (camp / "items.csv").write_text("id,text\nc1,x,extra\n")
    with pytest.raises(CampaignError) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.csv")))
    assert info.value.line == 2 and "3 cells, the header 2" in info.value.message


def test_a_line_over_the_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    caps = "\n[intake]\nmax_artifact_bytes = 1000\n"
    (camp / "items.jsonl").write_text("")
    campaign = load_campaign(_campaign(camp, "items.jsonl", intake_caps=caps))
    limit = row_bytes(campaign)
    long = json.dumps({"id": "big", "text": "x" * limit})
    (camp / "items.jsonl").write_text('{"id": "a", "text": "b"}\n' + long + "\n")
    with pytest.raises(CampaignError) as info:
        check_artifacts(campaign)
    assert info.value.line == 2 and f"longer than {limit} bytes" in info.value.message
    # Within the line limit, the artifact cap still holds for the text itself.
    (camp / "items.jsonl").write_text(json.dumps({"id": "big", "text": "x" * 1001}) + "\n")
    with pytest.raises(CampaignError) as info:
        check_artifacts(campaign)
    assert info.value.line == 1 and info.value.field == "text"
    assert "larger than the cap of 1000 bytes" in info.value.message


def test_a_dataset_or_a_row_file_leading_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "items.jsonl").write_text('{"id": "a", "text": "secret"}\n')
    (tmp_path / "outside" / "secret.py").write_text("SECRET = 1\n")
    camp = tmp_path / "camp"
    camp.mkdir()
    os.symlink(tmp_path / "outside" / "items.jsonl", camp / "items.jsonl")
    with pytest.raises(CampaignError) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.jsonl")))
    assert info.value.field == "datasets[0].path"
    assert "outside the campaign directory" in info.value.message
    (camp / "items.jsonl").unlink()
    os.symlink(tmp_path / "outside" / "secret.py", camp / "linked.py")
    _jsonl(camp / "items.jsonl", [{"id": "a", "path": "linked.py"}])
    with pytest.raises(CampaignError) as info:
        check_artifacts(load_campaign(_campaign(camp, "items.jsonl")))
    assert (info.value.file, info.value.line, info.value.field) == (
        str(camp / "items.jsonl"), 1, "path")


def test_the_run_streams_rows_one_at_a_time(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "items.jsonl", [{"id": f"r{i}", "text": str(i)} for i in range(100)])
    campaign = load_campaign(_campaign(camp, "items.jsonl"))
    read: list[int] = []
    real = datasets_module.read_lines

    def counting(*args: Any, **kwargs: Any) -> Iterator[tuple[int, bytes]]:
        for line, raw in real(*args, **kwargs):
            read.append(line)
            yield line, raw

    monkeypatch.setattr(datasets_module, "read_lines", counting)
    rows = iter_artifacts(campaign)
    assert next(rows).id == "r0"
    assert read == [1]  # the first artifact is out before the second row is read
    assert next(rows).id == "r1" and read == [1, 2]
    rows.close()


def test_a_dataset_changed_after_its_check_fails_the_run_not_the_input(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    rows = [{"id": f"r{i}", "text": f"answer {i}", "truth": "accept"} for i in range(3)]
    _jsonl(camp / "items.jsonl", rows)
    campaign = load_campaign(_campaign(camp, "items.jsonl"))
    checked = check_artifacts(campaign)
    _jsonl(camp / "items.jsonl", [*rows[:2], {"id": "r2", "txt": "edited"}])
    priv, _ = keygen(tmp_path / "keys")
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        with pytest.raises(JuratError) as info:
            asyncio.run(run_campaign_async(
                campaign, RunOptions(out_dir=tmp_path / "out", quiet=True), ledger=ledger,
                key=load_private_key(priv), progress=Progress(), checked=checked))
        # Exit 4 (a failure part-way), not 3 (which says nothing was written).
        assert not isinstance(info.value, ConfigError)
        assert "changed after they were checked" in str(info.value)
        assert "items.jsonl:3: field `txt`" in str(info.value)


def _run(campaign: Path, tmp: Path) -> tuple[int, str]:
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    return r.returncode, r.stdout + r.stderr


def test_a_bad_row_exits_3_with_nothing_evaluated_or_written(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    rows = [{"id": f"r{i}", "text": f"answer {i}", "truth": "accept"} for i in range(40)]
    rows[37]["truth"] = "acept"
    _jsonl(camp / "items.jsonl", rows)
    code, out = _run(_campaign(camp, "items.jsonl"), tmp_path)
    assert code == 3, out
    assert f"{camp / 'items.jsonl'}:38: field `truth`" in out
    assert "Traceback" not in out
    assert entries(tmp_path / "l.db") == []
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_dataset_campaign_runs_one_receipt_per_row(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "items.jsonl",
           [{"id": f"r{i}", "text": f"answer {i}", "truth": "accept"} for i in range(12)])
    (camp / "more.csv").write_text("id,text,truth\nc1,one,reject\nc2,two,accept\n")
    campaign = _campaign(camp, "items.jsonl", "more.csv")
    code, out = _run(campaign, tmp_path)
    assert code in (0, 1, 2), out
    receipts = sorted(p.name for p in (tmp_path / "out").glob("*.sigstore.json"))
    assert receipts == sorted(f"{i}.sigstore.json" for i in [*(f"r{n}" for n in range(12)),
                                                              "c1", "c2"])
    assert len(entries(tmp_path / "l.db", "receipt")) == 14
    _, pub = keys(tmp_path)
    assert verify(tmp_path / "out" / "c1.sigstore.json", pub, tmp_path).returncode == 0
    # Again: every receipt is reused, nothing is sampled twice.
    samples = len(entries(tmp_path / "l.db", "sample_recorded"))
    code, out = _run(campaign, tmp_path)
    assert code in (0, 1, 2), out
    assert len(entries(tmp_path / "l.db", "sample_recorded")) == samples == 14 * 3


def test_sigkill_mid_run_loses_no_recorded_vote_and_resamples_nothing(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    _jsonl(camp / "items.jsonl",
           [{"id": f"r{i}", "text": f"answer {i}", "truth": "accept"} for i in range(60)])
    text = (HEAD.replace("samples = 3", "samples = 3\nlatency_ms = 40")
            + '\n[[datasets]]\npath = "items.jsonl"\n')
    (camp / "c.toml").write_text(text)
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    cmd = [sys.executable, "-m", "jurat", "run", str(camp / "c.toml"), "--out",
           str(tmp_path / "out"), "--ledger", f"sqlite:///{db}", "--key", str(key), "--quiet"]
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(entries(db, "receipt")) < 5:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    before = {(e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"]):
              e.payload["vote"] for e in entries(db, "sample_recorded")}
    assert 5 * 3 <= len(before) < 60 * 3, "the kill should land mid-run"
    r = jurat("run", *cmd[4:], cwd=tmp_path)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    after = entries(db, "sample_recorded")
    drawn = Counter((e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
                    for e in after)
    assert len(drawn) == 60 * 3 and set(drawn.values()) == {1}  # nothing sampled twice
    for e in after:  # what was recorded before the kill is what the receipts rest on
        k = (e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
        if k in before:
            assert e.payload["vote"] == before[k]
    assert Counter(e.artifact_id for e in entries(db, "receipt")) == {
        f"r{i}": 1 for i in range(60)}

