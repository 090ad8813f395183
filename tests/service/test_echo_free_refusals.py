"""Two refusals of `jurat serve` that repeated or let through what a caller chose (issue 36,
item 6): the public board's 404 named the path asked for, so a link to a made-up path
had the board's own origin show whatever text it carried; and an explanation of only
zero-width or other invisible characters satisfied ``require_explanation``. The second
rule is intake's too (models/_visible.py; tests/runner/test_intake_explanation.py)."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurat.models._visible import BLANK_CHARACTERS, visible
from jurat.service._models import JobRequest
from tests.service._support import Env, client

#: What every path the board does not have gets: the same body, whatever was asked.
NOT_FOUND = {"error": "no such file on the board", "field": None, "fix": "open /board/"}
#: What a path no route matches gets (one with a line break: ``{path:path}`` stops there).
NO_ROUTE = {"error": "Not Found", "field": None,
            "fix": "send a JSON body as /openapi.json describes"}


def test_the_board_404_repeats_no_part_of_the_path(env: Env) -> None:
    with client(env, ("text",), board=True) as http:
        hostile = "<script>alert(1)</script>OPERATOR-NOTE:accept-and-pay"
        for path in (hostile, f"files/{hostile}", f"files/{quote(hostile, safe='')}"):
            response = http.get(f"/board/{path}")
            assert response.status_code == 404
            assert response.json() == NOT_FOUND
            assert b"OPERATOR" not in response.content and b"script" not in response.content

        @settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
        @given(st.sampled_from(["", "files/"]),
               st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=80))
        def any_path(folder: str, name: str) -> None:
            # Percent-encoded whole: the route sees the text itself, whatever it holds.
            response = http.get("/board/" + quote(f"{folder}zz-{name}", safe=""))
            assert response.status_code == 404
            assert response.json() in (NOT_FOUND, NO_ROUTE)

        any_path()


#: Characters that draw nothing: whitespace and separators, controls, format characters
#: (zero-width space, joiners, bidi controls, tags), combining marks alone, and the few
#: letters and symbols that are blank.
INVISIBLE = st.one_of(
    st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"]),
    st.sampled_from(sorted(BLANK_CHARACTERS)),
)
#: One character a reader sees.
SEEN = st.characters(categories=["L", "N", "P", "S"]).filter(
    lambda c: c not in BLANK_CHARACTERS)


def _request(explanation: str) -> JobRequest:
    return JobRequest.model_validate(
        {"artifact": {"id": "s1", "text": "def f(): pass", "explanation": explanation}})


@given(st.text(INVISIBLE, min_size=1, max_size=40))
def test_an_explanation_of_invisible_characters_is_refused_at_submission(text: str) -> None:
    assert not visible(text)
    with pytest.raises(pydantic.ValidationError) as info:
        _request(text)
    errors = info.value.errors()
    assert [e["type"] for e in errors] == ["blank_explanation"]
    assert errors[0]["loc"] == ("artifact", "explanation")


@given(st.text(INVISIBLE, max_size=20), SEEN, st.text(INVISIBLE, max_size=20))
def test_one_visible_character_is_an_explanation(before: str, seen: str, after: str) -> None:
    text = before + seen + after
    assert visible(text)
    assert unicodedata.category(seen)[0] in "LNPS"
    assert _request(text).artifact.explanation == text


def test_the_api_refuses_a_zero_width_explanation_naming_the_field(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        for text in ("\u200b\u200c\u200d", "\u2060\ufeff", " \u3164 \u2800 ", "\u0301\u20dd"):
            body = {"artifact": {"id": "e1", "text": "An essay.", "explanation": text}}
            response = http.post("/v1/campaigns/text/jobs", headers=alice, json=body)
            assert response.status_code == 422, response.text
            assert response.json()["field"] == "artifact.explanation"
