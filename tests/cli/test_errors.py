"""The one error printer and the one last-resort handler of the command line."""

from __future__ import annotations

import io

import pytest
import typer
from rich.console import Console

from jurat import errors
from jurat.cli import ExitCode, finish, print_error
from jurat.errors import CampaignError, ConfigError, JuratError, LedgerError

_INPUT_FAMILIES = (errors.ConfigError, errors.IntakeError)


def _printed(exc: BaseException, **kwargs: object) -> tuple[ExitCode, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=300, force_terminal=False)
    code = print_error(exc, console=console, **kwargs)  # type: ignore[arg-type]
    return code, buffer.getvalue()


def _subclasses(cls: type[JuratError]) -> list[type[JuratError]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_subclasses(sub))
    return found


@pytest.mark.parametrize("cls", _subclasses(JuratError), ids=lambda c: c.__name__)
def test_every_error_exits_input_or_run_failure(cls: type[JuratError]) -> None:
    expected = ExitCode.INPUT if issubclass(cls, _INPUT_FAMILIES) else ExitCode.RUN_FAILURE
    assert ExitCode(cls.exit_code) == expected


def test_a_campaign_error_names_file_line_field_and_fix() -> None:
    exc = CampaignError("must sum to 1", file="c.toml", line=7, field="rubric.criteria",
                        fix="adjust the weights")
    code, text = _printed(exc)
    assert code == ExitCode.INPUT
    first, second = text.splitlines()
    assert first == "error: c.toml:7: field `rubric.criteria`: must sum to 1"
    assert second == "  fix: adjust the weights"
    # The message itself still carries everything, for callers that only read str().
    assert "(fix: adjust the weights)" in str(exc)


def test_the_class_decides_the_status_unless_the_command_knows_better() -> None:
    assert _printed(LedgerError("cannot append"))[0] == ExitCode.RUN_FAILURE
    # While a command still reads its inputs, nothing was written: an input error.
    assert _printed(LedgerError("no ledger"), code=ExitCode.INPUT)[0] == ExitCode.INPUT


def test_untrusted_text_cannot_restyle_or_forge_output() -> None:
    hostile = ConfigError("value [bold red]x[/] \x1b[2J\nverified: accept")
    code, text = _printed(hostile)
    assert code == ExitCode.INPUT
    assert "[bold red]x[/]" in text and "\x1b" not in text and "\\x1b" in text
    assert not any(line.startswith("verified") for line in text.splitlines())


def test_anything_else_is_an_internal_error() -> None:
    code, text = _printed(KeyError("surprise"))
    assert code == ExitCode.RUN_FAILURE
    assert text.startswith("internal error: KeyError: 'surprise'")
    assert "Traceback" not in text


def test_finish_turns_the_body_into_an_exit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as done:
        finish(lambda: ExitCode.REJECT)
    assert done.value.exit_code == 2

    def fails_mid_run() -> int:
        raise LedgerError("the ledger refused the append")

    with pytest.raises(typer.Exit) as done:
        finish(fails_mid_run)
    assert done.value.exit_code == ExitCode.RUN_FAILURE
    assert "error: the ledger refused the append" in capsys.readouterr().err

    def crashes() -> int:
        raise ZeroDivisionError("division by zero")

    with pytest.raises(typer.Exit) as done:
        finish(crashes)
    assert done.value.exit_code == ExitCode.RUN_FAILURE
    assert "internal error: ZeroDivisionError" in capsys.readouterr().err


def test_the_default_console_prints_line_numbers_verbatim(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Rich turns ":100:" into an emoji unless emoji codes are off (a real report).
    exc = CampaignError("unknown key", file="campaign.toml", line=100, field="campaign.x",
                        fix="remove it")
    print_error(exc)
    assert "campaign.toml:100:" in capsys.readouterr().err
