"""Bearer tokens for `jurat serve`: created once, stored as a hash, scoped, revocable.

Threat model. Whoever holds a token acts with its role in its campaign; whoever reads the
database must not obtain a usable token. So a token is 32 random bytes (base64url) shown
once, at creation, and only its sha256 is stored: lookups hash what was presented and
compare digests. A token names one campaign (or ``*``, every campaign) and one role
(docs/service.md, "Tokens"); a contributor token also names its subject, which fixes the
contributor of every job it submits. Revocation is a timestamp: a revoked token is refused
exactly like an unknown one, and neither says which it was.

The table lives in the ledger's database beside the ledger's own tables (its name has the
same ``jurat_`` prefix) but is not part of the append-only journal: tokens are access
control, not evidence.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

from sqlalchemy import Column, MetaData, String, Table, select, update
from sqlalchemy.exc import SQLAlchemyError

from jurat.errors import ConfigError, LedgerError
from jurat.ledger._backend import Backend

__all__ = [
    "ALL_CAMPAIGNS",
    "ROLES",
    "Principal",
    "Role",
    "TokenStore",
    "check_token_fields",
    "known_campaigns",
    "token_digest",
]

Role = Literal["operator", "contributor", "reviewer", "verifier"]
ROLES: tuple[str, ...] = get_args(Role)
#: The campaign scope of a token valid for every campaign.
ALL_CAMPAIGNS = "*"
_PREFIX = "jurat_"
_TOKEN_PREFIX = "jt_"
#: Names a subject may take: it becomes a contributor name and part of artifact ids.
_SUBJECT = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_CAMPAIGN = re.compile(r"^[A-Za-z0-9._-]{1,200}$")
_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class Principal:
    """Who presented a valid token: its id, role, campaign scope and subject."""

    token_id: str
    """First 16 hex digits of the token's sha256: how it is named and revoked."""
    role: Role
    """operator, contributor, reviewer or verifier."""
    campaign: str
    """The campaign id it is valid for, or ``*`` for every campaign."""
    subject: str | None
    """Who holds it: a contributor's name (required), a reviewer's (recorded)."""

    def covers(self, campaign_id: str) -> bool:
        """Whether the token's scope includes ``campaign_id``."""
        return self.campaign in (ALL_CAMPAIGNS, campaign_id)

    @property
    def name(self) -> str:
        """How the principal is named in records: its subject, else its token id."""
        return self.subject or f"token:{self.token_id}"


