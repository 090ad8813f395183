"""``jurat token create|revoke``: the service's Bearer tokens (service/_tokens.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console
from jurat.errors import ConfigError

__all__ = ["revoke_hint", "token_create_command", "token_revoke_command"]


def token_create_command(ledger: str | None, campaign: str, role: str,
                         subject: str | None, *, new_campaign: bool = False) -> ExitCode:
    """Print the new token alone on the last line of standard output, once.

    A campaign id the ledger does not know (no entry and no valid token names it;
    ``known_campaigns``) is refused, exit 3 and nothing written, naming the ids it knows,
    unless ``new_campaign`` (``--new-campaign``) says it is a campaign not served yet: a
    token for a misspelt id, or made in another ledger than the server's, would be
    refused by the server as if it did not exist, with nothing to say why."""
    from jurat.service import TokenStore
    from jurat.service._tokens import ALL_CAMPAIGNS, check_token_fields, known_campaigns

    check_token_fields(campaign=campaign, role=role, subject=subject)
    known = known_campaigns(ledger)
    new = campaign != ALL_CAMPAIGNS and campaign not in known
    if new and not new_campaign:
        raise ConfigError(_unknown(campaign, known, ledger))
    with TokenStore(ledger) as store:
        token_id, token = store.create(campaign=campaign, role=role, subject=subject)
    if new:
        err_console().print(f"campaign {campaign} is new to this ledger (--new-campaign): the "
                            "token works once `jurat serve` serves a campaign file whose "
                            f"[campaign] id is {campaign}", markup=False, highlight=False)
    who = f" for {subject}" if subject else ""
    err_console().print(f"token {token_id}: {role}{who} in campaign {campaign}; it is shown "
                        f"once, only its hash is stored (revoke: {revoke_hint(ledger, token_id)})",
                        markup=False, highlight=False)
    print(token, flush=True)
    return ExitCode.OK


def _unknown(campaign: str, known: frozenset[str], ledger: str | None) -> str:
    """Why ``campaign`` is refused: what the ledger knows, the closest id, the fix."""
    from jurat.models._problems import close_match

    where = _shown_url(ledger)[0]
    if not known:
        said = f"this ledger ({where}) knows no campaign yet"
    else:
        ids = sorted(known)
        guess = close_match(campaign, ids)
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        said = (f"this ledger ({where}) knows {shown}"
                + (f"; did you mean {guess!r}?" if guess else ""))
    return (f"--campaign {campaign!r} is a campaign no entry and no token of the ledger names: "
            f"{said} (fix: the [campaign] id of the file `jurat serve` serves, and the "
            "--ledger it serves on; for a campaign not served yet, add --new-campaign)")


def _shown_url(ledger: str | None) -> tuple[str, str]:
    """The ledger's URL to show, usable from anywhere (a SQLite path made absolute, the
    default one included), and, when a password was hidden in it, a note saying so."""
    from sqlalchemy.engine import make_url

    url = make_url(ledger if ledger is not None else "sqlite:///jurat.db")
    if url.get_backend_name() == "sqlite" and url.database:
        return f"sqlite:///{Path(url.database).resolve()}", ""
    if url.password is not None:
        return url.render_as_string(hide_password=True), "; put the password back"
    return url.render_as_string(hide_password=False), ""


def revoke_hint(ledger: str | None, token_id: str) -> str:
    """The revoke command for the ledger the token was stored in, to run from anywhere."""
    shown, note = _shown_url(ledger)
    return f"jurat token revoke --ledger {shlex.quote(shown)} {token_id}{note}"


def token_revoke_command(ledger: str | None, token: str) -> ExitCode:
    """Revoke a token given as itself or by its id; a ledger that does not exist is an
    input error (exit 3), never created."""
    from jurat.service import TokenStore

    with TokenStore(ledger, create=False) as store:
        token_id = store.revoke(token)
    print(f"revoked token {token_id}", flush=True)
    return ExitCode.OK
