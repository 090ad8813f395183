"""A campaign file's problems are all reported at once, each with file, line, field and fix,
in plain words: the closest known name for a misspelling, honest numbers, no library text."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat import load_campaign
from jurat.errors import CampaignError, CampaignErrors, ConfigError
from jurat.models import Campaign

RUBRIC = """\
[campaign]
id = "fizzbuzz"
kind = "rubric"
risk_tier = "standard"
allowed_destinations = ["sim"]

[intake]
max_artifact_bytes = 65536

[rubric]
version = "code-review/1"
threshold = 0.75
hard_gates = ["python.parse", "python.imports", "tests.pass"]
criteria = [
  { id = "correctness",  weight = 0.45, minimum = 3 },
  { id = "reasoning",    weight = 0.25 },
  { id = "adherence",    weight = 0.20 },
  { id = "presentation", weight = 0.10 },
]

[checks.python]
tests = "tests/test_fizzbuzz.py"
limits = { wall_s = 10, cpu_s = 5 }

[[judges]]
id = "sim-a"
provider = "sim"
samples = 3

[[judges]]
id = "sim-b"
provider = "sim"
samples = 3

[[artifacts]]
id = "alice"
path = "submissions/alice.py"
truth = "accept"

[[artifacts]]
id = "bob"
path = "submissions/bob.py"
tests = "tests/test_fizzbuzz.py"
truth = "reject"
"""

CRITERIA = """\
[campaign]
id = "answers"
kind = "criteria"

[criteria]
samples = 3
items = [
  { id = "final-answer", text = "Does it end with one number?", blocker = true },
  { id = "correct", text = "Is it correct?" },
]

[[judges]]
id = "sim-a"
provider = "sim"

[[artifacts]]
id = "a1"
text = "A: 18"
truth = { final-answer = "yes", correct = "no" }
"""

EQUIVALENCE = """\
[campaign]
id = "pairs"
kind = "equivalence"

[equivalence]
votes = 3
min_agreement = 2

[[judges]]
id = "sim-eq"
provider = "sim"

[[artifacts]]
id = "p1"
a = "3"
b = "3.0"
truth = "EQUIVALENT"
"""


def write(tmp_path: Path, text: str) -> Path:
    """The campaign and the files RUBRIC names, in a fresh directory."""
    (tmp_path / "submissions").mkdir(exist_ok=True)
    (tmp_path / "tests").mkdir(exist_ok=True)
    for name in ("alice.py", "bob.py"):
        (tmp_path / "submissions" / name).write_text("def fizzbuzz(n):\n    return n\n")
    (tmp_path / "tests" / "test_fizzbuzz.py").write_text("def test_x():\n    pass\n")
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return path


def changed(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new, 1)
    return text


def line_of(text: str, snippet: str) -> int:
    """The 1-based line of the first line holding ``snippet``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if snippet in line)


def problems(error: CampaignError) -> tuple[CampaignError, ...]:
    return error.problems if isinstance(error, CampaignErrors) else (error,)


def refused(path: Path) -> CampaignError:
    with pytest.raises(CampaignError) as info:
        load_campaign(path)
    return info.value


def only(path: Path) -> CampaignError:
    error = refused(path)
    assert not isinstance(error, CampaignErrors), error.diagnostics()
    assert error.file == str(path)
    return error


#: Library wording that must never reach a user (pydantic's, and its error-page links).
RAW = ("Input should", "should have at least", "validation error", "Value error",
       "pydantic", "errors.pydantic.dev", "Extra inputs", "Field required")


def assert_plain(error: CampaignError) -> None:
    text = error.diagnostics() + str(error)
    for raw in RAW:
        assert raw not in text, text


def test_the_example_campaigns_here_load(tmp_path: Path) -> None:
    assert isinstance(load_campaign(write(tmp_path, RUBRIC)), Campaign)
    for text in (CRITERIA, EQUIVALENCE):
        assert isinstance(load_campaign(write(tmp_path, text)), Campaign)


