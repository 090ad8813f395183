"""`jurat token create --campaign ID` names a campaign the ledger knows (issue 37, item 5):
one it has entries of or a valid token names, or ``*``; any other id exits 3 naming the
known ids and the closest, unless ``--new-campaign`` (docs/service.md, "Tokens and roles")."""

from __future__ import annotations

from pathlib import Path

from jurat.service import TokenStore
from jurat.service._tokens import known_campaigns
from tests.service._support import artifact, client, make_env, wait_decided
from tests.support.cli import invoke


def _create(url: str, campaign: str, *extra: str) -> object:
    return invoke("token", "create", "--ledger", url, "--campaign", campaign, "--role",
                  "reviewer", "--subject", "rita", *extra)


def _said(result: object) -> str:
    return " ".join(getattr(result, "output", "").split())


def test_a_new_ledger_knows_no_campaign_and_is_not_created_by_a_refusal(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    refused = _create(url, "contest")
    assert getattr(refused, "exit_code", None) == 3
    said = _said(refused)
    assert "--campaign 'contest' is a campaign no entry and no token of the ledger names" in said
    assert f"this ledger (sqlite:///{tmp_path / 'new.db'}) knows no campaign yet" in said
    assert "add --new-campaign" in said
    assert not (tmp_path / "new.db").exists()
    everyone = invoke("token", "create", "--ledger", url, "--campaign", "*", "--role",
                      "verifier")
    assert everyone.exit_code == 0, everyone.output  # '*' names no campaign


def test_new_campaign_makes_the_first_token_and_the_id_is_known_after_it(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    first = _create(url, "fizzbuzz-review", "--new-campaign")
    assert getattr(first, "exit_code", None) == 0, _said(first)
    assert ("campaign fizzbuzz-review is new to this ledger (--new-campaign): the token works "
            "once `jurat serve` serves a campaign file whose [campaign] id is "
            "fizzbuzz-review") in _said(first)
    again = _create(url, "fizzbuzz-review")
    assert getattr(again, "exit_code", None) == 0, _said(again)
    assert "is new to this ledger" not in _said(again)
    typo = _create(url, "fizzbuz-review")
    assert getattr(typo, "exit_code", None) == 3
    assert ("knows fizzbuzz-review; did you mean 'fizzbuzz-review'?") in _said(typo)
    with TokenStore(url) as store:  # the refused token was not stored
        assert known_campaigns(url) == {"fizzbuzz-review"}
        for made in (first, again):
            store.revoke(getattr(made, "stdout", "").strip().splitlines()[-1])
    # Only valid tokens name a campaign: once both are revoked, the id is unknown again.
    assert known_campaigns(url) == frozenset()
    assert getattr(_create(url, "fizzbuzz-review"), "exit_code", None) == 3


def test_a_campaign_with_entries_in_the_ledger_is_known(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    alice = env.auth("contributor", "text", "alice")  # a token through the library
    with client(env, ("text",)) as http:
        job = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "An essay."),
                        headers=alice).json()["job_id"]
        assert wait_decided(http, job, alice)["status"] == "decided"
    with TokenStore(env.ledger_url) as store:
        store.revoke(env.tokens["contributor:text:alice"])
    # The token is revoked; the ledger's entries still know the campaign.
    assert known_campaigns(env.ledger_url) == {"text"}
    made = _create(env.ledger_url, "text")
    assert getattr(made, "exit_code", None) == 0, _said(made)
    refused = _create(env.ledger_url, "code")
    assert getattr(refused, "exit_code", None) == 3
    assert "knows text" in _said(refused)
