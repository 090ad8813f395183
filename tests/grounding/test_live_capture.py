"""Issue 28, live evidence captured once (docs/grounding.md, "Live references").

A ``[[grounding.references]]`` entry names a ``url`` on a loopback web server allowed by
its exact origin; ``jurat run`` (a subprocess) captures it once for a campaign of several
artifacts and two judges on a loopback OpenAI-compatible server: every judge request
carries the same captured bytes, a second run makes no request to the web server, and the
capture's digest in the receipt is the served bytes'. The fetcher's SSRF refusals hold
through the campaign path (exit 3, the reference and the reason named, nothing sent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurat.receipts import read_statement
from tests.grounding.web import Web
from tests.runner._support import entries, jurat, keys, verify
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion, echo_judge

PAGE = b"The Eiffel Tower is 330 metres tall. It was completed in 1889 in Paris."

CAMPAIGN = """\
[campaign]
id = "{id}"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 0.5 }}
allowed_destinations = ["{judges}"]

[rubric]
version = "facts/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 1.0 }}]

[grounding]
samples = 1
origins = ["{origin}"]
allow_private = [{private}]

[[grounding.references]]
id = "tower"
url = "{url}"

[[grounding.claims]]
id = "a1-height"
artifact = "a1"
text = "The Eiffel Tower is 330 metres tall."
evidence = ["tower"]

[[grounding.claims]]
id = "a2-year"
artifact = "a2"
text = "The Eiffel Tower was completed in 1889."
evidence = ["tower"]

[[grounding.claims]]
id = "a3-city"
artifact = "a3"
text = "The Eiffel Tower is in Paris."
evidence = ["tower"]

[[judges]]
id = "j1"
provider = "openai-compat"
base_url = "{judges}"
model = "judge-one"
api_key_env = "FAKE_KEY"
samples = 1
timeout_s = 10

[[judges]]
id = "j2"
provider = "openai-compat"
base_url = "{judges}"
model = "judge-two"
api_key_env = "FAKE_KEY"
samples = 1
timeout_s = 10

[[artifacts]]
id = "a1"
text = "The Eiffel Tower is 330 metres tall."

[[artifacts]]
id = "a2"
text = "It was completed in 1889."

