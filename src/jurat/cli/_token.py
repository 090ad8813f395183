"""``jurat token create|revoke``: the service's Bearer tokens (service/_tokens.py)."""

from __future__ import annotations

from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console

__all__ = ["token_create_command", "token_revoke_command"]


def token_create_command(ledger: str | None, campaign: str, role: str,
                         subject: str | None) -> ExitCode:
    """Print the new token alone on the last line of standard output, once."""
    from jurat.service import TokenStore

    with TokenStore(ledger) as store:
        token_id, token = store.create(campaign=campaign, role=role, subject=subject)
    who = f" for {subject}" if subject else ""
    err_console().print(f"token {token_id}: {role}{who} in campaign {campaign}; it is shown "
                        "once, only its hash is stored (revoke: jurat token revoke "
                        f"{token_id})", markup=False, highlight=False)
    print(token, flush=True)
    return ExitCode.OK


def token_revoke_command(ledger: str | None, token: str) -> ExitCode:
    """Revoke a token given as itself or by its id."""
    from jurat.service import TokenStore

    with TokenStore(ledger) as store:
        token_id = store.revoke(token)
    print(f"revoked token {token_id}", flush=True)
    return ExitCode.OK
