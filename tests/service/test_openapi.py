"""schemathesis against the published /openapi.json of a real `jurat serve`: whatever a
client sends, with a valid token or without, no 5xx and no response outside the schema."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.strategies import SearchStrategy
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation import GenerationMode

from jurat.receipts import keygen
from tests.service._support import (
    CRITICAL,
    TEXT,
    Env,
    artifact,
    make_env,
    subprocess_server,
    wait_decided,
)
from tests.support.scale import examples

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Env, str, str]]:
    root: Path = tmp_path_factory.mktemp("openapi")
    env = make_env(root)
    with subprocess_server(env, ("text", "critical")) as (_, url):
        import httpx

        with httpx.Client(base_url=url) as http:
            token = env.auth("contributor", "text", "alice")
            job = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "An essay."),
                            headers=token).json()["job_id"]
            wait_decided(http, job, token)
        yield env, url, job


ROLES = (None, "operator", "contributor", "reviewer", "verifier")


def test_the_api_keeps_its_schema(served: tuple[Env, str, str]) -> None:
    env, url, job = served
    headers_by_role = [{}] + [
        env.auth(role, "text" if role == "contributor" else "*",
                 "alice" if role == "contributor" else None)
        for role in ROLES[1:]]
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9, [op.label for op in operations]
    # Valid requests (positive) and requests that break the schema (negative).
    strategies = [(mode, op.as_strategy(mode)) for op in operations
                  for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]
    # And the job paths with a job that exists (Alice's, decided), so that what a role may
    # read is answered in full: every 200 body is checked against its schema too.
    strategies += [(GenerationMode.POSITIVE,
                    op.as_strategy(GenerationMode.POSITIVE, path_parameters={"job_id": job}))
                   for op in operations if "{job_id}" in op.path]
    for mode, strategy in strategies:

        @given(case=strategy)
        @settings(max_examples=20, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def check(case: schemathesis.Case) -> None:
            # Each generated request without a token, then with a valid token of each role.
            for headers in headers_by_role:
                case.call_and_validate(base_url=url, headers=headers, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:
            # An operation without parameters or body has no request that breaks its schema.
            assert mode is GenerationMode.NEGATIVE


# -- generated requests that reach the handlers ------------------------------------------

#: Fixed, so the generated requests are the same on every run (with ``database=None``).
SEED = 25
#: Who may do what (docs/service.md, "Tokens and roles"): each generated case is sent with
#: the tokens of these roles, so it is answered by the handler, not by a 401 or 403.
MAY = {
    "/healthz": (None,),
    "/v1/campaigns": ("operator", "contributor"),
    "/v1/campaigns/{campaign_id}/jobs": ("operator", "contributor"),
    "/v1/jobs": ("operator", "contributor", "reviewer"),
    "/v1/jobs/{job_id}": ("operator", "contributor", "reviewer"),
    "/v1/jobs/{job_id}/receipt": ("operator", "contributor", "verifier"),
    "/v1/jobs/{job_id}/proof": ("operator", "contributor", "verifier"),
    "/v1/jobs/{job_id}/adjudication": ("reviewer",),
    "/v1/jobs/{job_id}/review": ("operator", "reviewer"),
    "/v1/campaigns/{campaign_id}/decisions": ("operator", "verifier"),
    "/v1/checkpoint": ("operator",),
}
#: Cases per (operation, mode, fixed path): submitting is where a contributor's bytes
#: enter, so it gets the most; an operation with nothing left to generate once its path is
#: fixed (``BARE``) gets one, as its other cases would all be the same request. At least
#: ``MIN_CASES`` in all.
# The submit path keeps its 120 under every profile: fewer generated bodies (30) reached
# no 202 in a run, and that answer is what the test checks the handler for.
SUBMIT_CASES, CASES, MIN_CASES = 120, examples(40), examples(1000)  # scale.py
BARE = ("/v1/jobs/{job_id}/proof", "/v1/jobs/{job_id}/review", "/healthz", "/v1/checkpoint",
        "/v1/campaigns")


@dataclass
class Fuzzed:
    """A real `jurat serve` and the jobs the generated requests are pointed at."""

    env: Env
    url: str
    decided: str
    """Alice's text job, decided."""
    escalated: str
    """Alice's job on the review campaign, escalated (so an adjudication reaches the
    signer once)."""


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    root: Path = tmp_path_factory.mktemp("fuzz")
    # One sample per judge: every generated job that is accepted runs in the background,
    # and the server should spend its time answering, not judging.
    env = make_env(root, samples=1)
    # A campaign that trusts an upstream key, so generated upstream receipts are read.
    keygen(root / "stage1")
    up = TEXT.format(samples=1, latency=0).replace('id = "text"', 'id = "up"')
    _campaign(env, "up", up + '\n[upstream]\nkeys = [{path = "stage1/jurat.pub", '
              'stage = "stage1"}]\n')
    # The critical tier over text: every job escalates without the sandbox, and the hidden
    # tests are still the references a rationale may not quote.
    _campaign(env, "review", CRITICAL.format().replace('id = "critical"', 'id = "review"')
              .replace('hard_gates = ["python.parse", "tests.pass"]', "hard_gates = []"))
    with subprocess_server(env, ("text", "review", "up")) as (_, url):
        import httpx

        with httpx.Client(base_url=url) as http:
            alice = env.auth("contributor", "*", "alice")
            decided = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "An essay."),
                                headers=alice).json()["job_id"]
            escalated = http.post("/v1/campaigns/review/jobs", json=artifact("e2", "Essay."),
                                  headers=alice).json()["job_id"]
            assert wait_decided(http, decided, alice)["status"] == "decided"
            got = wait_decided(http, escalated, alice)
            assert (got.get("decision") or {}).get("disposition") == "escalate", got
        yield Fuzzed(env, url, decided, escalated)