[[artifacts]]
id = "a3"
text = "It stands in Paris."
"""


def raw_redirect(web: Web, path: str, location: bytes) -> None:
    """A 302 whose Location is written as raw bytes (http.server refuses non-Latin-1)."""

    def route(h: Any) -> None:
        h.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: " + location
                      + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    web.routes[path] = route


def claim_or_echo(request: FakeRequest) -> Reply | dict[str, Any]:
    """Claims are supported, citing the reference (the last bundle item); else echo_judge."""
    if b"jurat_claim_label_v1" in request.body:
        return completion(json.dumps({"label": "supported", "evidence_indices": [1],
                                      "explanation": "The captured page states it."}))
    return echo_judge(request)


@pytest.fixture
def web() -> Iterator[Web]:
    with Web() as server:
        yield server


@pytest.fixture
def judges() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(behaviour=claim_or_echo) as server:
        yield server


def _write(tmp: Path, web: Web, judges: FakeOpenAI, path: str, *, id: str = "live",
           private: bool = True, url: str | None = None) -> Path:
    campaign = tmp / "campaign.toml"
    campaign.write_text(CAMPAIGN.format(
        id=id, judges=judges.url, origin=web.origin,
        private=f'"{web.origin}"' if private else "", url=url or f"{web.origin}{path}"))
    return campaign


def _run(tmp: Path, campaign: Path, *extra: str) -> tuple[int, str]:
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", *extra, cwd=tmp,
              env={"FAKE_KEY": "sk-test"})
    return r.returncode, r.stdout + r.stderr


def test_live_reference_is_captured_once_shown_to_every_judge_and_pinned_in_receipts(
    tmp_path: Path, web: Web, judges: FakeOpenAI
) -> None:
    web.page("/tower", PAGE, "text/plain; charset=utf-8")
    campaign = _write(tmp_path, web, judges, "/tower")
    code, out = _run(tmp_path, campaign)
    assert code == 0, out
    assert web.hits["/tower"] == 1
    first = judges.requests
    # 3 artifacts x 2 judges x (1 rubric sample + 1 claim sample).
    assert first == 12
    assert all(PAGE.decode() in request.prompt for request in judges.received)
    digest = hashlib.sha256(PAGE).hexdigest()
    stored = tmp_path / "captures" / digest
    assert stored.read_bytes() == PAGE
    _, pub = keys(tmp_path)
    for name in ("a1", "a2", "a3"):
        receipt = tmp_path / "out" / f"{name}.sigstore.json"
        assert verify(receipt, pub, tmp_path).returncode == 0
        predicate = read_statement(receipt.read_bytes())["predicate"]
        reference = predicate["campaign"]["policy"]["grounding"]["references"][0]
        capture = reference["capture"]
        assert "path" not in reference and reference["url"] == f"{web.origin}/tower"
        assert capture == {
            "url": f"{web.origin}/tower", "final_url": f"{web.origin}/tower",
            "retrieved_at": capture["retrieved_at"], "status": 200,
            # The checked media type, never the header as sent (issue 36).
            "content_type": "text/plain", "length": len(PAGE),
            "sha256": digest}
        assert reference["sha256"] == digest and reference["version"] == capture["retrieved_at"]
        items = predicate["inputs"]["evidence_bundle"]["items"]
        assert [i["kind"] for i in items] == ["artifact", "reference"]
        assert items[1]["sha256"] == digest
        claim = predicate["decision"]["grounding"]["claims"][0]
        assert claim["label"] == "supported" and claim["evidence"][0]["sha256"] == digest
    recorded = [e for e in entries(tmp_path / "l.db", "job_received") if "capture" in e.payload]
    assert len(recorded) == 1 and recorded[0].campaign_id is None
    # The page changes; a re-run reuses the capture: no request to the web server, and
    # every receipt reused (no judge call either).
    web.page("/tower", b"The Eiffel Tower is 1 metre tall.")
    code, out = _run(tmp_path, campaign)
    assert code == 0, out
    assert web.hits["/tower"] == 1 and judges.requests == first
    # --recapture fetches the changed page: another policy for a campaign the ledger
    # holds, so the live-policy rule refuses it before anything is sent or written.
    before = len(entries(tmp_path / "l.db"))
    code, out = _run(tmp_path, campaign, "--recapture")
    assert code == 3, out
    assert "under another policy" in out and "new [campaign] id" in out
    assert web.hits["/tower"] == 2 and judges.requests == first
    assert len(entries(tmp_path / "l.db")) == before
    # Under a new campaign id (a new campaign version) the recapture is judged.
    code, out = _run(tmp_path, _write(tmp_path, web, judges, "/tower", id="live-2"),
                     "--recapture", "--out", str(tmp_path / "out2"))
    assert web.hits["/tower"] == 3 and judges.requests == 2 * first
    changed = read_statement((tmp_path / "out2" / "a1.sigstore.json").read_bytes())
    reference = changed["predicate"]["campaign"]["policy"]["grounding"]["references"][0]
    assert reference["sha256"] == hashlib.sha256(b"The Eiffel Tower is 1 metre tall."
                                                 ).hexdigest()


def test_an_altered_capture_file_stops_the_rerun_with_exit_3(
    tmp_path: Path, web: Web, judges: FakeOpenAI
) -> None:
    web.page("/tower", PAGE)
    campaign = _write(tmp_path, web, judges, "/tower")
    assert _run(tmp_path, campaign)[0] == 0
    sent = judges.requests
    (tmp_path / "captures" / hashlib.sha256(PAGE).hexdigest()).write_bytes(b"forged")
    code, out = _run(tmp_path, campaign)
    assert code == 3, out
    assert "grounding.references[0].url" in out and "not the recorded" in out
    assert web.hits["/tower"] == 1 and judges.requests == sent


@pytest.mark.parametrize(("setup", "private", "reason"), [
    # cloud metadata behind a redirect, even with the test origin's allow_private
    (lambda w: w.redirect("/p", "http://169.254.169.254/latest/meta-data/"), True,
     "redirect-to-forbidden (not-allowlisted)"),
    # a loopback (private-range) origin without allow_private
    (lambda w: w.page("/p", PAGE), False, "private-address"),
    # a redirect to another loopback port: not the exact origin allowed
    (lambda w: w.redirect("/p", "http://127.0.0.1:9/secret"), True,
     "redirect-to-forbidden (not-allowlisted)"),
    (lambda w: w.huge("/p", declare=True), True, "too-large"),
    (lambda w: w.page("/p", b"\x89PNG", "image/png"), True, "content-type"),
    # the two Location spellings httpx used to raise RemoteProtocolError for
    (lambda w: raw_redirect(w, "/p", "http://ｂ.test/x".encode()), True,
     "redirect-to-forbidden (bad-url)"),
    (lambda w: w.redirect("/p", f"http://127.0.0.1:{w.port}:{w.port}/x"), True,
     "redirect-to-forbidden (bad-url)"),
], ids=["metadata-redirect", "private-no-allow", "redirect-private", "oversize",
        "wrong-type", "non-ascii-host", "two-ports"])
def test_ssrf_refusals_hold_through_the_campaign_path(
    tmp_path: Path, web: Web, judges: FakeOpenAI, setup: Any, private: bool, reason: str
) -> None:
    setup(web)
    code, out = _run(tmp_path, _write(tmp_path, web, judges, "/p", private=private))
    assert code == 3, out
    assert "grounding.references[0].url" in out and "'tower'" in out
    assert f"refused: {reason}" in out
    assert "RemoteProtocolError" not in out
    assert judges.requests == 0
    assert [e for e in entries(tmp_path / "l.db") if "capture" in e.payload] == []
    assert not (tmp_path / "out" / "a1.sigstore.json").exists()


def test_metadata_origin_is_refused_by_address_class_even_when_allowlisted(
    tmp_path: Path, web: Web, judges: FakeOpenAI
) -> None:
    campaign = _write(tmp_path, web, judges, "/", url="http://169.254.169.254/latest/")
    text = campaign.read_text().replace(f'origins = ["{web.origin}"]',
                                        'origins = ["http://169.254.169.254"]')
    campaign.write_text(text.replace(f'allow_private = ["{web.origin}"]', "allow_private = []"))
    code, out = _run(tmp_path, campaign)
    assert code == 3, out
    assert "refused: private-address" in out and "link-local" in out
    assert judges.requests == 0


def test_url_outside_origins_is_refused_at_load_naming_the_field(
    tmp_path: Path, web: Web, judges: FakeOpenAI
) -> None:
    campaign = _write(tmp_path, web, judges, "/p", url="http://127.0.0.1:9/page")
    code, out = _run(tmp_path, campaign)
    assert code == 3, out
    assert "url" in out and "is not in [grounding] origins" in out
    assert web.total_hits() == 0 and judges.requests == 0
