"""The URL rule on arbitrary input: it accepts only allowlisted http(s) URLs, and refuses
everything else with a named reason (never another exception)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jurat.grounding import REASONS, Origin, RetrievalPolicy, RetrievalRefused, check_url

POLICY = RetrievalPolicy(
    origins=(Origin(url="https://ref.example"), Origin(url="http://127.0.0.1:8080"))
)
ALLOWED = {o.url for o in POLICY.origins}

pieces = st.sampled_from(
    ["http", "https", "HTTPS", "file", "ftp", "gopher", "data", "javascript", ":", "//", "/",
     "@", "\\", "?", "#", "%2e", "..", ".", "ref.example", "REF.example", "127.0.0.1", ":8080",
     ":443", ":0", ":99999", "[::1]", "[", "]", "user:pw", "\r\n", " ", "\x00", "bücher", "a"]
)
urls = st.one_of(st.text(max_size=60), st.lists(pieces, max_size=10).map("".join))


@given(urls)
def test_check_url_accepts_only_allowlisted_origins_and_names_every_refusal(url: str) -> None:
    try:
        target = check_url(url, POLICY)
    except RetrievalRefused as err:
        assert err.reason in REASONS
        return
    assert target.origin.url in ALLOWED
    assert target.url.startswith(target.origin.url + "/")
    assert target.url.split("://", 1)[0] in ("http", "https")
    assert "@" not in target.url.split("/", 3)[2]
    assert not any(ch.isspace() or ord(ch) < 0x20 for ch in target.url)


@given(st.sampled_from(["/", "/a", "/a/b?q=1", "/%41?x=%20"]))
def test_allowlisted_urls_pass_with_their_path_and_query(path: str) -> None:
    target = check_url(f"HTTPS://Ref.Example:443{path}", POLICY)
    assert target.url == f"https://ref.example{path}"
    assert (target.host, target.port) == ("ref.example", 443)
