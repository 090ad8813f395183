"""The command line's one error path: print an error, return its exit status.

Every command reports an error through ``print_error``, and ``finish`` (which the typer
commands call) is the one place an error that escaped a command is caught. A
``JuratError`` exits with its class's status (3 an input error, 4 a failure during the
run: ``JuratError.exit_code``) unless the command knows better: whatever fails while it
is still reading its inputs is an input error, nothing having been evaluated or written.
Anything else is a bug: printed as an internal error, exit 4, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import typer
from rich.console import Console

from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console, shown
from jurat.errors import JuratError

__all__ = ["finish", "print_error"]

#: An error's diagnostics are shown whole, line by line, but no line beyond this.
_LINE_CHARS = 2000


def print_error(
    exc: BaseException, *, code: ExitCode | None = None, console: Console | None = None
) -> ExitCode:
    """Print ``exc`` on standard error (or ``console``) and return the status to exit with.

    A JuratError prints its ``diagnostics()`` (the message, naming the field and the fix
    where the error carries them), escaped, and returns ``code`` or the error's own
    ``exit_code``. Any other exception is an internal error: its type and message, and
    RUN_FAILURE.
    """
    console = console or err_console()
    if isinstance(exc, JuratError):
        label = "error"
        lines = exc.diagnostics().splitlines() or [type(exc).__name__]
        status = code if code is not None else ExitCode(exc.exit_code)
    else:
        label = "internal error"
        lines = [f"{type(exc).__name__}: {exc}", "this is a bug in jurat; please report it"]
        status = ExitCode.RUN_FAILURE
    console.print(f"[red]{label}:[/] {shown(lines[0], _LINE_CHARS)}", highlight=False)
    for line in lines[1:]:
        # Indented, so that a newline inside a message cannot forge a line of output.
        console.print("  " + shown(line.lstrip(), _LINE_CHARS), highlight=False)
    return status


def finish(body: Callable[[], int]) -> NoReturn:
    """Run one command's body and exit with the status it returns.

    A JuratError that escapes the body stopped it part-way (its inputs were read): it
    exits with the error's status, 4 unless it is an input error, never 1, which means
    escalate/warn. Anything else is the last resort: an internal error, exit 4.
    """
    try:
        code = body()
    except Exception as exc:  # the one last-resort handler of the command line
        code = print_error(exc)
    raise typer.Exit(int(code))
