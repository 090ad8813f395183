"""`jurat run` on the criteria, pairwise and equivalence kinds; resume after SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from jurat.receipts import read_statement

from ._support import copy_example, entries, jurat, keys, verify


def _run(campaign: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    key, _ = keys(tmp)
    return jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
                 f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)


def _statements(tmp: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    return {p.name.split(".sigstore")[0]: read_statement(p.read_bytes())
            for p in (tmp / "out").glob("*.sigstore.json")}


def test_criteria_quickstart(tmp_path: Path) -> None:
    campaign = copy_example("criteria", tmp_path)
    r = _run(campaign, tmp_path)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    _, pub = keys(tmp_path)
    statements = _statements(tmp_path)
    assert len(statements) == 6
    for name in statements:
        assert verify(tmp_path / "out" / f"{name}.sigstore.json", pub, tmp_path).returncode == 0
    for st in statements.values():
        d = st["predicate"]["decision"]
        assert d["rollout"] in ("SHIP", "WARN", "BLOCK")
        assert d["stability"]["min_blocker_agreement"] == 0.8
        blockers = [c for c in d["criteria"] if c["blocker"]]
        assert blockers and all(c["samples"] == 11 for c in blockers)
        assert all(c["samples"] == 5 for c in d["criteria"] if not c["blocker"])
    # Gold-incorrect answers: the blocker "correct" must not SHIP.
    wrong = [st for st in statements.values()
             if st["predicate"]["decision"]["rollout"] == "SHIP"
             and "gsm8k-2-" in st["predicate"]["artifact"]["id"]]
    assert not wrong


PAIRWISE = """\
[campaign]
id = "pw"
kind = "pairwise"
allowed_destinations = ["sim"]

[rubric]
version = "pw/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "a"
provider = "sim"
reliability = 0.95
seed = 1
samples = 6

[[judges]]
id = "b"
provider = "sim"
reliability = 0.95
seed = 2
samples = 6

[[judges]]
id = "c"
provider = "sim"
reliability = 0.95
seed = 3
samples = 6

[[artifacts]]
id = "p1"
a = "Paris is the capital of France."
b = "Lyon is the capital of France."
truth = "A"

[[artifacts]]
id = "p2"
a = "2 + 2 = 5"
b = "2 + 2 = 4"
truth = "B"
"""


def test_pairwise_restores_order_and_verifies(tmp_path: Path) -> None:
    campaign = tmp_path / "pw.toml"
    campaign.write_text(PAIRWISE)
    r = _run(campaign, tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    statements = _statements(tmp_path)
    assert statements["p1"]["predicate"]["decision"]["label"] == "A"
    assert statements["p2"]["predicate"]["decision"]["label"] == "B"
    orders = Counter(v["order"] for st in statements.values()
                     for v in st["predicate"]["votes"])
    assert set(orders) == {"AB", "BA"}  # presentation order is drawn per sample
    _, pub = keys(tmp_path)
    assert verify(tmp_path / "out" / "p1.sigstore.json", pub, tmp_path).returncode == 0


EQUIVALENCE = """\
[campaign]
id = "eq"
kind = "equivalence"
allowed_destinations = ["stub"]

[equivalence]
votes = 3
min_agreement = 3

[[judges]]
id = "j"
provider = "stub:numeric-simulated"

[[artifacts]]
id = "settled-equal"
a = "She makes 9 * 2 = $18 every day.\\n#### 18"
b = "A: 18"

[[artifacts]]
id = "settled-different"
a = "#### 26"
b = "A: 18"

[[artifacts]]
id = "words"
a = "two hundred"
b = "The answer is 200."
"""


def test_equivalence_deterministic_first_then_judge(tmp_path: Path) -> None:
    campaign = tmp_path / "eq.toml"
    campaign.write_text(EQUIVALENCE)
    r = _run(campaign, tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    st = _statements(tmp_path)
    eq = st["settled-equal"]["predicate"]
    assert eq["decision"]["equivalent"] is True and eq["votes"] == []
    assert eq["gates"][0]["id"] == "equivalence.deterministic"
    diff = st["settled-different"]["predicate"]
    assert diff["decision"]["equivalent"] is False and diff["votes"] == []
    words = st["words"]["predicate"]
    assert len(words["votes"]) == 3  # left to the judge


SLOW = """\
[campaign]
id = "slow"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 1.0 }]
"""


def test_sigint_then_rerun_resamples_nothing(tmp_path: Path) -> None:
    text = SLOW
    for j in range(3):
        text += (f'\n[[judges]]\nid = "j{j}"\nprovider = "sim"\nseed = {j}\nsamples = 5\n'
                 'latency_ms = 250\nmax_concurrency = 1\n')
    for i in range(6):
        text += f'\n[[artifacts]]\nid = "t{i}"\ntext = "answer {i}"\ntruth = "accept"\n'
    campaign = tmp_path / "slow.toml"
    campaign.write_text(text)
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jurat", "run", str(campaign), "--out", str(tmp_path / "out"),
         "--ledger", f"sqlite:///{db}", "--key", str(key), "--quiet"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A shell without job control starts background commands with SIGINT ignored, and
        # the child inherits that: the run must get SIGINT as a terminal would send it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(entries(db, "sample_recorded")) < 6:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    first = entries(db, "sample_recorded")
    assert 6 <= len(first) < 90, "the interrupt should land mid-run"
    r = jurat("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
              f"sqlite:///{db}", "--key", str(key), "--quiet", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    after = entries(db, "sample_recorded")
    keys_ = Counter((e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["criterion"],
                     e.payload["vote"]["sample"]) for e in after)
    assert max(keys_.values()) == 1  # no sample was drawn twice
    assert len(after) == 6 * 3 * 5
    # The samples recorded before the interrupt are exactly the ones in the receipts.
    before = {(e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"]):
              e.payload["vote"] for e in first}
    for e in after:
        k = (e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
        if k in before:
            assert e.payload["vote"] == before[k]