def _campaign(env: Env, name: str, text: str) -> None:
    env.campaigns[name] = env.root / f"{name}.toml"
    env.campaigns[name].write_text(text)


def _fixed_paths(path: str, fuzzed: Fuzzed) -> list[dict[str, str] | None]:
    """The path parameters to hold fixed: ids that exist (so the handler runs past its
    lookup), and none (generated, mostly a 404)."""
    if "{campaign_id}" in path:
        ids = ("text", "review", "up") if path.endswith("/jobs") else ("text",)
        return [{"campaign_id": c} for c in ids] + [None]
    if "{job_id}" in path:
        return [{"job_id": fuzzed.decided}, {"job_id": fuzzed.escalated}, None]
    return [None]


def _explore(strategy: SearchStrategy[schemathesis.Case], url: str,
             headers: list[dict[str, str]], examples: int, statuses: Counter[int]) -> int:
    """Run ``strategy`` for up to ``examples`` cases, each sent once with each of
    ``headers`` (the answers' statuses counted in ``statuses``); the number of cases
    generated. Raises the first check that failed (after Hypothesis has shrunk the case)."""
    count = 0

    @seed(SEED)
    @given(case=strategy)
    @settings(max_examples=examples, deadline=None, database=None,
              phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        nonlocal count
        count += 1
        for each in headers:
            statuses[case.call_and_validate(base_url=url, headers=each,
                                            checks=CHECKS).status_code] += 1

    check()
    return count


def _budget(path: str, fixed: dict[str, str] | None) -> int:
    if path == "/v1/campaigns/{campaign_id}/jobs":
        return SUBMIT_CASES
    return 1 if path in BARE and (fixed or "{" not in path) else CASES


@pytest.mark.slow
def test_generated_requests_reach_the_handlers_and_keep_the_schema(fuzzed: Fuzzed) -> None:
    """At least MIN_CASES generated requests (valid ones and ones that break the schema),
    sent with tokens that may make them: no 5xx, no answer outside the schema."""
    env = fuzzed.env
    tokens = {role: env.auth(role, "*", "alice" if role == "contributor" else None)
              for role in ("operator", "contributor", "reviewer", "verifier")}
    # An explicit configuration, not one discovered from the working directory; without
    # the security scheme's parameters, so a case that breaks the schema breaks its query
    # or body and keeps its token (no token at all is test_the_api_keeps_its_schema's).
    config = SchemathesisConfig.from_dict({"generation": {"with-security-parameters": False}})
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/openapi.json", config=config)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} == set(MAY), [op.label for op in operations]
    cases: dict[str, tuple[int, float]] = {}
    statuses: dict[str, Counter[int]] = {op.label: Counter() for op in operations}
    failures: dict[str, str] = {}
    started = time.monotonic()
    for op in operations:
        headers = [tokens[role] if role else {} for role in MAY[op.path]]
        for fixed in _fixed_paths(op.path, fuzzed):
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                label = f"{op.label} {mode.value} {fixed or ''}".rstrip()
                began = time.monotonic()
                try:
                    n = _explore(op.as_strategy(mode, path_parameters=fixed), fuzzed.url,
                                 headers, _budget(op.path, fixed), statuses[op.label])
                except Unsatisfiable:
                    # Nothing to generate that breaks the schema (no parameters, no body,
                    # or only the path, held fixed).
                    assert mode is GenerationMode.NEGATIVE, label
                    continue
                except (Failure, FailureGroup) as exc:  # report them all, not the first
                    failures[label] = str(exc)
                    continue
                cases[label] = (n, time.monotonic() - began)
    took = time.monotonic() - started
    total = sum(n for n, _ in cases.values())
    print(f"\nschemathesis: {total} generated cases over {len(cases)} strategies in "
          f"{took:.1f} s")
    for label, (n, seconds) in cases.items():
        print(f"  {n:5d} {seconds:6.1f} s  {label}")
    for label, seen in statuses.items():
        print(f"  {label}: {dict(sorted(seen.items()))}")
    assert not failures, "\n\n".join(f"{k}:\n{v}" for k, v in failures.items())
    assert total >= MIN_CASES, cases
    # The cases reached the handlers: jobs were recorded, an escalation was adjudicated,
    # receipts were read, and tokens were not what refused them.
    assert statuses["POST /v1/campaigns/{campaign_id}/jobs"][202], statuses
    assert statuses["POST /v1/jobs/{job_id}/adjudication"][202], statuses
    assert statuses["GET /v1/jobs/{job_id}/receipt"][200], statuses
    assert statuses["GET /v1/jobs/{job_id}/review"][200], statuses
    assert not any(seen[401] for seen in statuses.values()), statuses