# --- did you mean ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "old", "new", "field", "wrong", "right"),
    [
        (RUBRIC, 'risk_tier = "standard"', 'risk_tier = "standard"\nallowed_destination = []',
         "campaign.allowed_destination", "allowed_destination", "allowed_destinations"),
        (RUBRIC, "max_artifact_bytes", "max_artifact_byte", "intake.max_artifact_byte",
         "max_artifact_byte", "max_artifact_bytes"),
        (RUBRIC, "threshold = 0.75", "treshold = 0.75", "rubric.treshold", "treshold",
         "threshold"),
        (RUBRIC, "weight = 0.25", "wieght = 0.25", "rubric.criteria[1].wieght", "wieght",
         "weight"),
        (RUBRIC, 'tests = "tests/', 'test = "tests/', "checks.python.test", "test", "tests"),
        (RUBRIC, "wall_s = 10", "wal_s = 10", "checks.python.limits.wal_s", "wal_s", "wall_s"),
        (RUBRIC, "samples = 3", "sample = 3", "judges[0].sample", "sample", "samples"),
        (RUBRIC, 'truth = "reject"', 'truht = "reject"', "artifacts[1].truht", "truht", "truth"),
        (RUBRIC, 'risk_tier = "standard"', "risk_tier = { vote = 3 }",
         "campaign.risk_tier.vote", "vote", "votes"),
        (CRITERIA, "samples = 3", "sampels = 3", "criteria.sampels", "sampels", "samples"),
        (CRITERIA, "blocker = true", "blocked = true", "criteria.items[0].blocked", "blocked",
         "blocker"),
        (EQUIVALENCE, "min_agreement = 2", "min_agrement = 2", "equivalence.min_agrement",
         "min_agrement", "min_agreement"),
    ],
)
def test_an_unknown_key_gets_the_closest_known_one_at_every_level(
    tmp_path: Path, text: str, old: str, new: str, field: str, wrong: str, right: str
) -> None:
    text = changed(text, (old, new))
    error = only(write(tmp_path, text))
    assert error.field == field
    assert error.line == line_of(text, new.splitlines()[-1])
    assert f"unknown key {wrong!r}" in error.message
    assert f"did you mean {right!r}?" in error.message
    assert error.fix == f"rename it to {right}"
    assert_plain(error)


@pytest.mark.parametrize(
    ("old", "new", "field", "message", "fix"),
    [
        ("[checks.python]", "[check.python]", "check",
         "unknown table [check.python]; did you mean [checks.python]?",
         "rename it to [checks.python]"),
        ("[rubric]", "[rubrik]", "rubrik", "unknown table [rubrik]; did you mean [rubric]?",
         "rename it to [rubric]"),
        ("[[judges]]", "[[judge]]", "judge", "unknown table [[judge]]; did you mean [[judges]]?",
         "rename it to [[judges]]"),
        ("[[artifacts]]", "[artifact]", "artifact",
         "unknown table [artifact]; did you mean [[artifacts]]?", "rename it to [[artifacts]]"),
        ("[checks.python]", "[checks.pyhton]", "checks.pyhton",
         "unknown table [checks.pyhton]; did you mean [checks.python]?",
         "rename it to [checks.python], the one kind of checks there is"),
    ],
)
def test_an_unknown_table_is_named_with_its_line_and_the_table_meant(
    tmp_path: Path, old: str, new: str, field: str, message: str, fix: str
) -> None:
    text = changed(RUBRIC, (old, new))
    path = write(tmp_path, text)
    errors = problems(refused(path))
    # A misspelt [[judges]] or [rubric] also leaves the campaign without one: said too.
    error = next(e for e in errors if e.field == field)
    assert (error.file, error.line, error.message, error.fix) == (
        str(path), line_of(text, new), message, fix)


def test_a_key_in_the_wrong_table_is_sent_to_its_table(tmp_path: Path) -> None:
    text = changed(RUBRIC, ('kind = "rubric"', 'kind = "rubric"\nhard_gates = []'))
    error = only(write(tmp_path, text))
    assert (error.field, error.line) == ("campaign.hard_gates", 4)
    assert error.message == "unknown key 'hard_gates' in [campaign]; it is a key of [rubric]"
    assert error.fix == "move it to [rubric]"
    text = "threshold = 0.5\n" + RUBRIC
    error = only(write(tmp_path, text))
    assert (error.field, error.line) == ("threshold", 1)
    assert error.message == "unknown key 'threshold' at the top of the file; it belongs in " \
        "[rubric]"


