"""The typer app and its command groups, shared by the modules that declare commands
(``_app``: evaluation and the ledger; ``_app_service``: the service, its tokens and
reviews, the signer and the board)."""

from __future__ import annotations

from typing import Any

import typer
from typer._click import Context  # typer vendors click (typer._click): its classes are these
from typer._click.exceptions import UsageError
from typer.core import TyperGroup

from jurat.cli._exit import ExitCode

__all__ = ["app", "ledger_arg", "log_app", "print_version", "signer_app", "token_app"]


class _Commands(TyperGroup):
    """A command group whose usage errors exit INPUT (3): click gives every usage error the
    status 2, which means reject/block here."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Context | None = None,
        **extra: Any,
    ) -> Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            exc.exit_code = ExitCode.INPUT
            raise

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            exc.exit_code = ExitCode.INPUT
            raise


app = typer.Typer(
    name="jurat", no_args_is_help=True, add_completion=False, cls=_Commands,
    help="Turn noisy LLM judgments into signed, replayable verdicts.",
)
log_app = typer.Typer(no_args_is_help=True, cls=_Commands,
                      help="Checkpoints and proofs of the ledger's log.")
app.add_typer(log_app, name="log")
token_app = typer.Typer(no_args_is_help=True, cls=_Commands,
                        help="Bearer tokens of `jurat serve`.")
app.add_typer(token_app, name="token")
signer_app = typer.Typer(no_args_is_help=True, cls=_Commands,
                         help="The restricted settlement signer (docs/signer.md).")
app.add_typer(signer_app, name="signer")


def ledger_arg(value: str | None) -> str | None:
    """Every command's ledger argument as a URL: a bare path is the SQLite file it names
    (``path.db`` is ``sqlite:///path.db``; ledger/_url.py)."""
    if value is None:
        return None
    from jurat.ledger import ledger_url

    return ledger_url(value)


def print_version(value: bool) -> None:
    if value:
        from jurat._version import __version__

        print(f"jurat {__version__}")
        raise typer.Exit(0)
