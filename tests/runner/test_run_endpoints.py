"""`jurat run` against a real OpenAI-compatible server on 127.0.0.1 started by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.receipts import read_statement
from tests.support.fake_openai import FakeOpenAI, echo_judge

from ._support import entries, jurat, keys, verify

RUBRIC = """\
[campaign]
id = "remote"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = [{allowed}]

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
timeout_s = 10
price_in_per_mtok = 1.0
price_out_per_mtok = 2.0

[[artifacts]]
id = "a1"
text = "def f():\\n    return 1\\n"
"""


def _run(tmp: Path, campaign: Path, **env: str) -> tuple[int, str]:
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp,
              env={"FAKE_KEY": "sk-test", **env})
    return r.returncode, r.stdout + r.stderr


def test_judge_outside_allowed_destinations_is_refused_before_any_request(tmp_path: Path
                                                                          ) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = tmp_path / "c.toml"
        campaign.write_text(RUBRIC.format(url=server.url, allowed='"sim"'))
        code, out = _run(tmp_path, campaign)
        assert code == 3, out
        assert "allowed_destinations" in out and server.url.rstrip("/") in out
        assert server.requests == 0
    assert entries(tmp_path / "l.db") == []


def test_destinations_compare_scheme_host_and_port_loosely_paths_exactly(tmp_path: Path
                                                                          ) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = tmp_path / "c.toml"
        spelled = f"HTTP://127.0.0.1:{server.port}/v1/"
        campaign.write_text(RUBRIC.format(url=server.url, allowed=f'"{spelled}"'))
        code, out = _run(tmp_path, campaign)
        assert code == 0, out
        assert server.requests == 3
        # Intake once lower-cased paths and the engine did not: a late refusal, exit 1, a
        # ledger written. Now one rule refuses it at intake.
        (tmp_path / "l.db").unlink()
        campaign.write_text(RUBRIC.format(url=server.url, allowed=f'"{server.url.upper()}"'))
        code, out = _run(tmp_path, campaign)
        assert code == 3, out
        assert "allowed_destinations" in out and "judges[0].base_url" in out
        assert server.requests == 3
    assert entries(tmp_path / "l.db") == []


ENV_CAMPAIGN = """\
[campaign]
id = "env"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{allowed}"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 1.0 }}]

[[judges]]
id = "remote"
provider = "{provider}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 1
timeout_s = 5

[[artifacts]]
id = "a1"
text = "def f():\\n    return 1\\n"
"""


@pytest.mark.parametrize(("provider", "env", "attr"), [
    ("anthropic", "ANTHROPIC_BASE_URL", "root"),
    ("openai-compat", "OPENAI_BASE_URL", "url"),
])
def test_a_base_url_variable_cannot_point_a_judge_at_an_allowed_address(
    tmp_path: Path, provider: str, env: str, attr: str
) -> None:
    """The variable names an allowed address, but the judge does not: nothing is sent."""
    with FakeOpenAI(behaviour=echo_judge) as server:
        address = getattr(server, attr)
        campaign = tmp_path / "c.toml"
        campaign.write_text(ENV_CAMPAIGN.format(allowed=address, provider=provider))
        code, out = _run(tmp_path, campaign, **{env: address})
        assert code == 3, out
        assert "base-URL environment variables are never read" in " ".join(out.split())
        assert server.requests == 0
        assert entries(tmp_path / "l.db") == []
        # Configured explicitly, the same address is used.
        campaign.write_text(ENV_CAMPAIGN.format(allowed=address, provider=provider).replace(
            'model = "fake-judge"', f'model = "fake-judge"\nbase_url = "{address}"'))
        code, out = _run(tmp_path, campaign, **{env: address})
        assert code == 0, out
        assert server.requests == 1


def test_openai_compatible_judge_end_to_end(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = tmp_path / "c.toml"
        campaign.write_text(RUBRIC.format(url=server.url, allowed=f'"{server.url}"'))
        code, out = _run(tmp_path, campaign)
        assert code == 0, out
        assert server.requests == 3
    receipt = tmp_path / "out" / "a1.sigstore.json"
    pred = read_statement(receipt.read_bytes())["predicate"]
    assert pred["replay_fidelity_level"] == "RF-1"  # an API judge's votes are not reproducible
    assert pred["decision"]["disposition"] == "accept"
    assert all(v["returned_model"] for v in pred["votes"])
    assert "sk-test" not in receipt.read_text()  # the key never enters the receipt
    _, pub = keys(tmp_path)
    assert verify(receipt, pub, tmp_path).returncode == 0


def test_missing_api_key_is_a_clear_error_before_any_request(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = tmp_path / "c.toml"
        campaign.write_text(RUBRIC.format(url=server.url, allowed=f'"{server.url}"')
                            .replace('api_key_env = "FAKE_KEY"', 'api_key_env = "NO_SUCH_KEY"'))
        key, _ = keys(tmp_path)
        r = jurat("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                  f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp_path)
        assert r.returncode == 3, r.stdout + r.stderr  # a configuration error, never 1
        assert "NO_SUCH_KEY" in r.stderr
        assert server.requests == 0
    # Found before the ledger opened: no job_received, no evaluation_failed, no file.
    assert not (tmp_path / "l.db").exists()


CRITERIA = """\
[campaign]
id = "exec"
kind = "criteria"
allowed_destinations = ["{url}", "stub"]

[criteria]
samples = 3
blocker_samples = 5
items = [{{ id = "polite", text = "Is the reply polite?", blocker = true }}]

[subject]
provider = "openai-compat"
base_url = "{url}"
model = "fake-subject"
api_key_env = "FAKE_KEY"
prompt = "Reply to the customer: {{input}}"

[[judges]]
id = "j"
provider = "stub:always-yes"

[[artifacts]]
id = "case1"
input = "Where is my parcel?"
"""


def test_criteria_subject_runs_at_temperature_zero_and_an_unchanged_output_is_not_rejudged(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = tmp_path / "c.toml"
        campaign.write_text(CRITERIA.format(url=server.url))
        code, out = _run(tmp_path, campaign)
        assert code == 0, out
        assert server.requests == 1  # one execution; the stub judges locally
        body = server.received[0].body
        assert b"Where is my parcel?" in body and b'"temperature":0' in body.replace(b" ", b"")
        first = (tmp_path / "out" / "case1.sigstore.json").read_bytes()
        code, out = _run(tmp_path, campaign)
        assert code == 0, out
        # Each run executes the subject again (issue 27); the same output keeps its receipt.
        assert server.requests == 2
        assert (tmp_path / "out" / "case1.sigstore.json").read_bytes() == first
    pred = read_statement((tmp_path / "out" / "case1.sigstore.json").read_bytes())["predicate"]
    gate = next(g for g in pred["gates"] if g["id"] == "subject.execution")
    assert gate["outcome"] == "pass" and gate["data"]["temperature"] == 0.0
    assert pred["decision"]["rollout"] == "SHIP"
