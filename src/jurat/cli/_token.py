"""``jurat token create|revoke``: the service's Bearer tokens (service/_tokens.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console

__all__ = ["revoke_hint", "token_create_command", "token_revoke_command"]


def token_create_command(ledger: str | None, campaign: str, role: str,
                         subject: str | None) -> ExitCode:
    """Print the new token alone on the last line of standard output, once."""
    from jurat.service import TokenStore

    with TokenStore(ledger) as store:
        token_id, token = store.create(campaign=campaign, role=role, subject=subject)
    who = f" for {subject}" if subject else ""
    err_console().print(f"token {token_id}: {role}{who} in campaign {campaign}; it is shown "
                        f"once, only its hash is stored (revoke: {revoke_hint(ledger, token_id)})",
                        markup=False, highlight=False)
    print(token, flush=True)
    return ExitCode.OK


def revoke_hint(ledger: str | None, token_id: str) -> str:
    """The revoke command for the ledger the token was stored in, to run from anywhere:
    a SQLite path made absolute (the default one included), a password hidden."""
    from sqlalchemy.engine import make_url

    url = make_url(ledger if ledger is not None else "sqlite:///jurat.db")
    shown, note = url.render_as_string(hide_password=False), ""
    if url.get_backend_name() == "sqlite" and url.database:
        shown = f"sqlite:///{Path(url.database).resolve()}"
    elif url.password is not None:
        shown, note = url.render_as_string(hide_password=True), "; put the password back"
    return f"jurat token revoke --ledger {shlex.quote(shown)} {token_id}{note}"


def token_revoke_command(ledger: str | None, token: str) -> ExitCode:
    """Revoke a token given as itself or by its id; a ledger that does not exist is an
    input error (exit 3), never created."""
    from jurat.service import TokenStore

    with TokenStore(ledger, create=False) as store:
        token_id = store.revoke(token)
    print(f"revoked token {token_id}", flush=True)
    return ExitCode.OK
