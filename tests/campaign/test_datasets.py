"""`[[datasets]]` in the campaign file, and one row's values as an artifact entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.campaign import csv_header_problems, csv_row_values, load_campaign, row_spec
from jurat.errors import CampaignError, CampaignErrors
from jurat.models import ArtifactSpec
from jurat.models._problems import Problem

HEAD = """\
[campaign]
id = "ds"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "s"
provider = "sim"
"""


def _write(tmp_path: Path, tail: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(HEAD + tail)
    return path


def _problems(exc: CampaignError) -> list[CampaignError]:
    return list(exc.problems) if isinstance(exc, CampaignErrors) else [exc]


def test_a_campaign_of_datasets_alone_loads(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("")
    (tmp_path / "more.CSV").write_text("id,text\n")
    campaign = load_campaign(_write(
        tmp_path, '\n[[datasets]]\npath = "items.jsonl"\n\n[[datasets]]\npath = "more.CSV"\n'))
    assert campaign.artifacts == ()
    assert [(d.path, d.format) for d in campaign.datasets] == [
        ("items.jsonl", "jsonl"), ("more.CSV", "csv")]


def test_a_campaign_without_artifacts_or_datasets_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CampaignError) as info:
        load_campaign(_write(tmp_path, ""))
    [problem] = _problems(info.value)
    assert problem.message == "the campaign has no artifacts"
    assert "[[datasets]]" in (problem.fix or "")


def test_dataset_paths_are_campaign_paths(tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("")
    tail = "".join(f'\n[[datasets]]\npath = "{p}"\n' for p in (
        "../items.jsonl", "/etc/items.jsonl", "items.txt", "itemz.jsonl"))
    (tmp_path / "items.jsonl").write_text("")
    with pytest.raises(CampaignErrors) as info:
        load_campaign(_write(tmp_path, tail))
    by_field = {p.field: p for p in info.value.problems}
    assert "'..' component" in by_field["datasets[0].path"].message
    assert "is absolute" in by_field["datasets[1].path"].message
    assert "not a .jsonl or .csv file" in by_field["datasets[2].path"].message
    missing = by_field["datasets[3].path"]
    assert "no such file" in missing.message and "did you mean 'items.jsonl'" in missing.message
    # Each is named at the line of its own table.
    assert by_field["datasets[0].path"].line == HEAD.count("\n") + 3


def test_a_misspelt_datasets_table_gets_the_right_name(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("")
    with pytest.raises(CampaignError) as info:
        load_campaign(_write(tmp_path, '\n[[dataset]]\npath = "items.jsonl"\n'))
    assert any("did you mean [[datasets]]?" in p.message for p in _problems(info.value))


def test_an_unknown_key_in_datasets_is_named(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("")
    with pytest.raises(CampaignError) as info:
        load_campaign(_write(tmp_path, '\n[[datasets]]\npath = "items.jsonl"\npth = "x"\n'))
    [problem] = _problems(info.value)
    assert problem.field == "datasets[0].pth"
    assert "in [[datasets]]" in problem.message


def _row(values: dict[str, object], kind: str = "rubric",
         ids: tuple[str, ...] | None = None) -> ArtifactSpec | list[Problem]:
    got = row_spec(values, kind=kind, criterion_ids=ids)
    return got if isinstance(got, list) else got.spec


def test_a_row_is_an_artifact_entry() -> None:
    spec = _row({"id": "c1", "text": "hi", "truth": "ACCEPT", "task": "t", "contributor": "x"})
    assert isinstance(spec, ArtifactSpec)
    assert (spec.id, spec.text, spec.truth, spec.task, spec.contributor) == (
        "c1", "hi", "ACCEPT", "t", "x")
    pair = _row({"id": "p", "a": "1", "b": "2", "truth": None}, kind="equivalence")
    assert isinstance(pair, ArtifactSpec) and (pair.a, pair.b, pair.truth) == ("1", "2", None)


@pytest.mark.parametrize(("values", "loc", "words"), [
    ({"id": "c1", "txt": "hi"}, ("txt",), "unknown key 'txt' in a dataset row; did you mean"),
    ({"id": 7.0, "text": "hi"}, ("id",), "must be a string"),
    ({"id": True, "text": "hi"}, ("id",), "must be a string"),
    ({"id": "a b", "text": "hi"}, ("id",), "only letters, digits"),
    ({"id": "c1"}, (), "no content"),
    ({"id": "c1", "text": "x", "path": "y.py"}, ("text",), "either path or text"),
    ({"id": "c1", "text": "x", "truth": "acept"}, ("truth",), "did you mean 'accept'?"),
])
def test_a_bad_row_names_its_key(values: dict[str, object], loc: tuple[str, ...],
                                 words: str) -> None:
    problems = _row(values)
    assert isinstance(problems, list)
    assert [p.loc for p in problems] == [loc]
    assert words in problems[0].message


def test_a_table_of_labels_is_checked_against_the_criteria() -> None:
    ok = _row({"id": "c", "text": "x", "truth": {"a": "yes", "b": "no"}}, "criteria", ("a", "b"))
    assert isinstance(ok, ArtifactSpec)
    problems = _row({"id": "c", "text": "x", "truth": {"a": "maybe", "c": "yes"}}, "criteria",
                    ("a", "b"))
    assert isinstance(problems, list)
    assert [p.loc for p in problems] == [("truth", "a"), ("truth", "c")]


def test_csv_headers_name_known_keys_once_and_an_id() -> None:
    assert csv_header_problems(["id", "text", "truth"]) == []
    problems = csv_header_problems(["txet", "text", "text"])
    assert [p.loc for p in problems] == [("text",), ("txet",), ("id",)]
    assert "did you mean 'text'?" in problems[1].message
    assert "appears twice" in problems[0].message


def test_csv_cells_map_to_keys_and_empty_cells_are_left_out() -> None:
    assert csv_row_values(["id", "text", "truth"], ["c1", "hi", ""]) == {"id": "c1", "text": "hi"}
    short = csv_row_values(["id", "text"], ["c1"])
    assert isinstance(short, Problem) and "1 cells, the header 2" in short.message
