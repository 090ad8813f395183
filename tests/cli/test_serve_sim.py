"""`jurat serve` refuses a panel of `sim` judges unless `--allow-sim` (issue 37, item 5): a
submitted job carries no `truth`, so a sim judge votes for a seeded random label."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.ledger import open_ledger
from tests.service._support import make_env, subprocess_server
from tests.support.cli import invoke

#: One model judge and one sim judge: the sim one alone is enough to refuse.
MIXED = """\
[campaign]
id = "mixed"
kind = "rubric"
allowed_destinations = ["stub", "sim"]

[rubric]
version = "essay/1"
hard_gates = []
criteria = [ { id = "correctness", weight = 1.0 } ]

[[judges]]
id = "stand-in"
provider = "stub:always-accept"
samples = 1

[[judges]]
id = "coin"
provider = "sim"
samples = 1
"""


def test_a_sim_panel_is_refused_naming_its_judges_and_the_flag(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    result = invoke("serve", str(env.campaigns["text"]), "--ledger", env.ledger_url,
                    "--key", str(env.key), "--log-key", str(env.log_key), "--port", "1")
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert f"{env.campaigns['text']}:" in text and "field `judges[0].provider`" in text
    assert "judges 'A', 'B', 'C' of campaign 'text'" in text
    assert "a submitted job carries none" in text and "coin flip" in text
    assert "fix: judge with a model provider" in text and "jurat serve --allow-sim" in text
    assert "serving" not in result.output
    with open_ledger(env.ledger_url) as ledger:
        assert list(ledger.entries()) == []


def test_one_sim_judge_beside_a_model_judge_is_named_by_its_place(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    result = invoke("serve", str(path), "--ledger", env.ledger_url, "--key", str(env.key),
                    "--log-key", str(env.log_key), "--port", "1")
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "field `judges[1].provider`" in text and "judge 'coin' of campaign 'mixed'" in text
    assert "mixed.toml:" in text  # with the judge's line


@pytest.mark.slow
def test_allow_sim_serves_the_panel_and_says_what_its_votes_are(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    # subprocess_server starts `jurat serve … --allow-sim`, as every sim panel of the tests.
    with subprocess_server(env, ("text",)) as (proc, url):
        assert proc.poll() is None and url.startswith("http://127.0.0.1:")
    log = "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))
    assert "--allow-sim: the sim judges of text have no truth label" in log
    assert "seeded coin flips" in log

