"""The one translator: pydantic's errors as jurat's, naming the field and the fix, in words
made from the field's declared type and bounds, never pydantic's own text."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from pydantic import Field, field_validator

from jurat.errors import ConfigError, TamperError, ValidationError
from jurat.models import Frozen, JudgeConfig, Limits
from jurat.models._invalid import invalid, translate

RAW = ("Input should", "validation error", "Value error", "Field required", "pydantic")


class _Entry(Frozen):
    name: str = Field(min_length=1)
    count: int = Field(1, ge=1, le=9)

    @field_validator("name")
    @classmethod
    def _no_space(cls, value: str) -> str:
        if " " in value:
            raise ValueError(f"{value!r} holds a space")
        return value


def _error(record: type[pydantic.BaseModel], given: Any) -> pydantic.ValidationError:
    with pytest.raises(pydantic.ValidationError) as caught:
        record.model_validate(given)
    return caught.value


@pytest.mark.parametrize("given, field, said", [
    ({"count": 1}, "name", "is required and missing"),
    ({"name": "a", "count": 10}, "count", "must be from 1 to 9, got 10"),
    ({"name": "a", "count": "x"}, "count", 'must be a whole number, got "x"'),
    ({"name": "a b"}, "name", "'a b' holds a space"),
    ({"name": "a", "cuont": 2}, "cuont",
     "unknown key 'cuont' in the record; did you mean 'count'?"),
])
def test_each_error_names_its_field_in_plain_words(given: dict[str, Any], field: str,
                                                   said: str) -> None:
    problems = translate(_error(_Entry, given), _Entry, given)
    assert [(p.loc, p.message) for p in problems] == [((field,), said)]
    assert all(p.fix for p in problems)
    assert not any(raw in p.message or raw in p.fix for p in problems for raw in RAW)


def test_invalid_is_one_error_of_the_callers_type_with_source_place_and_fix() -> None:
    given = {"wall_s": 0}
    error = invalid(_error(Limits, given), Limits, given, ConfigError, source="--limits")
    assert isinstance(error, ConfigError)
    assert str(error).startswith("--limits: wall_s: must be above 0")
    assert "(fix: wall_s = a number above 0" in str(error)
    entry = {"id": "a", "provider": "simm"}
    placed = invalid(_error(JudgeConfig, entry), JudgeConfig, entry, TamperError,
                     source="panel", within=("judges", 2), fix=False)
    assert str(placed) == "panel: judges[2].provider: unknown provider 'simm'; did you mean 'sim'?"
    own = invalid(_error(JudgeConfig, entry), JudgeConfig, entry, fix="use sim")
    assert type(own) is ValidationError and str(own).endswith("(fix: use sim)")


def test_json_text_is_read_back_from_the_error() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        _Entry.model_validate_json('{"name": "a", "count": 12}')
    assert translate(caught.value, _Entry, None)[0].message == "must be from 1 to 9, got 12"
