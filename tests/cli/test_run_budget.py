"""``[budget]`` (issue 29): a capped ``jurat run`` against a priced loopback judge stops
before a call could cross the cap, records what it drew and exits 4; a run under a raised
cap resumes it, drawing only the samples not yet recorded. The judge is
tests/support/fake_openai.py's real HTTP server, so calls are counted where they arrive.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jurat.judges import Price
from jurat.ledger import open_ledger
from tests.support.fake_openai import FakeOpenAI, echo_judge

from ._run_support import run

CAMPAIGN = """\
[campaign]
id = "capped"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 3
blocker_samples = 3
items = [{{ id = "polite", text = "Is the reply polite?", blocker = false }}]

{budget}

[[judges]]
id = "paid"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
max_tokens = 64
retries = 0
timeout_s = 10
{prices}
"""
PRICES = "price_in_per_mtok = 1.0\nprice_out_per_mtok = 2.0"
#: What the fake judge reports for every call: 120 tokens in, 40 out.
CALL_USD = Price(in_per_mtok=1.0, out_per_mtok=2.0).usd(120, 40)
ARTIFACTS = 4
CALLS = ARTIFACTS * 3


def write(root: Path, url: str, budget: str, prices: str = PRICES) -> Path:
    text = CAMPAIGN.format(url=url, budget=budget, prices=prices)
    for i in range(ARTIFACTS):
        text += f'\n[[artifacts]]\nid = "r{i}"\ntext = "Thank you kindly, reply {i}."\n'
    path = root / "campaign.toml"
    path.write_text(text)
    return path


def recorded(root: Path) -> tuple[int, float, int, list[str]]:
    """Samples recorded, their cost at the declared prices, receipts, entry kinds."""
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        entries = list(ledger.entries())
    votes = [e.payload["vote"] for e in entries if e.kind == "sample_recorded"]
    price = Price(in_per_mtok=1.0, out_per_mtok=2.0)
    spent = sum(price.usd(v["usage"]["input_tokens"], v["usage"]["output_tokens"]) or 0.0
                for v in votes)
    receipts = sum(1 for e in entries if e.kind == "receipt")
    return len(votes), spent, receipts, [e.kind for e in entries]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAI(behaviour=echo_judge) as fake:
        yield fake


def test_a_capped_run_stops_before_the_cap_and_a_raised_cap_resumes_it(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cap = 0.003  # about a worst case and a half; 15 calls at what the judge reports
    first = run(tmp_path, write(tmp_path, server.url, f"[budget]\nusd = {cap}"), server)
    assert first.code == 4, first.out + first.err
    samples, spent, receipts, kinds = recorded(tmp_path)
    # Stopped part-way, and never past the cap by what the ledger records.
    assert 0 < samples < CALLS and len(first.requests) == samples
    assert spent <= cap
    assert receipts < ARTIFACTS
    # The cap is not a failed evaluation: nothing is journalled as one.
    assert "evaluation_failed" not in kinds
    err = " ".join(first.err.split())
    assert f"budget cap ${cap:.4f} reached: $" in err
    # Every job started (4 fit in flight), so each sample not recorded is a call not sent.
    unsent = CALLS - samples
    # The spend the run counted: at least what the ledger records, at most the cap.
    counted = float(re.search(r"reached: \$([0-9.]+) spent", err).group(1))  # type: ignore[union-attr]
    assert round(spent, 4) <= counted <= cap
    assert f", {unsent} call{'s' if unsent > 1 else ''} not sent; " in err
    assert "raise [budget] usd to resume" in err
    left = ARTIFACTS - receipts
    assert f"{left} of {ARTIFACTS} artifacts {'have' if left > 1 else 'has'} no receipt" in err
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.sigstore.json")}
    assert len(before) == receipts

    # Raising the cap changes no policy: the same campaign resumes (not exit 3, issue 27).
    second = run(tmp_path, write(tmp_path, server.url, "[budget]\nusd = 1.0"), server)
    assert second.code == 0, second.out + second.err
    total, spent_all, receipts_all, _ = recorded(tmp_path)
    assert total == CALLS and receipts_all == ARTIFACTS
    assert len(second.requests) == CALLS - samples  # no recorded sample drawn again
    assert spent_all == pytest.approx(CALLS * (CALL_USD or 0.0))
    assert f"judge calls: {CALLS - samples} drawn in this run, " in second.out
    # Finished receipts are unaffected; the cap is in none of them.
    for name, data in before.items():
        assert (tmp_path / "out" / name).read_bytes() == data
    assert "budget" not in first.predicate("r0")["campaign"]["policy"]


def test_a_token_cap_below_one_call_sends_nothing(tmp_path: Path, server: FakeOpenAI) -> None:
    result = run(tmp_path, write(tmp_path, server.url, "[budget]\ntokens = 100", prices=""),
                 server)
    assert result.code == 4, result.out + result.err
    assert server.received == []
    err = " ".join(result.err.split())
    assert "budget cap 100 tokens reached: 0 tokens spent" in err
    assert "raise [budget] tokens to resume" in err
    assert recorded(tmp_path)[0] == 0


def test_a_usd_cap_with_an_unpriced_judge_is_refused_at_load(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    result = run(tmp_path, write(tmp_path, server.url, "[budget]\nusd = 1.0",
                                 prices="price_in_per_mtok = 1.0"), server)
    assert result.code == 3, result.out + result.err
    err = " ".join(result.err.split())
    assert "judge 'paid' declares no price_out_per_mtok" in err
    assert "declare prices on judge 'paid'" in err
    assert server.received == [] and not result.has_ledger()


def test_a_budget_runs_in_one_process(tmp_path: Path, server: FakeOpenAI) -> None:
    result = run(tmp_path, write(tmp_path, server.url, "[budget]\nusd = 1.0"), server,
                 "--workers", "2")
    assert result.code == 3, result.out + result.err
    assert "--workers 2 with [budget]" in " ".join(result.err.split())
    assert server.received == []


SUBJECT = """\
[campaign]
id = "capped-subject"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "correct", text = "Is the answer correct?", blocker = true }}]

[budget]
tokens = 100

[subject]
provider = "openai-compat"
base_url = "{url}"
model = "fake-subject"
api_key_env = "FAKE_KEY"
prompt = "Answer: {{input}}"

[[judges]]
id = "paid"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"

[[artifacts]]
id = "q1"
input = "What is 2 plus 2?"
"""


def test_a_subject_call_the_cap_stops_is_no_failed_execution(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = tmp_path / "campaign.toml"
    path.write_text(SUBJECT.format(url=server.url))
    result = run(tmp_path, path, server)
    assert result.code == 4, result.out + result.err
    assert server.received == []
    assert "1 call not sent; raise [budget] tokens to resume" in " ".join(result.err.split())
    # Nothing judged or signed: a call not sent is neither an execution nor its failure.
    samples, _, receipts, kinds = recorded(tmp_path)
    assert (samples, receipts) == (0, 0)
    assert "decision" not in kinds and "evaluation_failed" not in kinds
    assert "BudgetExhausted" not in result.ledger_text()
