"""A ledger that cannot be reached (the database down, its sessions cut, a restart under
way) is a 503 with Retry-After and the service's own words, never a 500 and never the
driver's text: at the front door (the token lookup) and in any handler (issue 30). A real
server on 127.0.0.1; the outage is a LedgerError raised where the driver's would be."""

from __future__ import annotations

import httpx
import pytest

from jurat.errors import LedgerError
from jurat.ledger import Ledger
from jurat.service._limits import ClientLimits
from jurat.service._tokens import TokenStore
from tests.service._live import live_server
from tests.service._support import Env

_DRIVER = ("connection failed: connection to server at 'db-7.internal', port 5432 failed: "
           "FATAL: the database system is shutting down")


def _down(*_: object, **__: object) -> None:
    raise LedgerError(_DRIVER)


def _unavailable(answer: httpx.Response) -> None:
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    body = answer.json()
    assert body["error"] == "the ledger cannot be reached now" and body["fix"]
    assert "db-7" not in answer.text and "FATAL" not in answer.text


@pytest.mark.parametrize(("owner", "name", "path"), [
    (TokenStore, "lookup", "/v1/campaigns"),  # the front door, before any handler
    (Ledger, "entries", "/v1/campaigns/text/decisions"),  # a handler's own read
])
def test_a_request_the_ledger_cannot_serve_is_503(
    env: Env, monkeypatch: pytest.MonkeyPatch, owner: type, name: str, path: str
) -> None:
    operator = env.auth("operator", "text")
    with live_server(env, ClientLimits(rate_per_s=0)) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        assert http.get(path, headers=operator).status_code == 200
        monkeypatch.setattr(owner, name, _down)
        _unavailable(http.get(path, headers=operator))
        monkeypatch.undo()
        assert http.get(path, headers=operator).status_code == 200
