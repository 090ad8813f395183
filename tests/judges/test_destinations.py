"""One destination rule: normalisation, the allow check, and judges that never read base-URL env.

The env tests answer through an in-process stand-in for the provider's real endpoint (in
place of ``judges._http.exchange``), so that nothing leaves the machine while the request's
URL is observed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jurat.errors import DestinationError
from jurat.judges import Engine, run_samples
from jurat.judges._destinations import (
    Destinations,
    canonical_entry,
    check_destinations,
    endpoint,
    normalise_url,
)
from jurat.models import EvidenceBundle, JudgeConfig, Policy
from jurat.runner import check_destinations as intake_check
from tests.support.builders import artifact, gates, judge, policy
from tests.support.fake_openai import FakeOpenAI, FakeRequest, echo_judge

ART = artifact()
EMPTY = EvidenceBundle()

# -- normalisation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("HTTP://LocalHost:8000/v1", "http://localhost:8000/v1"),
        ("https://API.Anthropic.COM", "https://api.anthropic.com"),
        ("http://host:80/v1", "http://host/v1"),
        ("https://host:443/v1", "https://host/v1"),
        ("https://host:80/v1", "https://host:80/v1"),
        ("http://host:443/v1", "http://host:443/v1"),
        ("http://host:/v1", "http://host/v1"),
        ("http://host/v1/", "http://host/v1"),
        ("http://host/v1//", "http://host/v1"),
        ("http://host/", "http://host"),
        ("http://host", "http://host"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("http://[::1]:80/", "http://[::1]"),
        ("http://host/V1/Chat", "http://host/V1/Chat"),
        ("http://host/a%2Fb", "http://host/a%2Fb"),
    ],
)
def test_one_spelling_of_an_endpoint(url: str, normal: str) -> None:
    assert normalise_url(url) == normal


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("HTTP://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1", True),
        ("https://example.com:443/v1", "https://EXAMPLE.com/v1", True),
        ("http://example.com/v1", "http://example.com/V1", False),
        ("http://example.com/v1", "http://example.com/v1/chat", False),
        ("http://example.com/v1", "https://example.com/v1", False),
        ("http://example.com:8080/v1", "http://example.com/v1", False),
        ("http://example.com/a%2Fb", "http://example.com/a/b", False),
    ],
)
def test_scheme_and_host_fold_case_paths_stay_exact(a: str, b: str, same: bool) -> None:
    assert (normalise_url(a) == normalise_url(b)) is same


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://host/v1", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("host/v1", "http or https"),
        ("http://user:pw@host/v1", "credentials"),
        ("http://127.0.0.1:8000@evil.example/v1", "credentials"),
        ("http://127.0.0.1:8000\\@evil.example/v1", "backslash"),
        ("http://host/v1?x=1", "query"),
        ("http://host/v1#frag", "fragment"),
        ("http://host/v1?", "query"),
        ("http://host/v1/../v2", "'..'"),
        ("http://host/v1/%2e%2E/v2", "'..'"),
        ("http://host/./v1", "'.'"),
        ("http:///v1", "no host"),
        ("http://host:99999/v1", "port"),
        ("http://host:0/v1", "port"),
        ("http://host:x/v1", "port"),
        (" http://host/v1", "whitespace"),
        ("http://host/v1\n", "whitespace"),
        ("http://[::1/v1", "not a URL"),
    ],
)
def test_urls_that_read_two_ways_are_refused(url: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        normalise_url(url)
    assert words in str(info.value)


def test_allowed_entries_are_local_names_provider_names_or_urls() -> None:
    assert canonical_entry("sim") == canonical_entry("SIM") == "sim"
    assert canonical_entry("anthropic") == "https://api.anthropic.com"
    assert canonical_entry("HTTP://H:80/v1/") == "http://h/v1"
    with pytest.raises(ValueError, match="provider name"):
        canonical_entry("openai-compat")


# -- the check -----------------------------------------------------------------------------


def claude(**kwargs: Any) -> JudgeConfig:
    return judge(provider="anthropic", model="claude-test", api_key_env="JURAT_TEST_ANTHROPIC",
                 samples=1, timeout_s=5, **kwargs)


def gpt(**kwargs: Any) -> JudgeConfig:
    return judge(provider="openai-compat", model="gpt-test", api_key_env="JURAT_TEST_OPENAI",
                 samples=1, timeout_s=5, **kwargs)


def test_endpoints_are_resolved_by_jurat() -> None:
    assert endpoint(judge(provider="sim")) == "sim"
    assert endpoint(judge(provider="stub:always-yes")) == "stub"
    assert endpoint(judge(provider="replay")) == "replay"
    assert endpoint(claude()) == "https://api.anthropic.com"
    assert endpoint(gpt()) == "https://api.openai.com/v1"
    assert endpoint(gpt(base_url="HTTP://127.0.0.1:80/v1/")) == "http://127.0.0.1/v1"
    assert gpt(base_url="http://127.0.0.1:80/v1/").destination == "http://127.0.0.1/v1"


def test_an_unknown_provider_has_no_endpoint_and_fails_closed() -> None:
    odd = JudgeConfig.model_construct(**{**gpt().model_dump(), "provider": "bedrock"})
    with pytest.raises(DestinationError, match="no known endpoint"):
        endpoint(odd)
    assert not Destinations(["https://api.openai.com/v1", "sim"]).allows(odd)


@pytest.mark.parametrize(
    ("allowed", "config", "ok"),
    [
        (("HTTP://127.0.0.1:80/v1/",), gpt(base_url="http://127.0.0.1/v1"), True),
        (("http://127.0.0.1/v1",), gpt(base_url="http://127.0.0.1:80/V1"), False),
        (("anthropic",), claude(), True),
        (("anthropic",), claude(base_url="https://API.anthropic.com/"), True),
        (("anthropic",), claude(base_url="http://127.0.0.1:9/"), False),
        (("https://api.anthropic.com",), claude(), True),
        (("http://127.0.0.1:9",), claude(), False),
        (("http://127.0.0.1:9/v1",), gpt(), False),
        (("sim",), judge(provider="sim"), True),
        (("stub",), judge(provider="sim"), False),
        (("SIM",), judge(provider="sim"), True),
        (("stub",), judge(provider="stub:always-yes"), True),
    ],
)
def test_intake_and_engine_decide_alike(
    allowed: tuple[str, ...], config: JudgeConfig, ok: bool
) -> None:
    pol = policy("rubric", judges=config, allowed_destinations=allowed)

    def engine_check(pol: Policy) -> None:
        Engine()._check(pol, set())  # what run_samples does before the first request

    for check in (check_destinations, intake_check, engine_check):
        if ok:
            check(pol)
        else:
            with pytest.raises(DestinationError, match="allowed_destinations"):
                check(pol)


def test_the_refusal_names_field_endpoint_and_fix() -> None:
    pol = policy("rubric", judges=(judge("S"), claude(id="C")),
                 allowed_destinations=("sim", "http://127.0.0.1:9"))
    with pytest.raises(DestinationError) as info:
        check_destinations(pol, source="c.toml")
    message = str(info.value)
    assert message.startswith("c.toml: field `judges[1].provider`: judge 'C'")
    assert "'https://api.anthropic.com'" in message and "fix: add" in message


def test_a_subject_is_checked_like_a_judge() -> None:
    pol = policy("criteria", judges=judge(provider="stub:always-yes"),
                 subject=gpt(base_url="http://10.0.0.1/v1"), subject_prompt="{input}",
                 allowed_destinations=("stub",))
    with pytest.raises(DestinationError, match="subject.base_url"):
        check_destinations(pol)


def test_a_bad_allowed_entry_is_refused() -> None:
    with pytest.raises(DestinationError, match="allowed_destinations"):
        Destinations(["http://host/v1?key=x"])


# -- judges never read base-URL environment variables ---------------------------------------


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURAT_TEST_ANTHROPIC", "sk-ant-test")
    monkeypatch.setenv("JURAT_TEST_OPENAI", "sk-test")


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand in for the providers' real endpoints: answer them in-process, record each URL.

    A request for any other host goes out for real (to the loopback server, if anywhere).
    """
    from jurat.judges import _http

    seen: list[str] = []
    real = _http.exchange

    async def exchange(session: Any, endpoint: _http.Endpoint,
                       body: bytes) -> tuple[int, str | None, bytes]:
        url = endpoint.url
        seen.append(str(url))
        if url.host not in ("api.anthropic.com", "api.openai.com"):
            return await real(session, endpoint, body)
        reply = echo_judge(FakeRequest(0, "POST", url.path, endpoint.headers, body))
        assert not isinstance(reply, dict)
        return reply.status, None, reply.body

    monkeypatch.setattr(_http, "exchange", exchange)
    return seen


