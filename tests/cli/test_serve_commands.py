"""`jurat token create|revoke`, `jurat serve`'s refusals and `jurat adjudicate`'s input
errors: exit statuses and what is printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jurat.ledger import open_ledger
from jurat.service import TokenStore
from tests.service._support import TEXT, artifact, client, make_env, wait_decided
from tests.support.cli import invoke


def test_token_create_prints_the_token_alone_on_its_last_line_and_stores_its_hash(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    result = invoke("token", "create", "--ledger", url, "--campaign", "not-served-yet",
                    "--role", "contributor", "--subject", "alice", "--new-campaign")
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"jt_[A-Za-z0-9_-]{43}", token)
    assert token not in (tmp_path / "new.db").read_bytes().decode("latin-1")
    with TokenStore(url) as store:
        principal = store.lookup(token)
    assert principal is not None and principal.subject == "alice"
    assert principal.role == "contributor" and principal.campaign == "not-served-yet"
    revoked = invoke("token", "revoke", "--ledger", url, principal.token_id)
    assert revoked.exit_code == 0, revoked.output
    with TokenStore(url) as store:
        assert store.lookup(token) is None
    assert invoke("token", "revoke", "--ledger", url, "jt_unknown").exit_code == 3


@pytest.mark.parametrize(("args", "words"), [
    (("--campaign", "c", "--role", "admin"), "is not a role"),
    (("--campaign", "c", "--role", "contributor"), "needs --subject"),
    (("--campaign", "a b", "--role", "operator"), "is not a campaign id"),
    (("--campaign", "c", "--role", "reviewer", "--subject", "r:1"), "is not a valid name"),
])
def test_token_create_refuses_bad_input(tmp_path: Path, args: tuple[str, ...],
                                        words: str) -> None:
    result = invoke("token", "create", "--ledger", f"sqlite:///{tmp_path / 'l.db'}", *args)
    assert result.exit_code == 3 and words in result.output, result.output


def test_serve_refuses_a_campaign_whose_policy_changed(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        job = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "x"),
                        headers=alice).json()["job_id"]
        wait_decided(http, job, alice)
    env.campaigns["text"].write_text(TEXT.format(samples=5, latency=0))
    result = invoke("serve", str(env.campaigns["text"]), "--ledger", env.ledger_url,
                    "--key", str(env.key), "--log-key", str(env.log_key), "--port", "1",
                    "--allow-sim")
    assert result.exit_code == 3, result.output
    assert "under another policy" in result.output
    with open_ledger(env.ledger_url) as ledger:
        assert sum(1 for _ in ledger.entries(kind="job_received")) == 1


def test_serve_refuses_bad_input_before_writing(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    missing = invoke("serve", str(tmp_path / "nope.toml"), "--ledger", env.ledger_url,
                     "--key", str(env.key))
    assert missing.exit_code == 3 and "cannot read campaign file" in missing.output
    unknown = invoke("serve", str(env.campaigns["text"]), "--executor", "nope",
                     "--ledger", env.ledger_url, "--key", str(env.key))
    assert unknown.exit_code == 3 and "unknown executor" in unknown.output
    pairs = tmp_path / "pairs.toml"
    pairs.write_text('[campaign]\nid = "p"\nkind = "equivalence"\n'
                     'allowed_destinations = ["stub"]\n[[judges]]\nid = "s"\n'
                     'provider = "stub:always-equivalent"\n')
    refused = invoke("serve", str(pairs), "--ledger", env.ledger_url, "--key", str(env.key))
    assert refused.exit_code == 3 and "judges pairs" in refused.output, refused.output
    with open_ledger(env.ledger_url) as ledger:
        assert list(ledger.entries()) == []


def test_adjudicate_refuses_an_unknown_job(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    with open_ledger(env.ledger_url):
        pass
    result = invoke("adjudicate", env.ledger_url, "0" * 64, "--disposition", "reject",
                    "--rationale", "no", "--reviewer", "rita", "--key", str(env.key))
    assert result.exit_code == 3 and "no receipt" in result.output, result.output


def test_adjudicate_settles_an_escalation_of_jurat_run(tmp_path: Path) -> None:
    from jurat.receipts import read_statement
    from tests.service._support import CRITICAL, GOOD

    env = make_env(tmp_path)
    (tmp_path / "sq.py").write_text(GOOD)
    campaign = tmp_path / "run.toml"
    campaign.write_text(CRITICAL.format() + '\n[[artifacts]]\nid = "sq"\npath = "sq.py"\n')
    run = invoke("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                 env.ledger_url, "--key", str(env.key), "--quiet")
    assert run.exit_code == 1, run.output  # escalated: the tier needs an adjudication
    first = (tmp_path / "out" / "sq.sigstore.json").read_bytes()
    job = read_statement(first)["predicate"]["inputs"]["job_id"]
    out = tmp_path / "sq.v2.sigstore.json"
    result = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                    "--rationale", "Reviewed.", "--reviewer", "rita", "--key", str(env.key),
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "review version 2: accept" in result.stdout
    predicate = read_statement(out.read_bytes())["predicate"]
    assert predicate["decision"]["disposition"] == "accept"
    assert predicate["review"]["adjudication"]["reviewer"] == "rita"
    assert invoke("verify", str(out), "--key", str(env.pub)).exit_code == 0
    assert invoke("replay", env.ledger_url, "--key", str(env.pub)).exit_code == 0
    # The same run again reuses the artifact's latest review: the adjudicated accept.
    again = invoke("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                   env.ledger_url, "--key", str(env.key), "--quiet")
    assert again.exit_code == 0, again.output
    assert "v2 (reused)" in again.output and "0 drawn in this run" in again.output
    # The output directory holds the latest review, and its proof is for that review.
    assert (tmp_path / "out" / "sq.sigstore.json").read_bytes() == out.read_bytes()
    checked = invoke("verify", str(tmp_path / "out" / "sq.sigstore.json"), "--key",
                     str(env.pub), "--checkpoint", env.ledger_url.removeprefix("sqlite:///")
                     + ".checkpoint", "--log-key", str(env.log_key.with_suffix(".pub")))
    assert checked.exit_code == 0, checked.output


def test_serve_without_fastapi_says_what_to_install(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    env = make_env(tmp_path)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # an import of it now fails
    result = invoke("serve", str(env.campaigns["text"]), "--ledger", env.ledger_url,
                    "--key", str(env.key))
    assert result.exit_code == 3, result.output
    assert "pip install 'jurat[serve]'" in result.output
