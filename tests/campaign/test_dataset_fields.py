"""``[[datasets]] fields`` and ``extra``, integer ids, and fixes in the file's own format
(issue 29; campaign/_rows.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.campaign import RowMap, RowValues, csv_header_problems, load_campaign, row_spec
from jurat.errors import CampaignError, CampaignErrors
from jurat.models._datasets import DatasetSpec
from jurat.runner import check_artifacts
from jurat.runner._datasets import iter_placed

HEAD = """\
[campaign]
id = "fields"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
items = [{ id = "ok", text = "Is it fine?" }]

[[judges]]
id = "s"
provider = "sim"

[[datasets]]
path = "rows.jsonl"
"""


def _campaign(tmp_path: Path, rows: list[dict[str, object]], dataset: str = "") -> Path:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "c.toml"
    path.write_text(HEAD + dataset)
    return path


def _problems(exc: CampaignError | CampaignErrors) -> list[CampaignError]:
    return exc.problems if isinstance(exc, CampaignErrors) else [exc]


def test_integer_ids_are_their_decimal_text_and_bools_floats_are_not() -> None:
    got = row_spec({"id": 17, "text": "x", "task": 3}, kind="criteria", criterion_ids=["ok"])
    assert isinstance(got, RowValues) and (got.spec.id, got.spec.task) == ("17", "3")
    for bad in (True, 1.5, 17.0):
        problems = row_spec({"id": bad, "text": "x"}, kind="criteria", criterion_ids=["ok"])
        assert isinstance(problems, list) and [p.loc for p in problems] == [("id",)]
        # A JSON Lines row's fix is JSON, never the campaign file's TOML.
        assert problems[0].fix == '"id": "c1"', problems[0].fix


def test_mapped_keys_are_named_by_the_files_column_in_its_format() -> None:
    rows = RowMap.of(DatasetSpec(path="x.jsonl", fields={"id": "qid", "text": "answer"}))
    got = row_spec({"qid": 5, "answer": "a", "split": "test"}, kind="criteria",
                   criterion_ids=["ok"], rows=rows)
    assert isinstance(got, RowValues)
    assert (got.spec.id, got.spec.text, got.metadata) == ("5", "a", {"split": "test"})
    bad = row_spec({"qid": "a b", "answer": "a"}, kind="criteria", criterion_ids=["ok"],
                   rows=rows)
    assert isinstance(bad, list) and bad[0].loc == ("qid",) and bad[0].fix == '"qid": "c1"'
    missing = row_spec({"answer": "a"}, kind="criteria", criterion_ids=["ok"], rows=rows)
    assert isinstance(missing, list) and missing[0].loc == ("qid",)
    assert missing[0].fix == 'add "qid": "c1"'
    csv_rows = RowMap.of(DatasetSpec(path="x.csv", fields={"truth": "label"}))
    label = row_spec({"id": "c", "text": "x", "label": "maybe"}, kind="criteria",
                     criterion_ids=["ok"], rows=csv_rows)
    assert isinstance(label, list) and label[0].loc == ("label",)
    assert label[0].fix.startswith("column 'label': one of")


def test_a_column_named_like_a_missing_key_is_refused_unless_extra_is_written() -> None:
    guarded = RowMap.of(DatasetSpec(path="x.jsonl"))
    typo = row_spec({"id": "c", "text": "x", "targte": "ref"}, kind="criteria",
                    criterion_ids=["ok"], rows=guarded)
    assert isinstance(typo, list) and "did you mean 'target'?" in typo[0].message
    kept = RowMap.of(DatasetSpec(path="x.jsonl", extra="keep"))
    got = row_spec({"id": "c", "text": "x", "targte": "ref", "n": [1, 2]}, kind="criteria",
                   criterion_ids=["ok"], rows=kept)
    assert isinstance(got, RowValues) and got.metadata == {"targte": "ref", "n": "[1,2]"}
    ignored = RowMap.of(DatasetSpec(path="x.jsonl", extra="ignore"))
    got = row_spec({"id": "c", "text": "x", "split": "t"}, kind="criteria",
                   criterion_ids=["ok"], rows=ignored)
    assert isinstance(got, RowValues) and got.metadata == {}


def test_csv_header_checks_the_mapped_columns() -> None:
    rows = RowMap.of(DatasetSpec(path="x.csv", fields={"id": "qid", "text": "output"}))
    problems = csv_header_problems(["qid", "answer", "id"], rows)
    assert [p.loc for p in problems] == [("fields", "text")]
    assert "column 'output', which the header lacks" in problems[0].message
    problems = csv_header_problems(["answer", "output"], rows)
    assert [p.loc for p in problems] == [("id",)]
    assert "the header has no qid column" in problems[0].message


def test_unknown_field_keys_are_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises((CampaignError, CampaignErrors)) as info:
        load_campaign(_campaign(tmp_path, [], 'fields = { txet = "a" }\n'))
    [problem] = _problems(info.value)
    assert problem.field == "datasets[0].fields.txet"
    assert "did you mean 'text'?" in problem.message
    with pytest.raises((CampaignError, CampaignErrors)) as info:
        load_campaign(_campaign(tmp_path, [], 'extra = "drop"\n'))
    assert "datasets[0].extra" in str(info.value)


def test_kept_columns_are_reference_metadata_of_the_artifact(tmp_path: Path) -> None:
    rows = [{"qid": 1, "answer": "yes", "split": "test", "score": 0.5}]
    mapped = 'fields = { id = "qid", text = "answer" }\n'
    campaign = load_campaign(_campaign(tmp_path, rows, mapped))
    assert check_artifacts(campaign).count == 1
    [(_, artifact)] = list(iter_placed(campaign))
    assert artifact.id == "1" and artifact.text == "yes"
    assert sorted(artifact.metadata) == ["score", "split"]
    split = artifact.metadata["split"]
    assert split.origin == "reference" and split.reveal() == "test"
    # Serialised (a ledger payload, a log line), a kept value is its digest and length.
    dumped = artifact.model_dump_json()
    assert '"test"' not in dumped and "0.5" not in dumped


def test_a_json_lines_error_never_suggests_toml(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path, [{"id": False, "text": "x"},
                                                  {"id": "b", "text": "y", "truth": "maybe"}]))
    with pytest.raises(CampaignErrors) as info:
        check_artifacts(campaign)
    fixes = [p.fix or "" for p in info.value.problems]
    assert fixes[0] == '"id": "c1"'
    assert fixes[1].startswith('"truth": one of')
    assert not any(" = " in fix for fix in fixes)
