"""`jurat run --workers N`: one campaign in N forked processes sharing one ledger.

The same decisions, receipts and ledger as one process; each judge's limits split so the
processes together stay within them; a worker that dies stops the run (exit 4) and the
same command resumes it.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.campaign import load_campaign
from jurat.judges import limit_share
from jurat.ledger import open_ledger
from jurat.receipts import keygen, load_private_key
from jurat.runner import Progress, RunOptions, run_campaign_async
from jurat.runner._shards import MIN_ARTIFACTS_PER_WORKER, usable_workers, workers_for
from jurat.runner._summary import RunTally

from ._support import entries, jurat, keys

CAMPAIGN = """\
[campaign]
id = "wk"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 0.6 }}, {{ id = "reasoning", weight = 0.4 }}]

[[judges]]
id = "a"
provider = "sim"
samples = 3
max_concurrency = {concurrency}

[[judges]]
id = "b"
provider = "sim"
samples = 2
reliability = 0.7

[[datasets]]
path = "items.jsonl"
"""


def _campaign(camp: Path, n: int, *, concurrency: int = 16) -> Path:
    camp.mkdir(parents=True)
    (camp / "c.toml").write_text(CAMPAIGN.format(concurrency=concurrency))
    with (camp / "items.jsonl").open("w") as out:
        for i in range(n):
            out.write(json.dumps({"id": f"x{i:03d}", "text": f"answer {i}: {'ok ' * (i % 7)}",
                                  "truth": "accept" if i % 3 else "reject",
                                  "contributor": f"c{i % 4}"}) + "\n")
    return camp / "c.toml"


def _run(tmp: Path, name: str, n: int, *extra: str) -> tuple[int, str, Path, Path]:
    camp = _campaign(tmp / name, n)
    key, _ = keys(tmp)
    db = tmp / f"{name}.db"
    out = tmp / f"{name}-out"
    r = jurat("run", str(camp), "--out", str(out), "--ledger", f"sqlite:///{db}", "--key",
              str(key), "--quiet", *extra, cwd=tmp)
    return r.returncode, r.stdout + r.stderr, db, out


def _decisions(out: Path) -> dict[str, str]:
    """artifact id -> the decision object of its receipt, as canonical text."""
    import base64

    found = {}
    for path in sorted(out.glob("*.sigstore.json")):
        bundle = json.loads(path.read_text())
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        found[path.name] = json.dumps(statement["predicate"]["decision"], sort_keys=True)
    return found


@given(st.integers(1, 10_000), st.integers(1, 64))
def test_limit_shares_add_up_to_the_limit_and_differ_by_at_most_one(limit: int,
                                                                     shards: int) -> None:
    shards = min(shards, limit)
    parts = [limit_share(limit, k, shards) for k in range(shards)]
    assert sum(parts) == limit
    assert max(parts) - min(parts) <= 1
    assert min(parts) >= 1


def test_two_workers_decide_exactly_as_one_process(tmp_path: Path) -> None:
    n = 60
    code1, text1, db1, out1 = _run(tmp_path, "one", n, "--workers", "1")
    code2, text2, db2, out2 = _run(tmp_path, "two", n, "--workers", "2")
    assert code1 == code2 and code1 in (0, 1, 2), text1 + text2
    # Same decisions, one receipt per artifact, one receipt entry per artifact.
    assert _decisions(out1) == _decisions(out2)
    assert len(_decisions(out2)) == n
    receipts = entries(db2, "receipt")
    assert sorted(Counter(e.artifact_id for e in receipts).values()) == [1] * n
    assert len(entries(db2, "sample_recorded")) == len(entries(db1, "sample_recorded")) == 5 * n
    # Each worker wrote its receipts' proofs: every one is there, and verifies.
    proofs = list(out2.glob("*.proof.json"))
    assert len(proofs) == n and all(p.stat().st_size > 0 for p in proofs)
    key = tmp_path / "keys" / "jurat.key"
    v = jurat("verify", str(out2), "--key", str(key.with_suffix(".pub")), "--checkpoint",
              f"{db2}.checkpoint", "--log-key", str(key.with_name("jurat-log.pub")),
              cwd=tmp_path)
    assert v.returncode == 0, v.stdout + v.stderr
    assert f"{n} verified" in v.stdout, v.stdout
    assert "processes: 2" in text2 and "processes:" not in text1
    # The summary merges both workers: the same outcome counts and judge health lines.
    for line in text1.splitlines():
        if line.startswith(("outcomes:", "judge calls:")):
            assert line in text2
    # The shared ledger is one unbroken chain and tree.
    r = jurat("log", "verify", f"sqlite:///{db2}", "--log-key",
              str(tmp_path / "keys" / "jurat-log.pub"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.postgres
def test_two_workers_share_a_postgresql_ledger(tmp_path: Path) -> None:
    from tests.support.postgres import fresh_database

    n = 40
    camp = _campaign(tmp_path / "camp", n)
    key, _ = keys(tmp_path)
    with fresh_database() as url:
        r = jurat("run", str(camp), "--out", str(tmp_path / "out"), "--ledger", url, "--key",
                  str(key), "--quiet", "--workers", "2", cwd=tmp_path,
                  env={"XDG_STATE_HOME": str(tmp_path / "state")})
        assert r.returncode in (0, 1, 2), r.stdout + r.stderr
        assert "processes: 2" in r.stdout
        with open_ledger(url) as ledger:
            receipts = list(ledger.entries(kind="receipt"))
            assert sorted(Counter(e.artifact_id for e in receipts).values()) == [1] * n
            assert ledger.verify().tree_size == ledger.size()
    assert len(list((tmp_path / "out").glob("*.proof.json"))) == n


def test_a_worker_that_dies_stops_the_run_and_the_same_command_resumes(
        tmp_path: Path) -> None:
    n = 40
    camp = _campaign(tmp_path / "camp", n)
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    args = ("run", str(camp), "--out", str(tmp_path / "out"), "--ledger", f"sqlite:///{db}",
            "--key", str(key), "--quiet", "--workers", "2")
    # The hook makes worker 2 (the odd artifacts) hang on x037 and die right after
    # x039's receipt is recorded: some receipts are durable, x037's is not.
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(
        "import asyncio, os\n"
        "from jurat.runner import _run\n"
        "_orig = _run.JobRunner.run_one\n"
        "async def run_one(self, artifact):\n"
        "    if os.environ.get('DIE') and artifact.id == 'x037':\n"
        "        await asyncio.sleep(3600)\n"
        "    result = await _orig(self, artifact)\n"
        "    if os.environ.get('DIE') and artifact.id == 'x039':\n"
        "        os._exit(9)\n"
        "    return result\n"
        "_run.JobRunner.run_one = run_one\n")
    env = {"PYTHONPATH": str(tmp_path), "DIE": "1"}
    r = jurat(*args, cwd=tmp_path, env=env)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "worker 2 of 2 exited with status 9" in r.stderr
    assert "running the same command again resumes" in r.stderr
    done = {e.artifact_id for e in entries(db, "receipt")}
    assert "x039" in done and "x037" not in done
    # No checkpoint was signed: the receipt's proof file is there, empty, until a run ends.
    proof = tmp_path / "out" / "x039.sigstore.json.proof.json"
    assert proof.exists() and proof.stat().st_size == 0
    recorded = len(entries(db, "sample_recorded"))
    r = jurat(*args, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    receipts = entries(db, "receipt")
    assert sorted(Counter(e.artifact_id for e in receipts).values()) == [1] * n
    # Nothing recorded before the failure was drawn again.
    assert len(entries(db, "sample_recorded")) == 5 * n
    assert recorded <= 5 * n
    assert f"{5 * n - recorded} drawn in this run" in r.stdout
    assert proof.stat().st_size > 0
    v = jurat("verify", str(tmp_path / "out"), "--key", str(key.with_suffix(".pub")),
              "--checkpoint", f"{db}.checkpoint", "--log-key",
              str(key.with_name("jurat-log.pub")), cwd=tmp_path)
    assert v.returncode == 0, v.stdout + v.stderr


def test_a_worker_that_fails_to_write_its_proofs_fails_the_run(tmp_path: Path) -> None:
    n = 40
    camp = _campaign(tmp_path / "camp", n)
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(
        "from jurat.runner import _shards\n"
        "def write_proofs(ledger, receipts, note):\n"
        "    raise OSError('disk full')\n"
        "_shards.write_proofs = write_proofs\n")
    r = jurat("run", str(camp), "--out", str(tmp_path / "out"), "--ledger", f"sqlite:///{db}",
              "--key", str(key), "--quiet", "--workers", "2", cwd=tmp_path,
              env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 4, r.stdout + r.stderr
    assert "OSError: disk full" in r.stderr
    # The decisions are durable and the checkpoint signed; only the proof files are not.
    assert len(entries(db, "receipt")) == n
    assert (tmp_path / f"{db.name}.checkpoint").exists()


def test_workers_with_telemetry_is_an_input_error(tmp_path: Path) -> None:
    code, text, db, _ = _run(tmp_path, "t", 10, "--workers", "2", "--telemetry",
                             str(tmp_path / "t.ndjson"))
    assert code == 3
    assert "--workers 2 with --telemetry" in text and "fix:" in text
    assert not db.exists() or not entries(db)


def test_the_default_is_one_process_for_small_campaigns_and_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    campaign = load_campaign(_campaign(tmp_path / "c", 1))
    options = RunOptions(out_dir=tmp_path)
    assert workers_for(options, campaign, MIN_ARTIFACTS_PER_WORKER - 1) == 1
    monkeypatch.setattr("jurat.runner._shards.default_workers", lambda: 4)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert workers_for(options, campaign, 4 * MIN_ARTIFACTS_PER_WORKER) == 4
    monkeypatch.setattr("threading.active_count", lambda: 3)
    assert workers_for(options, campaign, 4 * MIN_ARTIFACTS_PER_WORKER) == 1
    # Never more workers than the smallest limit or the artifacts.
    assert usable_workers(8, campaign, 3) == 3
    small = load_campaign(_campaign(tmp_path / "s", 1, concurrency=2))
    assert usable_workers(8, small, 100) == 2
    # A requests-per-minute limit is split too: never more workers than its requests.
    paced = _campaign(tmp_path / "p", 1)
    paced.write_text(paced.read_text().replace("max_concurrency = 16",
                                               "max_concurrency = 16\nrpm = 3"))
    assert usable_workers(8, load_campaign(paced), 100) == 3


def test_merged_tallies_equal_one_tally(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path / "c", 30))
    keygen(tmp_path / "k")
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        results = asyncio.run(run_campaign_async(
            campaign, RunOptions(out_dir=tmp_path / "out"), ledger=ledger,
            key=load_private_key(tmp_path / "k" / "jurat.key"), progress=Progress()))
    assert len(results) == 30
    whole = RunTally(campaign.policy, rows=10)
    parts = [RunTally(campaign.policy, rows=10) for _ in range(3)]
    for i, result in enumerate(results):
        whole.add(result, i)
        parts[i % 3].add(result, i)
    merged = RunTally(campaign.policy, rows=10)
    for part in parts:
        merged.merge(part)
    assert merged.artifacts == whole.artifacts == 30
    assert merged.rows == whole.rows
    assert merged.rows_left_out == whole.rows_left_out
    assert merged.outcomes() == whole.outcomes()
    assert merged.contributors() == whole.contributors()
    assert merged.health() == whole.health()
    assert merged.first_receipt == whole.first_receipt
    assert (merged.drawn_calls, merged.reused_calls) == (whole.drawn_calls, whole.reused_calls)
    assert merged.drawn_cost == whole.drawn_cost


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue  # gone meanwhile
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_stop_when_their_parent_is_killed_and_the_run_resumes(tmp_path: Path) -> None:
    """The parent writes the workers' ledger entries (ledger/_remote.py): killed, it takes
    no more, so its orphaned workers stop at their next append instead of judging on; what
    was acknowledged before the kill is what the resumed run rests on."""
    import os
    import signal
    import subprocess
    import sys
    import time

    n = 60
    camp = _campaign(tmp_path / "camp", n)
    camp.write_text(camp.read_text().replace("samples = 3\n", "samples = 3\nlatency_ms = 30\n"))
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    args = ["run", str(camp), "--out", str(tmp_path / "out"), "--ledger", f"sqlite:///{db}",
            "--key", str(key), "--quiet", "--workers", "2"]
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    proc = subprocess.Popen([sys.executable, "-m", "jurat", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(entries(db, "receipt")) < 6:
        time.sleep(0.05)
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert len(workers) == 2, workers
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers), "orphaned workers went on judging"
    before = {(e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"]):
              e.payload["vote"] for e in entries(db, "sample_recorded")}
    assert 6 * 5 <= len(before) < n * 5, "the kill should land mid-run"
    r = jurat(*args, cwd=tmp_path)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    after = entries(db, "sample_recorded")
    drawn = Counter((e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
                    for e in after)
    assert len(drawn) == n * 5 and set(drawn.values()) == {1}  # nothing sampled twice
    for e in after:
        k = (e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
        if k in before:
            assert e.payload["vote"] == before[k]
    assert sorted(Counter(e.artifact_id for e in entries(db, "receipt")).values()) == [1] * n
