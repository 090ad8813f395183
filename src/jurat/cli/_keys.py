"""Which keys a command uses: the one key story (docs/receipt-format.md §4.2).

Two key pairs sit side by side in one directory, and every command that signs or checks
names them or finds them there::

    DIR/jurat.key  DIR/jurat.pub          signs receipts / checks them (jurat verify --key)
    DIR/jurat-log.key  DIR/jurat-log.pub  signs the ledger's checkpoints / checks them
                                          (jurat verify --checkpoint … --log-key)

``jurat keygen --out DIR`` writes all four. The log key is ``--log-key FILE`` when given,
else the one beside the signing key (``DIR/<stem>-log.key`` beside ``DIR/<stem>.key``),
else the one beside the default signing key in the configuration directory. Nothing is
ever signed or checked with a key the command did not name or print.

Choosing the log key before anything is written matters: a ledger whose checkpoints one
key signed cannot take a checkpoint from another, and finding that out after a run would
leave a run whose receipts have no proof. So ``open_log_signer`` compares the key with the
ledger's checkpoints before the run, and refuses (exit 3) with the key the ledger needs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict

from jurat.errors import ConfigError
from jurat.ledger import (
    LOG_KEY_NAME,
    LOG_PUBLIC_NAME,
    Ledger,
    LogSigner,
    default_log_key_path,
    default_log_public_path,
    load_log_key,
    load_log_verifier,
    load_or_create_log_key,
    log_key_beside,
    log_keygen,
    log_public_beside,
    log_public_path,
    needed_log_key,
    write_log_public,
    wrong_log_key,
)
from jurat.models import Frozen
from jurat.receipts._keys import PRIVATE_KEY_NAME, PUBLIC_KEY_NAME, keygen

__all__ = [
    "LogKeyChoice",
    "OpenedLogKey",
    "check_log_key",
    "choose_log_key",
    "choose_log_public",
    "keygen_pairs",
    "missing_log_public",
    "open_log_signer",
    "read_log_public",
]


class LogKeyChoice(Frozen):
    """The log key file a command will use, and why that one."""

    path: Path
    """The file: a private key to sign checkpoints, a public key to check them."""
    source: str
    """How it was chosen, as the output says it: ``--log-key``, ``beside --key`` or
    ``the default``."""
    explicit: bool
    """Named with ``--log-key``: it must exist, and is never created."""


class OpenedLogKey(Frozen):
    """The log key a command signs checkpoints with."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    signer: LogSigner
    """The Ed25519 key and its name (the log's origin)."""
    path: Path
    """The private key file."""
    public_path: Path | None
    """Its public half (a C2SP verifier-key line), or None when it could not be written."""
    created: bool
    """The key was created just now (it was absent, and the ledger had no checkpoint)."""


def choose_log_key(log_key: Path | None, signing_key: Path | None) -> LogKeyChoice:
    """The private log key: ``--log-key``, else beside ``--key``, else the default."""
    if log_key is not None:
        return LogKeyChoice(path=log_key, source="--log-key", explicit=True)
    if signing_key is not None:
        return LogKeyChoice(path=log_key_beside(signing_key), source="beside --key",
                            explicit=False)
    return LogKeyChoice(path=default_log_key_path(), source="the default", explicit=False)


def choose_log_public(log_key: Path | None, public_key: Path | None) -> LogKeyChoice:
    """The log's public key: ``--log-key``, else beside ``--key``, else the default."""
    if log_key is not None:
        return LogKeyChoice(path=log_key, source="--log-key", explicit=True)
    if public_key is not None:
        return LogKeyChoice(path=log_public_beside(public_key), source="beside --key",
                            explicit=False)
    return LogKeyChoice(path=default_log_public_path(), source="the default", explicit=False)


def _ledger_origin(ledger: Ledger) -> str | None:
    """The origin the ledger's checkpoints are signed as, None before the first one."""
    checkpoints = ledger.checkpoints()
    return str(checkpoints[-1].origin) if checkpoints else None


