"""`jurat run --executor ray`: jobs as Ray tasks on a cluster the test starts itself.

One head without CPUs and two worker nodes of one CPU each, all on loopback, stopped at
the end whatever happens (tests/ray/cluster.py). The ledger is PostgreSQL, as several
worker processes write to it.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from jurat.ledger import open_ledger
from tests.runner._support import entries, jurat, keys
from tests.support.postgres import fresh_database
from tests.support.scale import scaled

from .cluster import LocalCluster, local_cluster

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CODE_CAMPAIGN = """\
[campaign]
id = "ray-code"
kind = "rubric"
allowed_destinations = ["sim"]
risk_tier = {{ votes = 1, min_agreement = 0.5 }}

[rubric]
version = "r/1"
threshold = 0.5
hard_gates = {hard_gates}
criteria = [{{ id = "correctness", weight = 1.0 }}]

[checks.python]
coverage = false
{tests}

[[judges]]
id = "a"
provider = "sim"
samples = 2
max_concurrency = 8

[[datasets]]
path = "items.jsonl"
"""

TESTS = """\
from solution import add


def test_add():
    assert add(2, 3) == 5
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster(2) as started:
        yield started


def _campaign(camp: Path, n: int, *, sandboxed: bool = False) -> Path:
    camp.mkdir(parents=True)
    if sandboxed:
        (camp / "tests").mkdir()
        (camp / "tests" / "test_solution.py").write_text(TESTS)
    (camp / "c.toml").write_text(CODE_CAMPAIGN.format(
        hard_gates='["python.parse", "tests.pass"]' if sandboxed else '["python.parse"]',
        tests='tests = "tests/test_solution.py"' if sandboxed else ""))
    with (camp / "items.jsonl").open("w") as out:
        for i in range(n):
            # Every fifth candidate is wrong (and, in the sandboxed campaign, fails its test).
            body = "a - b" if i % 5 == 0 else "a + b"
            out.write(json.dumps({
                "id": f"x{i:04d}", "text": f"def add(a, b):\n    return {body}  # {i}\n",
                "media_type": "text/x-python", "truth": "reject" if i % 5 == 0 else "accept",
            }) + "\n")
    return camp / "c.toml"


def _receipts_in(url: str) -> int:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql(
                "SELECT count(*) FROM jurat_entries WHERE kind = 'receipt'").scalar_one())
    except sa.exc.ProgrammingError:
        return 0  # the tables are not created yet
    finally:
        engine.dispose()


def _check_ledger(url: str, n: int, samples: int, judged: int | None = None) -> None:
    """One receipt per artifact; every planned sample of the ``judged`` jobs (default all)
    recorded once, none drawn twice."""
    with open_ledger(url) as ledger:
        receipts = Counter(e.artifact_id for e in ledger.entries(kind="receipt"))
        assert len(receipts) == n and set(receipts.values()) == {1}
        drawn: Counter[tuple[str, str, str, int]] = Counter()
        per_job: Counter[str] = Counter()
        for entry in ledger.entries(kind="sample_recorded"):
            vote = entry.payload["vote"]
            drawn[(entry.job_id, vote["judge"], vote["criterion"], vote["sample"])] += 1
            per_job[entry.job_id] += 1
        assert set(drawn.values()) == {1}, [k for k, c in drawn.items() if c > 1][:5]
        assert len(per_job) == (n if judged is None else judged)
        assert set(per_job.values()) == {samples}
        assert ledger.verify().tree_size == ledger.size()