def token_digest(token: str) -> str:
    """sha256 (hex) of a token's text: what is stored and compared."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _table(metadata: MetaData) -> Table:
    return Table(
        f"{_PREFIX}service_tokens", metadata,
        Column("id", String(16), primary_key=True),
        Column("token_sha256", String(64), nullable=False, unique=True),
        Column("campaign", String(200), nullable=False),
        Column("role", String(16), nullable=False),
        Column("subject", String(100), nullable=True),
        Column("created_at", String(32), nullable=False),
        Column("revoked_at", String(32), nullable=True),
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def check_token_fields(*, campaign: str, role: str, subject: str | None) -> None:
    """ConfigError naming the option and the fix when a token could not be made of these:
    an unknown role, a campaign id or subject outside their forms, a contributor without
    its subject."""
    if role not in ROLES:
        raise ConfigError(f"--role {role!r} is not a role (fix: one of {', '.join(ROLES)})")
    if campaign != ALL_CAMPAIGNS and not _CAMPAIGN.match(campaign):
        raise ConfigError(f"--campaign {campaign!r} is not a campaign id (fix: letters, "
                          "digits, '.', '_' or '-', or '*' for every campaign)")
    if subject is not None and not _SUBJECT.match(subject):
        raise ConfigError(f"--subject {subject!r} is not a valid name (fix: 1-100 letters, "
                          "digits, '.', '_' or '-')")
    if role == "contributor" and subject is None:
        raise ConfigError("a contributor token needs --subject NAME: the contributor its "
                          "jobs are recorded under (fix: add --subject alice)")


def known_campaigns(url: str | None) -> frozenset[str]:
    """The campaign ids the database at ``url`` knows: those the ledger has entries of
    (a campaign `jurat run` or `jurat serve` recorded anything for) and those a valid token
    names. Reads only: a database, file or table that does not exist knows none, and none
    is created.

    What `jurat token create` checks a campaign id against (docs/service.md, "Tokens and
    roles"). The ledger's table is read with one ``DISTINCT`` over its indexed
    ``campaign_id`` here, beside the token table, rather than through ``Ledger``, which
    has no such query and would read every entry."""
    backend = Backend(url)
    tokens = _table(MetaData(schema=backend.schema))
    entries = backend.tables.entries
    found: set[str] = set()
    try:
        if backend.name == "sqlite" and not Path(str(backend.url.database)).is_file():
            return frozenset()  # before any connection, which would create the file
        with backend.read() as conn:
            if conn.dialect.has_table(conn, entries.name, backend.schema):
                found |= {str(c) for c in conn.execute(
                    select(entries.c.campaign_id).where(entries.c.campaign_id.is_not(None))
                    .distinct()).scalars()}
            if conn.dialect.has_table(conn, tokens.name, backend.schema):
                found |= {str(c) for c in conn.execute(
                    select(tokens.c.campaign).where(tokens.c.revoked_at.is_(None))
                    .distinct()).scalars()}
    except SQLAlchemyError as exc:
        raise LedgerError(f"cannot read the campaigns of {backend.display_url()}: "
                          f"{getattr(exc, 'orig', None) or exc}") from exc
    finally:
        backend.dispose()
    return frozenset(found - {ALL_CAMPAIGNS})


class TokenStore:
    """The token table of one ledger database. Close it (or use ``with``) when done."""

    def __init__(self, url: str | None, *, create: bool = True) -> None:
        """``create=False``: a database without the token table is a ConfigError (exit 3),
        ``no ledger at …``, and nothing is created (a SQLite file included): revoking
        against the wrong ``--ledger`` must not make an empty one and report success."""
        self._backend = Backend(url)
        self._table = _table(MetaData())
        # Every request looks its token up: plain SQL on the driver's cursor, as the ledger's
        # hot reads (ledger/_commitsql.py), not a Core statement compiled each time.
        ph = "%s" if self._backend.name == "postgresql" else "?"
        self._lookup_sql = (
            f"SELECT id, token_sha256, campaign, role, subject, revoked_at FROM "
            f"{self._backend.qualified('service_tokens')} WHERE token_sha256 = {ph}")
        if not create:
            self._require_table()
        try:
            self._table.metadata.create_all(self._backend.engine)
        except SQLAlchemyError as exc:
            self._backend.dispose()
            raise LedgerError(f"cannot open the token table at {self._backend.display_url()}: "
                              f"{getattr(exc, 'orig', None) or exc}") from exc

    def _require_table(self) -> None:
        backend = self._backend
        missing = ConfigError(f"no ledger at {backend.display_url()} (fix: pass the --ledger "
                              "that `jurat token create` used)")
        if backend.name == "sqlite" and not Path(str(backend.url.database)).is_file():
            backend.dispose()
            raise missing  # before any connection, which would create the file
        try:
            with backend.read() as conn:
                found = conn.dialect.has_table(conn, self._table.name, backend.schema)
        except SQLAlchemyError as exc:
            backend.dispose()
            raise LedgerError(f"cannot reach the ledger at {backend.display_url()}: "
                              f"{getattr(exc, 'orig', None) or exc}") from exc
        if not found:
            backend.dispose()
            raise missing

    def close(self) -> None:
        """Release the database connections."""
        self._backend.dispose()

    def __enter__(self) -> TokenStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def create(self, *, campaign: str, role: str, subject: str | None) -> tuple[str, str]:
        """A new token for ``role`` in ``campaign``; returns (token id, token). The token is
        returned here only: the table keeps its digest. Any well-formed campaign id is
        taken: whether the campaign exists is the command's question (``known_campaigns``)."""
        check_token_fields(campaign=campaign, role=role, subject=subject)
        token = _TOKEN_PREFIX + secrets.token_urlsafe(32)
        digest = token_digest(token)
        row = {"id": digest[:16], "token_sha256": digest, "campaign": campaign, "role": role,
               "subject": subject, "created_at": _now(), "revoked_at": None}
        try:
            with self._backend.write(lock=False) as conn:
                conn.execute(self._table.insert(), row)
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot store the token: {getattr(exc, 'orig', None) or exc}"
                              ) from exc
        return digest[:16], token

    def revoke(self, token_or_id: str) -> str:
        """Revoke a token given as itself or as its id; returns its id."""
        text = token_or_id.strip()
        key = self._table.c.id == text if _ID.match(text) else (
            self._table.c.token_sha256 == token_digest(text))
        try:
            with self._backend.write(lock=False) as conn:
                row = conn.execute(select(self._table.c.id).where(key)).first()
                if row is None:
                    raise ConfigError("no such token (fix: give the token itself or the id "
                                      "`jurat token create` printed)")
                conn.execute(update(self._table).where(self._table.c.id == row.id)
                             .values(revoked_at=_now()))
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot revoke the token: {getattr(exc, 'orig', None) or exc}"
                              ) from exc
        return str(row.id)

    def lookup(self, token: str) -> Principal | None:
        """The principal of a valid (known, unrevoked) token; None for anything else."""
        if not token.startswith(_TOKEN_PREFIX) or len(token) > 200:
            return None
        digest = token_digest(token)
        backend = self._backend
        try:
            with backend.read() as conn, backend.commit_sql.cursor(conn) as cur:
                cur.execute(self._lookup_sql, [digest])
                row = cur.fetchone()
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot read tokens: {getattr(exc, 'orig', None) or exc}"
                              ) from exc
        if row is None:
            return None
        token_id, stored, campaign, role, subject, revoked_at = row
        # The digest was found by an index lookup; the constant-time compare only guards
        # against a database that matched loosely (collation).
        if revoked_at is not None or not hmac.compare_digest(str(stored), digest):
            return None
        if role not in ROLES:
            return None
        return Principal(token_id=str(token_id), role=str(role),  # type: ignore[arg-type]
                         campaign=str(campaign), subject=subject)
