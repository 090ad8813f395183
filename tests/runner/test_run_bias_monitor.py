"""The live bias monitor: `jurat run` reads the campaign's own votes against `[monitor]`.

A position-biased judge (``stub:always-first``) raises alarms (first-shown preference and
order-reversal consistency); the sim panel, on the same artifacts, raises none.
"""

from __future__ import annotations

from pathlib import Path

from jurat.campaign import load_campaign
from jurat.receipts import read_statement

from ._support import jurat, keys

_HEAD = """\
[campaign]
id = "monitor"
kind = "pairwise"
allowed_destinations = ["sim", "stub"]

[rubric]
version = "pw/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 1.0 }]
"""

# Right answers as often shorter as longer: on live data, length and quality can go
# together, and then the verbosity reading rises for a fair judge too (docs/report.md).
_PAIRS = [
    ("Paris is the capital of France.", "Lyon is the capital city of France.", "A"),
    ("2 + 2 = 5", "2 + 2 = 4", "B"),
    ("Water boils at 100 C at sea level.", "Water boils at 50 C.", "A"),
    ("The Moon orbits Mars, as is well known.", "The Moon orbits the Earth.", "B"),
    ("7 is prime.", "7 is an even number.", "A"),
    ("Squares have five sides.", "Squares have four sides.", "B"),
    ("Ice is frozen water.", "Ice is salt.", "A"),
    ("Bees make milk.", "Bees make honey.", "B"),
]


def _campaign(tmp: Path, judges: str) -> Path:
    text = _HEAD + judges
    for i, (a, b, truth) in enumerate(_PAIRS):
        text += f'\n[[artifacts]]\nid = "p{i}"\na = "{a}"\nb = "{b}"\ntruth = "{truth}"\n'
    path = tmp / "monitor.toml"
    path.write_text(text)
    return path


def _run(campaign: Path, tmp: Path) -> str:
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    return r.stdout


def _report(tmp: Path) -> str:
    _, pub = keys(tmp)
    r = jurat("report", str(tmp / "out"), "--html", str(tmp / "report.html"), "--key",
              str(pub), cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    return (tmp / "report.html").read_text()


_BIASED = """
[[judges]]
id = "first"
provider = "stub:always-first"
samples = 6

[[judges]]
id = "fair"
provider = "sim"
reliability = 0.95
seed = 1
samples = 6
"""

_SIM = "".join(f"""
[[judges]]
id = "sim{j}"
provider = "sim"
reliability = 0.85
seed = {j}
samples = 6
""" for j in range(3))


def test_position_biased_stub_raises_alarms(tmp_path: Path) -> None:
    out = _run(_campaign(tmp_path, _BIASED), tmp_path)
    assert "bias monitor" in out
    alarms = [line for line in out.splitlines() if line.startswith("bias alarm")]
    assert any("judge first: first-position 1.00" in line for line in alarms), out
    assert any("judge first: order-consistency 0.00" in line for line in alarms), out
    assert not any("judge fair" in line for line in alarms), out
    # Issue 27: an alarm needs a person, so the run never exits 0 with one.
    assert "exit status 0" not in out, out
    html = _report(tmp_path)
    assert "judge first: first-position 1.00 outside max_first_position 0.75" in html
    assert "judge first: order-consistency 0.00" in html
    alarms_html = html.split('id="bias-alarms"')[1].split("</ul>")[0]
    assert "judge first" in alarms_html and "judge fair" not in alarms_html


#: Three fair judges outvote a biased one: every decision is final, the alarm is not.
_OUTVOTED = """
[[judges]]
id = "first"
provider = "stub:always-first"
samples = 3
""" + "".join(f"""
[[judges]]
id = "fair{j}"
provider = "sim"
reliability = 1.0
seed = {j}
samples = 6
""" for j in range(3))


def test_an_alarm_turns_an_all_final_run_into_exit_1(tmp_path: Path) -> None:
    """Issue 27, from outside: decisions that alone would exit 0 exit 1 with an alarm, and
    the last line says why."""
    key, _ = keys(tmp_path)
    r = jurat("run", str(_campaign(tmp_path, _OUTVOTED)), "--out", str(tmp_path / "out"),
              "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet",
              cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bias alarm: judge first: first-position 1.00" in r.stdout
    assert "exit status 1: 2 bias alarms (above): a person should look before these " \
           "decisions are acted on; the decisions alone would exit 0" in r.stdout, r.stdout


def test_sim_panel_raises_no_alarm(tmp_path: Path) -> None:
    out = _run(_campaign(tmp_path, _SIM), tmp_path)
    assert "bias monitor: no alarm" in out, out
    assert "bias alarm" not in out
    html = _report(tmp_path)
    assert '<p id="bias-alarms">No alarm' in html


def test_readings_from_receipts_match_the_run(tmp_path: Path) -> None:
    """The monitor reads the recorded votes: re-read from the receipts, the same alarms."""
    from jurat.judges import BiasCounts
    from jurat.models import Artifact, Vote

    campaign_path = _campaign(tmp_path, _BIASED)
    _run(campaign_path, tmp_path)
    campaign = load_campaign(campaign_path)
    counts = BiasCounts()
    by_id = {f"p{i}": (a, b) for i, (a, b, _) in enumerate(_PAIRS)}
    for path in sorted((tmp_path / "out").glob("*.sigstore.json")):
        predicate = read_statement(path.read_bytes())["predicate"]
        a, b = by_id[predicate["artifact"]["id"]]
        artifact = Artifact(id=predicate["artifact"]["id"], sha256="0" * 64,
                            media_type="application/vnd.jurat.pair+json", a=a, b=b)
        counts.add("pairwise", artifact, [Vote.model_validate(v) for v in predicate["votes"]])
    readings = {r.judge: r for r in counts.readings(["first", "fair"])}
    assert readings["first"].order.first_position_rate == 1.0
    assert {a.monitor for a in readings["first"].alarms(campaign.monitor)} == {
        "first-position", "order-consistency"}
    assert readings["fair"].alarms(campaign.monitor) == []