@pytest.mark.parametrize(
    ("old", "new", "field", "message", "fix"),
    [
        ('kind = "rubric"', 'kind = "rubrik"', "campaign.kind",
         'must be one of "rubric", "pairwise", "criteria", "equivalence", got "rubrik"; '
         "did you mean 'rubric'?", 'kind = "rubric" (or "pairwise", "criteria", "equivalence")'),
        ('risk_tier = "standard"', 'risk_tier = "standrad"', "campaign.risk_tier",
         "unknown risk tier 'standrad'; did you mean 'standard'?", 'risk_tier = "standard"'),
        ('provider = "sim"', 'provider = "simm"', "judges[0].provider",
         "unknown provider 'simm'; did you mean 'sim'?", 'provider = "sim"'),
        ('"tests.pass"]', '"tests.passs"]', "rubric.hard_gates[2]",
         "unknown gate 'tests.passs'; did you mean 'tests.pass'?", 'write "tests.pass"'),
        ('{ id = "reasoning",', '{ id = "reasonning",', "rubric.criteria[1].id",
         "unknown criterion 'reasonning' (the ARCV Judge Decision v1 schema scores only "
         "correctness, reasoning, adherence, presentation); did you mean 'reasoning'?",
         'id = "reasoning"'),
    ],
)
def test_a_misspelt_value_gets_the_closest_known_one(
    tmp_path: Path, old: str, new: str, field: str, message: str, fix: str
) -> None:
    text = changed(RUBRIC, (old, new))
    error = only(write(tmp_path, text))
    assert (error.field, error.line, error.message, error.fix) == (
        field, line_of(text, new), message, fix)


# --- every problem at once -------------------------------------------------------------------


def test_several_problems_in_one_file_are_all_reported_in_line_order(tmp_path: Path) -> None:
    text = changed(
        RUBRIC,
        ("threshold = 0.75", "treshold = 0.75"),           # unknown key
        ("weight = 0.10", "weight = 0.0999999"),           # semantic: weights
        ("cpu_s = 5", "cpu_s = -5"),                       # out of range
        ('provider = "sim"', 'provider = "simm"'),         # field validator
        ("samples = 3", 'samples = "three"'),              # wrong type
        ('id = "bob"', 'id = "alice"'),                    # duplicate id
        ('truth = "accept"', 'truth = "acept"'),           # truth label
        ('path = "submissions/bob.py"', 'path = "submissions/bobb.py"'),  # missing file
    )
    path = write(tmp_path, text)
    error = refused(path)
    assert isinstance(error, CampaignErrors) and isinstance(error, ConfigError)
    assert error.exit_code == 3
    got = [(p.file, p.line, p.field) for p in error.problems]
    assert got == [
        (str(path), line_of(text, "treshold"), "rubric.treshold"),
        (str(path), line_of(text, "criteria = ["), "rubric.criteria"),
        (str(path), line_of(text, "cpu_s"), "checks.python.limits.cpu_s"),
        (str(path), line_of(text, '"simm"'), "judges[0].provider"),
        (str(path), line_of(text, '"three"'), "judges[0].samples"),
        (str(path), line_of(text, '"acept"'), "artifacts[0].truth"),
        (str(path), line_of(text, 'id = "alice"') + 5, "artifacts[1].id"),
        (str(path), line_of(text, "bobb.py"), "artifacts[1].path"),
    ]
    assert all(p.fix for p in error.problems)
    lines = error.diagnostics().splitlines()
    assert lines[0] == f"{path}: 8 problems, listed by line"
    assert lines[1].startswith(f"[1] {path}:{line_of(text, 'treshold')}: field `rubric.treshold`")
    assert lines[2] == "    fix: rename it to threshold"
    assert len(lines) == 1 + 2 * 8
    assert_plain(error)


def test_a_wrong_field_does_not_hide_the_weights_of_the_same_table(tmp_path: Path) -> None:
    # The rubric's own validator cannot run with threshold out of range; its checks still do.
    text = changed(RUBRIC, ("threshold = 0.75", "threshold = 7.5"),
                   ("weight = 0.45", "weight = 0.5"))
    fields = [p.field for p in problems(refused(write(tmp_path, text)))]
    assert fields == ["rubric.threshold", "rubric.criteria"]


def test_a_problem_reported_by_two_checks_is_listed_once(tmp_path: Path) -> None:
    text = changed(RUBRIC, ('id = "sim-b"', 'id = "sim-a"'), ("samples = 3", "samples = 0"))
    found = problems(refused(write(tmp_path, text)))
    assert [p.field for p in found] == ["judges[0].samples", "judges[1].id"]