async def _votes(config: JudgeConfig, allowed: tuple[str, ...]) -> list[Any]:
    engine = Engine(backoff_s=0.001)
    try:
        pol = policy("rubric", judges=config, allowed_destinations=allowed)
        return await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    finally:
        await engine.aclose()


ENV_CASES: list[tuple[str, Callable[..., JudgeConfig], str, str, str]] = [
    ("ANTHROPIC_BASE_URL", claude, "anthropic", "https://api.anthropic.com/v1/messages", "root"),
    ("OPENAI_BASE_URL", gpt, "https://api.openai.com/v1",
     "https://api.openai.com/v1/chat/completions", "url"),
]


@pytest.mark.parametrize(("env", "make", "allowed", "sent_to", "attr"), ENV_CASES)
async def test_a_base_url_variable_does_not_redirect_an_allowed_judge(
    monkeypatch: pytest.MonkeyPatch, provider: list[str], env: str,
    make: Callable[..., JudgeConfig], allowed: str, sent_to: str, attr: str,
) -> None:
    with FakeOpenAI() as fake:
        monkeypatch.setenv(env, getattr(fake, attr))
        votes = await _votes(make(), (allowed,))
        assert fake.requests == 0
    assert provider == [sent_to]
    assert votes[0].error is None


@pytest.mark.parametrize(("env", "make", "allowed", "sent_to", "attr"), ENV_CASES)
async def test_allowing_the_variable_s_address_needs_an_explicit_base_url(
    monkeypatch: pytest.MonkeyPatch, env: str, make: Callable[..., JudgeConfig],
    allowed: str, sent_to: str, attr: str,
) -> None:
    with FakeOpenAI() as fake:
        address = getattr(fake, attr)
        monkeypatch.setenv(env, address)
        with pytest.raises(DestinationError, match="base-URL environment variables"):
            await _votes(make(), (address,))
        assert fake.requests == 0
        votes = await _votes(make(base_url=address), (address,))
        assert fake.requests == 1 and votes[0].error is None