def test_code_artifacts_survive_a_killed_worker(cluster: LocalCluster,
                                                             tmp_path: Path) -> None:
    n = scaled(400, 2000)  # tests/support/scale.py
    camp = _campaign(tmp_path / "camp", n)
    key, pub = keys(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / ".config"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    with fresh_database() as url:
        log = (tmp_path / "run.log").open("w")
        run = subprocess.Popen(
            [sys.executable, "-m", "jurat", "run", str(camp), "--out", str(out), "--ledger",
             url, "--key", str(key), "--quiet", "--executor", "ray", "--ray-address",
             cluster.address], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            # Kill one worker process while it runs a jurat_job, once a few hundred
            # receipts are durable: mid-run, with its batch part done.
            killed: int | None = None
            at_kill = 0
            deadline = time.monotonic() + 150
            while killed is None and run.poll() is None and time.monotonic() < deadline:
                at_kill = _receipts_in(url)
                busy = cluster.job_workers()
                if at_kill >= n // 7 and busy:
                    killed = busy[0]
                    os.kill(killed, signal.SIGKILL)
                else:
                    time.sleep(0.2)
            assert killed is not None, "no jurat_job worker seen mid-run"
            assert at_kill < n
            # 400 sandboxed candidates on a 2-core machine that xdist keeps busy with other
            # tests: 30 s alone, past 180 s under a full `make test` (seen 2026-12-08).
            code = run.wait(timeout=600)
        finally:
            if run.poll() is None:
                run.kill()
            log.close()
        text = (tmp_path / "run.log").read_text()
        assert code == 2, text  # every fifth candidate rejected by the sim judge's truth
        assert "ray, 2 jurat_job tasks at once" in text
        assert not Path(f"/proc/{killed}").exists()
        _check_ledger(url, n, samples=2)
        receipts = sorted(out.glob("*.sigstore.json"))
        assert len(receipts) == n
        proofs = list(out.glob("*.proof.json"))
        assert len(proofs) == n and all(p.stat().st_size > 0 for p in proofs)
        replay = jurat("replay", url, "--key", str(pub), cwd=tmp_path, timeout=300)
        assert replay.returncode == 0, replay.stdout[-2000:] + replay.stderr
        assert "all decisions re-derive" in replay.stdout
        one = jurat("verify", str(receipts[7]), "--key", str(pub), "--checkpoint",
                    _checkpoint_of(text), "--log-key",
                    str(key.with_name("jurat-log.pub")), cwd=tmp_path)
        assert one.returncode == 0, one.stdout + one.stderr


def _checkpoint_of(text: str) -> str:
    """The checkpoint path the run printed (``checkpoint: PATH``)."""
    for line in text.splitlines():
        if "checkpoint: " in line:
            return line.rsplit("checkpoint: ", 1)[1].strip()
    raise AssertionError(f"no checkpoint line in:\n{text}")


def test_sandboxed_tests_run_on_the_ray_workers(cluster: LocalCluster, tmp_path: Path) -> None:
    n = 20
    camp = _campaign(tmp_path / "camp", n, sandboxed=True)
    key, pub = keys(tmp_path)
    out = tmp_path / "out"
    with fresh_database() as url:
        r = jurat("run", str(camp), "--out", str(out), "--ledger", url, "--key", str(key),
                  "--quiet", "--executor", "ray", "--ray-address", cluster.address,
                  cwd=tmp_path, env={"XDG_STATE_HOME": str(tmp_path / "state")})
        assert r.returncode == 2, r.stdout + r.stderr
        # A failed hard gate vetoes: the judge is not asked about the wrong candidates.
        _check_ledger(url, n, samples=2, judged=n - n // 5)
        # The sandboxed tests ran for each candidate: the right ones pass, the wrong fail
        # (and are rejected by the hard gate whatever the judge said).
        outcomes = {}
        for path in out.glob("*.sigstore.json"):
            bundle = json.loads(path.read_text())
            predicate = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))[
                "predicate"]
            gate = next(g for g in predicate["gates"] if g["id"] == "tests.pass")
            outcomes[predicate["artifact"]["id"]] = (gate["outcome"],
                                                     predicate["decision"]["disposition"])
        assert len(outcomes) == n
        for i in range(n):
            want = ("fail", "reject") if i % 5 == 0 else ("pass", "accept")
            assert outcomes[f"x{i:04d}"] == want, (i, outcomes[f"x{i:04d}"])
        replay = jurat("replay", url, "--key", str(pub), cwd=tmp_path)
        assert replay.returncode == 0, replay.stdout + replay.stderr


@pytest.mark.parametrize(("extra", "says"), [
    (("--executor", "ray", "--telemetry", "t.ndjson"), "--executor ray with --telemetry"),
    (("--executor", "ray", "--workers", "2"), "--executor ray with --workers"),
    (("--executor", "bogus"), "--executor bogus: unknown executor"),
    (("--ray-address", "127.0.0.1:1"), "--ray-address without --executor ray"),
    (("--executor", "ray", "--ray-address", "10.1.2.3:6379"),
     "workers on other machines cannot share a SQLite file"),
])
def test_executor_options_that_cannot_run_exit_3_before_anything_is_written(
        tmp_path: Path, extra: tuple[str, ...], says: str) -> None:
    camp = _campaign(tmp_path / "camp", 3)
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    r = jurat("run", str(camp), "--out", str(tmp_path / "out"), "--ledger", f"sqlite:///{db}",
              "--key", str(key), "--quiet", *extra, cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert says in r.stderr and "fix:" in r.stderr
    assert not db.exists()


def test_serve_runs_each_job_as_a_ray_task(cluster: LocalCluster, tmp_path: Path) -> None:
    import dataclasses

    import httpx

    from tests.service._support import BAD, GOOD, artifact, free_port, make_env, wait_decided
    from tests.support.ready import wait_ready

    with fresh_database() as url:
        env = dataclasses.replace(make_env(tmp_path, samples=2), ledger_url=url)
        port = free_port()
        log = (tmp_path / "serve.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "jurat", "serve", str(env.campaigns["code"]), "--ledger",
             url, "--key", str(env.key), "--log-key", str(env.log_key), "--host",
             "127.0.0.1", "--port", str(port), "--executor", "ray", "--ray-address",
             cluster.address, "--allow-sim"], cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, proc, why=(tmp_path / "serve.log").read_text)
            token = env.auth("contributor", "code", "alice")
            with httpx.Client(base_url=base) as http:
                jobs = {}
                for n in range(6):
                    body = artifact(f"s{n}", GOOD if n % 2 else BAD, "text/x-python")
                    r = http.post("/v1/campaigns/code/jobs", json=body, headers=token)
                    assert r.status_code == 202, r.text
                    jobs[n] = r.json()["job_id"]
                for n, job in jobs.items():
                    state = wait_decided(http, job, token)
                    assert state["status"] == "decided", (state, log.name)
                    receipt = http.get(f"/v1/jobs/{job}/receipt", headers=token)
                    assert receipt.status_code == 200, receipt.text
                    predicate = json.loads(base64.b64decode(
                        receipt.json()["dsseEnvelope"]["payload"]))["predicate"]
                    gate = next(g for g in predicate["gates"] if g["id"] == "tests.pass")
                    # The hidden tests ran sandboxed on a worker: the wrong square fails
                    # them, and the hard gate rejects it.
                    assert gate["outcome"] == ("pass" if n % 2 else "fail"), gate
                    if n % 2 == 0:
                        assert state["decision"]["disposition"] == "reject", state
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        assert "jobs run as Ray tasks (jurat_job), at most 2 at once" in (
            tmp_path / "serve.log").read_text()
        with open_ledger(url) as ledger:
            receipts = Counter(e.job_id for e in ledger.entries(kind="receipt"))
        assert sorted(receipts) == sorted(jobs.values()) and set(receipts.values()) == {1}
        replay = jurat("replay", url, "--key", str(env.pub), cwd=tmp_path)
        assert replay.returncode == 0, replay.stdout + replay.stderr


def test_without_an_address_a_local_runtime_starts_and_stops(tmp_path: Path) -> None:
    n = 30
    camp = _campaign(tmp_path / "camp", n)
    key, pub = keys(tmp_path)
    db = tmp_path / "l.db"
    # A relative SQLite path: the workers, in other directories, must find the same file.
    # HOME: Ray may write a token to ~/.ray when it starts a runtime; not the real one.
    r = jurat("run", str(camp), "--out", "out", "--ledger", "sqlite:///l.db", "--key",
              str(key), "--quiet", "--executor", "ray", cwd=tmp_path,
              env={"HOME": str(tmp_path / "home")})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "executor: ray" in r.stdout
    receipts = Counter(e.artifact_id for e in entries(db, "receipt"))
    assert len(receipts) == n and set(receipts.values()) == {1}
    assert len(list((tmp_path / "out").glob("*.sigstore.json"))) == n
    replay = jurat("replay", f"sqlite:///{db}", "--key", str(pub), cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr


ENDPOINT = """\
[campaign]
id = "ray-limit"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 1.0 }}]

[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 3
timeout_s = 30
max_concurrency = 3

[[datasets]]
path = "items.jsonl"
"""


def test_an_endpoints_max_concurrency_holds_across_the_cluster(cluster: LocalCluster,
                                                                tmp_path: Path) -> None:
    import threading

    from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, echo_judge

    latency = 0.25
    arrivals: list[float] = []
    lock = threading.Lock()

    def judge(request: FakeRequest) -> Reply | dict[str, object]:
        with lock:
            arrivals.append(time.monotonic())
        return echo_judge(request)

    n = 40
    key, _ = keys(tmp_path)
    with FakeOpenAI(behaviour=judge, latency_ms=1000 * latency) as server:
        camp = tmp_path / "camp"
        camp.mkdir()
        (camp / "c.toml").write_text(ENDPOINT.format(url=server.url))
        with (camp / "items.jsonl").open("w") as out:
            for i in range(n):
                out.write(json.dumps({"id": f"e{i:02d}", "text": f"answer {i}"}) + "\n")
        with fresh_database() as url:
            r = jurat("run", str(camp / "c.toml"), "--out", str(tmp_path / "out"),
                      "--ledger", url, "--key", str(key), "--quiet", "--executor", "ray",
                      "--ray-address", cluster.address, cwd=tmp_path,
                      env={"FAKE_KEY": "sk-test", "XDG_STATE_HOME": str(tmp_path / "s")})
        assert r.returncode in (0, 1, 2), r.stdout + r.stderr
        assert "ray, 2 jurat_job tasks at once" in r.stdout
    assert len(arrivals) == 3 * n
    # A call is in flight at the server for `latency` after it arrives: the most calls
    # that arrived within one latency of each other is the peak the endpoint saw. Two
    # workers each keeping the whole limit could reach 6.
    arrivals.sort()
    window = 0.9 * latency
    peak = max(sum(1 for a in arrivals if t - window < a <= t) for t in arrivals)
    assert 2 <= peak <= 3, peak