# --- plain words instead of library text ------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "message", "fix"),
    [
        ("""criteria = [
  { id = "correctness",  weight = 0.45, minimum = 3 },
  { id = "reasoning",    weight = 0.25 },
  { id = "adherence",    weight = 0.20 },
  { id = "presentation", weight = 0.10 },
]""", "criteria = []", "rubric.criteria", "give at least one criterion",
         'criteria = [{ id = "correctness", weight = 1.0 }]'),
        ("threshold = 0.75", "threshold = 1.75", "rubric.threshold",
         "must be from 0 to 1, got 1.75",
         "threshold = a number from 0 to 1 (the default is 0.75)"),
        ("threshold = 0.75", 'threshold = "high"', "rubric.threshold",
         'must be a number, got "high"', "threshold = 0.75 (the default)"),
        ("cpu_s = 5", "cpu_s = 2.5", "checks.python.limits.cpu_s",
         "must be a whole number, got 2.5", "cpu_s = 2"),
        ("wall_s = 10", "wall_s = 0", "checks.python.limits.wall_s",
         "must be above 0 and at most 3600, got 0",
         "wall_s = a number above 0 and at most 3600 (the default is 10.0)"),
        ('version = "code-review/1"\n', "", "rubric.version", "is required and missing",
         'add version = "code-review/1"'),
        ('id = "bob"', 'id = "bob smith"', "artifacts[1].id",
         "\"bob smith\" is not allowed here: use only letters, digits, '.', '_' and '-'",
         'id = "c1"'),
        ('truth = "reject"', "truth = 5", "artifacts[1].truth",
         "must be a string (in quotes) or a table of strings (in quotes), got 5",
         "truth = \"accept\" (a label of the campaign's kind; see docs/campaign-format.md, "
         '"truth labels")'),
        ("samples = 3", "samples = 2.5", "judges[0].samples", "must be a whole number, got 2.5",
         "samples = 2"),
        ('hard_gates = ["python.parse", "python.imports", "tests.pass"]', 'hard_gates = "all"',
         "rubric.hard_gates", 'must be a list of strings (in quotes), got "all"',
         "hard_gates = a list of strings (in quotes)"),
        ("[rubric]", "[[rubric]]", "rubric", "must be one table, not an array of tables",
         "write [rubric] (single brackets), once"),
        ('[[judges]]\nid = "sim-b"', '[judges]\nid = "sim-b"', "judges",
         "each entry is its own [[judges]] table, not one [judges] table",
         "write [[judges]] (double brackets) above each entry"),
    ],
)
def test_validation_errors_are_plain_words_with_a_fix(
    tmp_path: Path, old: str, new: str, field: str, message: str, fix: str
) -> None:
    text = changed(RUBRIC, (old, new))
    if new == '[judges]\nid = "sim-b"':  # one [judges] table only: the other goes
        text = changed(text, ('[[judges]]\nid = "sim-a"\nprovider = "sim"\nsamples = 3\n\n', ""))
    error = only(write(tmp_path, text))
    assert (error.field, error.message, error.fix) == (field, message, fix)
    # The line of the key, or of its table when the key is missing.
    snippet = new.splitlines()[0] if new else "[rubric]"
    assert error.line == line_of(text, snippet)
    assert_plain(error)


def test_the_criteria_example_of_the_issue_reads_as_promised(tmp_path: Path) -> None:
    text = changed(RUBRIC, ("""criteria = [
  { id = "correctness",  weight = 0.45, minimum = 3 },
  { id = "reasoning",    weight = 0.25 },
  { id = "adherence",    weight = 0.20 },
  { id = "presentation", weight = 0.10 },
]""", "criteria = []"))
    error = only(write(tmp_path, text))
    assert str(error).endswith(
        'field `rubric.criteria`: give at least one criterion '
        '(fix: criteria = [{ id = "correctness", weight = 1.0 }])')


# --- numerically honest --------------------------------------------------------------------


def test_weights_just_short_of_one_say_the_actual_sum_and_the_tolerance(tmp_path: Path) -> None:
    text = changed(RUBRIC, ("weight = 0.10", "weight = 0.0999999"))
    error = only(write(tmp_path, text))
    assert (error.field, error.line) == ("rubric.criteria", line_of(text, "criteria = ["))
    assert error.message == (
        "weights sum to 0.9999999 (0.45 + 0.25 + 0.2 + 0.0999999), not 1 (tolerance 1e-9)")
    assert error.fix == ("make the weights add up to 1: they are short by 0.0000001, e.g. "
                         "presentation weight = 0.1")


