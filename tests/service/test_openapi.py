"""schemathesis against the published /openapi.json of a real `jurat serve`: whatever a
client sends, with a valid token or without, no 5xx and no response outside the schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from tests.service._support import Env, artifact, make_env, subprocess_server, wait_decided

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