def check_log_key(choice: LogKeyChoice) -> None:
    """Before the ledger opens: a log key that exists (or is named) must load.

    Raises ConfigError (exit 3) so that a bad ``--log-key`` is refused before a ledger file
    is created; ``open_log_signer`` then holds the key against the ledger.
    """
    if choice.explicit or choice.path.exists():
        _load(choice)


def _load(choice: LogKeyChoice) -> LogSigner:
    try:
        return load_log_key(choice.path)
    except ConfigError as exc:
        fix = ("`jurat keygen --out DIR` writes DIR/jurat-log.key beside DIR/jurat.key"
               if choice.explicit else "restore it, or pass --log-key FILE")
        raise ConfigError(f"{choice.source}: {exc} (fix: {fix})") from exc


def open_log_signer(choice: LogKeyChoice, ledger: Ledger) -> OpenedLogKey:
    """Load the chosen log key, or create it (with its public half) when it is not named,
    absent, and the ledger has no checkpoint yet.

    Raises ConfigError (exit 3, before anything is evaluated) for a named key that cannot
    be read, and for a key that did not sign the ledger's checkpoints, naming the key that
    did where it can.
    """
    origin = _ledger_origin(ledger)
    path = choice.path
    created = False
    if choice.explicit or path.exists():
        signer = _load(choice)
    elif origin is not None:
        raise ConfigError(
            f"there is no log key at {path} ({choice.source}), and this ledger's checkpoints "
            f"are signed as {origin!r}: a new key could not sign the next one "
            f"(fix: {needed_log_key(origin, path)})"
        )
    else:
        signer = load_or_create_log_key(path)
        created = True
    if origin is not None and signer.origin != origin:
        raise ConfigError(wrong_log_key(origin, signer, path))
    return OpenedLogKey(signer=signer, path=path, public_path=_public_half(signer, path),
                        created=created)


def _public_half(signer: LogSigner, path: Path) -> Path | None:
    """The file holding ``signer``'s verifier key beside ``path``, written if absent (a key
    made before its public half was exported, like the legacy ``log.key``, gets it now).

    None when it cannot be written (a read-only directory) or holds another key: the output
    then prints the verifier key itself rather than point at a file that would not check.
    """
    public = log_public_path(path)
    try:
        write_log_public(signer, public)
        return public if load_log_verifier(public) == signer.verifier_key() else None
    except ConfigError:
        return None


def read_log_public(choice: LogKeyChoice) -> str | None:
    """The verifier key in the chosen file; None when it was not named and is absent.

    Raises ConfigError for a named file that cannot be read or is not a log public key.
    """
    if not choice.explicit and not choice.path.exists():
        return None
    try:
        return load_log_verifier(choice.path)
    except ConfigError as exc:
        raise ConfigError(f"{choice.source}: {exc}") from exc


def missing_log_public(choice: LogKeyChoice) -> str:
    """Why a checkpoint cannot be checked without the log key, and the fix."""
    return (f"the checkpoint's signature was NOT checked: no log public key at {choice.path} "
            f"({choice.source}) (fix: pass --log-key DIR/{LOG_PUBLIC_NAME}, the public half "
            "of the log key that signed the checkpoint, written beside it)")


def keygen_pairs(out: Path) -> tuple[Path, Path, Path, Path]:
    """``jurat keygen --out DIR``: the signing pair and the log pair, or neither.

    Refuses (ConfigError) when any of the four files exists, before writing any.
    """
    names = (PRIVATE_KEY_NAME, PUBLIC_KEY_NAME, LOG_KEY_NAME, LOG_PUBLIC_NAME)
    for name in names:
        path = out / name
        if path.exists() or path.is_symlink():
            raise ConfigError(
                f"refusing to overwrite existing key file {path} "
                "(fix: choose another --out directory or move the old key away)"
            )
    priv, pub = keygen(out)
    try:
        log_priv, log_pub = log_keygen(out)
    except ConfigError:
        # Both pairs or neither: half a directory would make the next keygen refuse.
        priv.unlink(missing_ok=True)
        pub.unlink(missing_ok=True)
        raise
    return priv, pub, log_priv, log_pub