def test_weights_over_one_say_by_how_much(tmp_path: Path) -> None:
    error = only(write(tmp_path, changed(RUBRIC, ("weight = 0.45", "weight = 0.55"))))
    assert error.message == "weights sum to 1.1 (0.55 + 0.25 + 0.2 + 0.1), not 1 (tolerance 1e-9)"
    assert error.fix == ("make the weights add up to 1: they are over by 0.1, e.g. "
                         "presentation weight = 0")


def test_weights_within_the_documented_tolerance_are_accepted(tmp_path: Path) -> None:
    thirds = """criteria = [
  { id = "correctness", weight = 0.3333333333 },
  { id = "reasoning",   weight = 0.3333333333 },
  { id = "adherence",   weight = 0.3333333333 },
]"""
    start, end = RUBRIC.index("criteria = ["), RUBRIC.index("]\n\n[checks") + 1
    text = RUBRIC[:start] + thirds + RUBRIC[end:]
    campaign = load_campaign(write(tmp_path, text))
    assert campaign.policy.rubric is not None and len(campaign.policy.rubric.criteria) == 3
    # Ten 3s fall 1e-10 short of 1 in total: inside the tolerance. Eight fall 1e-8 short: out.
    error = only(write(tmp_path, text.replace("0.3333333333", "0.33333333")))
    assert error.message == ("weights sum to 0.99999999 (0.33333333 + 0.33333333 + 0.33333333),"
                             " not 1 (tolerance 1e-9)")


# --- files and labels, found when the campaign is loaded -------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "guess"),
    [
        ('tests = "tests/test_fizzbuzz.py"\nlimits', 'tests = "tests/test_fizbuzz.py"\nlimits',
         "checks.python.tests", "tests/test_fizzbuzz.py"),
        ('path = "submissions/bob.py"', 'path = "submissions/bobb.py"', "artifacts[1].path",
         "submissions/bob.py"),
        ('tests = "tests/test_fizzbuzz.py"\ntruth', 'tests = "tests/fizzbuzz.py"\ntruth',
         "artifacts[1].tests", "tests/test_fizzbuzz.py"),
        ('path = "submissions/bob.py"', 'a_path = "submissions/b.py"\nb = "x"',
         "artifacts[1].a_path", None),
    ],
)
def test_a_missing_file_is_named_at_load_with_the_line_of_its_key(
    tmp_path: Path, old: str, new: str, field: str, guess: str | None
) -> None:
    text = changed(RUBRIC, (old, new))
    path = write(tmp_path, text)
    error = only(path)
    assert error.field == field
    assert error.line == line_of(text, new.splitlines()[0])
    name = new.split('"')[1]
    assert error.message.startswith(
        f"cannot read {name!r}: there is no such file in the campaign file's directory")
    assert (f"did you mean {guess!r}?" in error.message) == (guess is not None)
    assert error.fix == "check the spelling; paths are relative to the campaign file"


def test_several_missing_files_are_named_together(tmp_path: Path) -> None:
    path = write(tmp_path, RUBRIC)
    (tmp_path / "submissions" / "alice.py").unlink()
    (tmp_path / "tests" / "test_fizzbuzz.py").unlink()
    found = problems(refused(path))
    assert [p.field for p in found] == [
        "checks.python.tests", "artifacts[0].path", "artifacts[1].tests"]


def test_a_path_leading_outside_is_not_looked_up_at_load(tmp_path: Path) -> None:
    # Whether a file exists outside the campaign's directory is not said; intake refuses it.
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "submissions").symlink_to(tmp_path)
    text = changed(RUBRIC, ('path = "submissions/alice.py"', 'path = "submissions/nothing.py"'))
    (camp / "tests").mkdir()
    (camp / "tests" / "test_fizzbuzz.py").write_text("")
    (camp / "campaign.toml").write_text(text)
    (tmp_path / "bob.py").write_text("")
    assert load_campaign(camp / "campaign.toml").artifacts[0].path == "submissions/nothing.py"


