"""The retrieval transport against a hostile loopback web (docs/grounding.md, "Retrieval").

Every refusal carries its named reason, and the servers' hit counters show that nothing the
rules forbid was requested.
"""

from __future__ import annotations

import hashlib
import socket
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler

import pytest

from jurat.errors import JuratError
from jurat.grounding import Fetcher, Origin, RetrievalPolicy, RetrievalRefused
from tests.grounding.web import GIB, INJECTION, Web

FIXED = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


@pytest.fixture
def web() -> Iterator[Web]:
    with Web() as server:
        yield server


@pytest.fixture
def other() -> Iterator[Web]:
    """Another loopback port: never allowlisted with allow_private."""
    with Web() as server:
        server.page("/secret", b"internal admin token")
        yield server


def policy(*origins: Origin, **limits: object) -> RetrievalPolicy:
    return RetrievalPolicy.model_validate({"origins": origins, **limits})


def loopback(web: Web) -> Origin:
    return Origin(url=web.origin, allow_private=True)


class FakeDNS:
    """An injectable resolver: fixed answers, counted questions."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers
        self.asked: Counter[str] = Counter()

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked[host] += 1
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answers[host]


async def refused(fetcher: Fetcher, url: str) -> RetrievalRefused:
    with pytest.raises(RetrievalRefused) as info:
        await fetcher.fetch(url)
    assert isinstance(info.value, JuratError)
    return info.value


async def test_plain_page_is_captured_with_digest_and_metadata(web: Web) -> None:
    web.page("/ok", b"The Eiffel Tower is 330 m tall.", "text/plain; charset=utf-8")
    got = await Fetcher(policy(loopback(web)), clock=lambda: FIXED).fetch(f"{web.origin}/ok")
    cap = got.capture
    assert got.body == b"The Eiffel Tower is 330 m tall."
    assert cap.sha256 == hashlib.sha256(got.body).hexdigest()
    assert cap.byte_length == len(got.body)
    # The checked media type, never the header as sent (issue 36: the server's text).
    assert (cap.status, cap.content_type) == (200, "text/plain")
    assert cap.source_url == cap.final_url == f"{web.origin}/ok"
    assert cap.redirects == ()
    assert cap.address == "127.0.0.1"
    assert cap.retrieved_at == "2026-12-01T04:00:00Z"


async def test_prompt_injection_page_is_fetched_as_data_and_nothing_it_names_is(
    web: Web, other: Web
) -> None:
    page = INJECTION.replace(b"{other}", other.origin.encode())
    web.page("/inject", page, "text/html")
    got = await Fetcher(policy(loopback(web))).fetch(f"{web.origin}/inject")
    assert got.body == page  # verbatim bytes, nothing interpreted
    assert got.capture.final_url == f"{web.origin}/inject"
    assert web.hits == Counter({"/inject": 1})  # no refresh, link or image followed
    assert other.total_hits() == 0


async def test_redirect_to_cloud_metadata_is_refused_before_any_connection(web: Web) -> None:
    web.redirect("/meta", "http://169.254.169.254/latest/meta-data/")
    # Even with the metadata origin allowlisted, its address class refuses it.
    allowlisted = policy(loopback(web), Origin(url="http://169.254.169.254"))
    err = await refused(Fetcher(allowlisted), f"{web.origin}/meta")
    assert (err.reason, err.cause) == ("redirect-to-forbidden", "private-address")
    assert "link-local" in str(err)
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/meta")
    assert (err.reason, err.cause) == ("redirect-to-forbidden", "not-allowlisted")
    assert web.hits == Counter({"/meta": 2})


async def test_redirect_chain_to_another_loopback_port_is_refused(web: Web, other: Web) -> None:
    web.redirect("/a", "/b")
    web.redirect("/b", f"{other.origin}/secret", status=307)
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/a")
    assert (err.reason, err.cause) == ("redirect-to-forbidden", "not-allowlisted")
    assert err.url == f"{other.origin}/secret"
    assert web.hits == Counter({"/a": 1, "/b": 1})
    assert other.total_hits() == 0


async def test_allow_private_covers_only_its_own_origin(web: Web, other: Web) -> None:
    web.redirect("/a", f"{other.origin}/secret")
    # The other port is allowlisted, but without allow_private: its loopback address is not.
    both = policy(loopback(web), Origin(url=other.origin))
    err = await refused(Fetcher(both), f"{web.origin}/a")
    assert (err.reason, err.cause) == ("redirect-to-forbidden", "private-address")
    err = await refused(Fetcher(both), f"{other.origin}/secret")
    assert err.reason == "private-address"
    assert other.total_hits() == 0


async def test_allowed_relative_redirect_is_followed_and_recorded(web: Web) -> None:
    web.redirect("/old", "/new", status=301)
    web.page("/new", b"moved here")
    got = await Fetcher(policy(loopback(web))).fetch(f"{web.origin}/old")
    assert got.body == b"moved here"
    assert got.capture.source_url == f"{web.origin}/old"
    assert got.capture.final_url == f"{web.origin}/new"
    assert got.capture.redirects == (f"{web.origin}/new",)


async def test_redirect_loop_stops_at_the_redirect_limit(web: Web) -> None:
    web.redirect("/loop", "/loop")
    err = await refused(Fetcher(policy(loopback(web), max_redirects=3)), f"{web.origin}/loop")
    assert err.reason == "too-many-redirects"
    assert web.hits["/loop"] == 4  # the first request and three re-checked redirects


async def test_redirect_to_a_file_url_is_refused(web: Web) -> None:
    web.redirect("/file", "file:///etc/passwd")
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/file")
    assert (err.reason, err.cause) == ("redirect-to-forbidden", "scheme")


async def test_declared_gigabyte_is_refused_from_its_header(web: Web) -> None:
    web.huge("/gig", declare=True)
    err = await refused(Fetcher(policy(loopback(web), max_bytes=1024)), f"{web.origin}/gig")
    assert err.reason == "too-large"
    assert "declared length" in str(err)
    assert web.sent["/gig"] < GIB // 100


async def test_undeclared_gigabyte_is_cut_at_the_cap_while_streaming(web: Web) -> None:
    web.huge("/stream", declare=False)
    started = time.monotonic()
    err = await refused(
        Fetcher(policy(loopback(web), max_bytes=100_000)), f"{web.origin}/stream"
    )
    assert err.reason == "too-large"
    assert "body exceeds 100000" in str(err)
    assert time.monotonic() - started < 5
    time.sleep(0.2)  # let the server notice the hang-up
    assert 100_000 <= web.sent["/stream"] < GIB // 100  # streamed past the cap, then cut


async def test_body_of_exactly_the_cap_is_accepted(web: Web) -> None:
    web.page("/exact", b"x" * 1000)
    got = await Fetcher(policy(loopback(web), max_bytes=1000)).fetch(f"{web.origin}/exact")
    assert got.capture.byte_length == 1000


async def test_slow_drip_is_cut_by_the_total_time_limit(web: Web) -> None:
    web.drip("/drip")
    started = time.monotonic()
    err = await refused(Fetcher(policy(loopback(web), timeout_s=0.5)), f"{web.origin}/drip")
    elapsed = time.monotonic() - started
    assert err.reason == "timeout"
    assert 0.4 < elapsed < 3


@pytest.mark.parametrize(
    ("content_type", "extra", "reason"),
    [
        ("application/pdf", {}, "content-type"),
        ("application/octet-stream", {}, "content-type"),
        ("text/html", {"Content_Encoding": "gzip"}, "content-encoding"),
    ],
)
async def test_wrong_content_type_or_encoding_is_refused(
    web: Web, content_type: str, extra: dict[str, str], reason: str
) -> None:
    web.page("/doc", b"%PDF-1.7 binary", content_type, **extra)
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/doc")
    assert err.reason == reason


async def test_missing_content_type_is_refused(web: Web) -> None:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "2")
        h.end_headers()
        h.wfile.write(b"hi")

    web.routes["/bare"] = route
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/bare")
    assert err.reason == "content-type"


async def test_error_status_is_refused(web: Web) -> None:
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/missing")
    assert err.reason == "status"
    assert web.hits["/missing"] == 1


async def test_name_resolving_to_a_private_address_is_never_connected(web: Web) -> None:
    web.page("/", b"intranet secrets")
    host = f"intranet.test:{web.port}"
    dns = FakeDNS({"intranet.test": ["127.0.0.1"]})
    fetcher = Fetcher(policy(Origin(url=f"http://{host}")), resolver=dns)
    err = await refused(fetcher, f"http://{host}/")
    assert err.reason == "private-address"
    assert "loopback" in str(err)
    assert dns.asked == Counter({"intranet.test": 1})
    assert web.total_hits() == 0  # a real server was listening there: it saw nothing


@pytest.mark.parametrize(
    "answers",
    [
        ["10.0.0.5"],
        ["100.64.1.1"],
        ["169.254.169.254"],
        ["::1"],
        ["fd00::1"],
        ["fe80::1"],
        ["::ffff:127.0.0.1"],
        ["64:ff9b::a9fe:a9fe"],  # NAT64 spelling of 169.254.169.254
        ["::ffff:0:7f00:1"],  # SIIT spelling of 127.0.0.1
        ["2002:7f00:1::1"],  # 6to4 spelling of 127.0.0.1
        ["2001:0:4136:e378:8000:63bf:80ff:fffe"],  # Teredo, client 127.0.0.1
        ["93.184.215.14", "192.168.1.1"],  # one good answer does not excuse a bad one
    ],
)
async def test_every_private_answer_is_refused(answers: list[str]) -> None:
    dns = FakeDNS({"evidence.example": answers})
    fetcher = Fetcher(policy(Origin(url="https://evidence.example")), resolver=dns)
    err = await refused(fetcher, "https://evidence.example/page")
    assert err.reason == "private-address"


async def test_non_ascii_host_is_refused_even_when_allowlisted() -> None:
    dns = FakeDNS({"bücher.example": ["93.184.215.14"]})
    fetcher = Fetcher(policy(Origin(url="https://bücher.example")), resolver=dns)
    err = await refused(fetcher, "https://bücher.example/")
    assert err.reason == "bad-url"
    assert not dns.asked


async def test_a_name_is_resolved_once_per_retrieval_across_redirects(web: Web) -> None:
    web.redirect("/a", f"http://site.test:{web.port}/b")
    web.page("/b", b"done")
    dns = FakeDNS({"site.test": ["127.0.0.1"]})
    origin = Origin(url=f"http://site.test:{web.port}", allow_private=True)
    got = await Fetcher(policy(origin), resolver=dns).fetch(f"http://site.test:{web.port}/a")
    assert got.body == b"done"
    assert dns.asked == Counter({"site.test": 1})


async def test_unresolvable_name_is_refused() -> None:
    fetcher = Fetcher(policy(Origin(url="https://nowhere.example")), resolver=FakeDNS({}))
    err = await refused(fetcher, "https://nowhere.example/")
    assert err.reason == "unresolvable"


async def test_connection_is_pinned_to_the_one_resolution(web: Web) -> None:
    web.echo_host("/host")
    answers = iter([["127.0.0.1"], ["10.9.9.9"]])

    class Rebinding(FakeDNS):
        async def __call__(self, host: str, port: int) -> Sequence[str]:
            self.asked[host] += 1
            return next(answers)  # a second question would get another answer

    dns = Rebinding({})
    origin = Origin(url=f"http://pinned.test:{web.port}", allow_private=True)
    got = await Fetcher(policy(origin), resolver=dns).fetch(f"http://pinned.test:{web.port}/host")
    assert got.body == f"pinned.test:{web.port}".encode()  # Host header: the name
    assert got.capture.address == "127.0.0.1"  # socket: the pinned address
    assert dns.asked == Counter({"pinned.test": 1})


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "scheme"),
        ("data:text/plain,hello", "scheme"),
        ("ftp://127.0.0.1/pub", "scheme"),
        ("gopher://127.0.0.1:70/_GET", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("//127.0.0.1/no-scheme", "scheme"),
        ("http://user:pw@127.0.0.1:{port}/ok", "credentials"),
        ("http://127.0.0.1:{port}\\@evil.example/", "credentials"),
        ("http://127.0.0.1:{port}/a/../ok", "bad-url"),
        ("http://127.0.0.1:{port}/a b", "bad-url"),
        ("http://127.0.0.1:{port}/ok?x=1\r\nHost: evil", "bad-url"),
        ("https://127.0.0.1:{port}/ok", "not-allowlisted"),
        ("http://localhost:{port}/ok", "not-allowlisted"),
        ("http://169.254.169.254/latest/meta-data/", "not-allowlisted"),
    ],
)
async def test_bad_urls_are_refused_without_a_request(web: Web, url: str, reason: str) -> None:
    web.page("/ok", b"fine")
    dns = FakeDNS({"localhost": ["127.0.0.1"]})
    err = await refused(Fetcher(policy(loopback(web)), resolver=dns), url.format(port=web.port))
    assert err.reason == reason
    assert web.total_hits() == 0
    assert not dns.asked  # nothing is resolved before the URL rule passes


async def test_origin_spelling_is_normalised_like_the_destination_check(web: Web) -> None:
    web.page("/ok", b"fine")
    origin = Origin(url=f"HTTP://127.0.0.1:{web.port}/", allow_private=True)
    assert origin.url == web.origin
    got = await Fetcher(policy(origin)).fetch(f"http://127.0.0.1:{web.port}/ok")
    assert got.body == b"fine"


@pytest.mark.parametrize("host", ["2130706433", "0x7f.0.0.1", "127.1"])
async def test_odd_ipv4_spellings_are_resolved_then_refused(web: Web, host: str) -> None:
    # Not IP literals to the URL parser, so the (real, numeric-only) resolver reads them.
    fetcher = Fetcher(policy(Origin(url=f"http://{host}:{web.port}")))
    err = await refused(fetcher, f"http://{host}:{web.port}/")
    assert err.reason == "private-address"
    assert web.total_hits() == 0


async def test_malformed_content_length_is_a_protocol_refusal(web: Web) -> None:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "-5")
        h.end_headers()
        h.wfile.write(b"hello")

    web.routes["/badlen"] = route
    err = await refused(Fetcher(policy(loopback(web))), f"{web.origin}/badlen")
    assert err.reason == "protocol"