@pytest.mark.parametrize(
    ("text", "old", "new", "field", "message", "fix"),
    [
        (RUBRIC, 'truth = "accept"', 'truth = "acept"', "artifacts[0].truth",
         "truth 'acept' is not a rubric label; did you mean 'accept'? "
         '(rubric labels: "accept", "reject")', 'truth = one of "accept", "reject"'),
        (RUBRIC, 'truth = "accept"', 'truth = { correctness = "accept" }', "artifacts[0].truth",
         "a table of labels is for criteria campaigns; a rubric artifact has one truth label",
         'truth = one of "accept", "reject"'),
        (CRITERIA, 'correct = "no"', 'correct = "nope"', "artifacts[0].truth.correct",
         "truth 'nope' is not a criteria label; did you mean 'no'? "
         '(criteria labels: "yes", "no")', 'truth = one of "yes", "no"'),
        (CRITERIA, 'final-answer = "yes", c', 'final-anwser = "yes", c',
         "artifacts[0].truth.final-anwser",
         "'final-anwser' is not a criterion of [criteria] items; did you mean 'final-answer'?",
         "use the item ids: final-answer, correct"),
        (EQUIVALENCE, 'truth = "EQUIVALENT"', 'truth = "EQUAL"', "artifacts[0].truth",
         "truth 'EQUAL' is not a equivalence label; did you mean 'EQUIVALENT'? "
         '(equivalence labels: "EQUIVALENT", "DIFFERENT", "ABSTAIN")',
         'truth = one of "EQUIVALENT", "DIFFERENT", "ABSTAIN"'),
    ],
)
def test_a_bad_truth_label_is_refused_at_load(
    tmp_path: Path, text: str, old: str, new: str, field: str, message: str, fix: str
) -> None:
    text = changed(text, (old, new))
    error = only(write(tmp_path, text))
    assert (error.field, error.line, error.message, error.fix) == (
        field, line_of(text, new), message, fix)


def test_truth_labels_match_in_any_case(tmp_path: Path) -> None:
    assert load_campaign(write(tmp_path, changed(RUBRIC, ('"accept"', '" Accept"'))))
    assert load_campaign(write(tmp_path, changed(EQUIVALENCE, ('"EQUIVALENT"', '"equivalent"'))))


# --- TOML syntax ----------------------------------------------------------------------------


def test_a_key_set_twice_is_said_in_words(tmp_path: Path) -> None:
    text = changed(RUBRIC, ("threshold = 0.75", "threshold = 0.75\nthreshold = 0.8"))
    error = only(write(tmp_path, text))
    assert error.line == line_of(text, "threshold = 0.8")
    assert error.message == "not valid TOML: a key is set twice (a key may appear once in a table)"
    assert error.fix == "correct the TOML syntax at line 13, column 16"
    text = RUBRIC + '\n[rubric]\nversion = "2"\n'
    error = only(write(tmp_path, text))
    assert error.message == "not valid TOML: the table [rubric] is declared twice"


# --- what the checks would refuse mid-run, refused at load ------------------------------------


def test_checks_settings_are_refused_at_load_all_together(tmp_path: Path) -> None:
    text = changed(RUBRIC, ('tests = "tests/test_fizzbuzz.py"\nlimits', 'version = "3.99"\n'
                            'import_policy = "jurat.imports/v2"\nlint_rules = ["E", "no rule"]\n'
                            'module = "my-solution"\ntests = "tests/test_fizzbuzz.py"\nlimits'))
    found = problems(refused(write(tmp_path, text)))
    assert [(p.field, p.line, p.fix) for p in found] == [
        ("checks.python.version", line_of(text, "3.99"), "run jurat under Python 3.99 or later"),
        ("checks.python.import_policy", line_of(text, "imports/v2"),
         'import_policy = "jurat.imports/v1" (docs/checks.md)'),
        ("checks.python.lint_rules", line_of(text, "no rule"), 'use codes like "E", "F", "B006"'),
        ("checks.python.module", line_of(text, "my-solution"),
         'a Python identifier such as "solution"'),
    ]
    assert found[1].message == ("unknown import policy 'jurat.imports/v2'; did you mean "
                                "'jurat.imports/v1'?")


def test_a_tests_file_pytest_cannot_import_is_refused_at_load(tmp_path: Path) -> None:
    text = changed(RUBRIC, ('tests = "tests/test_fizzbuzz.py"\ntruth', 'tests = "tests/t-1.py"\n'
                            'truth'))
    path = write(tmp_path, text)
    (tmp_path / "tests" / "t-1.py").write_text("")
    error = only(path)
    assert (error.field, error.line) == ("artifacts[1].tests", line_of(text, "t-1.py"))
    assert error.message == "file name 't-1.py' is not usable"
