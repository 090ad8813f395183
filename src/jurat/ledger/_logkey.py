"""The log key's files: where they are, how they are written and read.

The log key is the Ed25519 key that signs the ledger's checkpoints (C2SP signed notes,
``_note.py``). It is chosen as explicitly as the receipt-signing key and kept beside it
(docs/receipt-format.md §4.2)::

    DIR/jurat.key       receipt-signing key (receipts/_keys.py)
    DIR/jurat.pub       its public half, SPKI PEM
    DIR/jurat-log.key   log key: PKCS#8 PEM Ed25519, mode 0600
    DIR/jurat-log.pub   its public half: one C2SP verifier-key line, name+id+key

A signing key ``DIR/<stem>.key`` has its log key at ``DIR/<stem>-log.key``
(:func:`log_key_beside`); a log key ``X.key`` has its public half at ``X.pub``
(:func:`log_public_path`). The verifier-key line is what ``parse_checkpoint`` takes and
what other C2SP tooling reads; its name is the log's origin, so it also says which log
the key is for.

Before the log key was explicit, jurat signed every checkpoint with a hidden
``$XDG_CONFIG_HOME/jurat/log.key`` (:func:`legacy_log_key_path`). Ledgers checkpointed
with it keep working: nothing here reads that key unless it is named, and
:func:`wrong_log_key` says when it is the key a ledger needs.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from jurat.errors import ConfigError
from jurat.ledger._note import LogSigner, default_origin, public_key_from_verifier, verifier_key
from jurat.receipts._keys import default_key_dir

__all__ = [
    "LEGACY_LOG_KEY_NAME",
    "LOG_KEY_NAME",
    "LOG_PUBLIC_NAME",
    "default_log_key_path",
    "default_log_public_path",
    "legacy_log_key_path",
    "load_log_key",
    "load_log_verifier",
    "load_or_create_log_key",
    "log_key_beside",
    "log_keygen",
    "log_public_beside",
    "log_public_path",
    "needed_log_key",
    "write_log_public",
    "wrong_log_key",
]

#: The log key's file name in a key directory, beside ``jurat.key``.
LOG_KEY_NAME = "jurat-log.key"
#: Its public half: one C2SP verifier-key line.
LOG_PUBLIC_NAME = "jurat-log.pub"
#: The hidden log key of jurat before the log key was explicit (read only when named).
LEGACY_LOG_KEY_NAME = "log.key"

#: A verifier-key line is well under 200 bytes; anything past this is not one.
_MAX_PUBLIC_BYTES = 4096


def log_key_beside(signing_key: str | os.PathLike[str]) -> Path:
    """The log key that goes with a signing key: ``DIR/<stem>-log.key`` beside
    ``DIR/<stem>.key`` (``jurat.key`` -> ``jurat-log.key``)."""
    path = Path(signing_key)
    return path.with_name(f"{path.stem}-log.key")


def log_public_beside(public_key: str | os.PathLike[str]) -> Path:
    """The log's public key that goes with a receipt public key: ``DIR/<stem>-log.pub``
    beside ``DIR/<stem>.pub``."""
    path = Path(public_key)
    return path.with_name(f"{path.stem}-log.pub")


def log_public_path(log_key: str | os.PathLike[str]) -> Path:
    """Where a log key's public half is written: ``X.pub`` beside ``X.key``."""
    return Path(log_key).with_suffix(".pub")


def default_log_key_path() -> Path:
    """``<config dir>/jurat/jurat-log.key``, beside the default signing key
    (``receipts._keys.default_key_dir``)."""
    return default_key_dir() / LOG_KEY_NAME


def default_log_public_path() -> Path:
    """``<config dir>/jurat/jurat-log.pub``, beside the default ``jurat.pub``."""
    return default_key_dir() / LOG_PUBLIC_NAME


def legacy_log_key_path() -> Path:
    """Where jurat kept its hidden log key before the log key was explicit:
    ``$XDG_CONFIG_HOME/jurat/log.key``, else ``~/.config/jurat/log.key`` (the old rule,
    kept exactly, relative ``XDG_CONFIG_HOME`` included, so that the old key is found)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "jurat" / LEGACY_LOG_KEY_NAME


def load_log_key(
    path: str | os.PathLike[str] | None = None, *, name: str | None = None
) -> LogSigner:
    """Load an existing PKCS#8 PEM Ed25519 log key; refuse one others can read.

    Without ``path``, :func:`default_log_key_path`.
    """
    key_path = Path(path) if path is not None else default_log_key_path()
    try:
        mode = key_path.stat().st_mode
        data = key_path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read log key {key_path}: {exc.strerror}") from exc
    if mode & 0o077:
        raise ConfigError(f"log key {key_path} is readable by others (fix: chmod 600 {key_path})")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise ConfigError(f"log key {key_path} is not an unencrypted PKCS#8 PEM key") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(
            f"log key {key_path} is not an Ed25519 key (fix: a log key is the {LOG_KEY_NAME} "
            "`jurat keygen --out DIR` writes, not the receipt-signing key)"
        )
    return LogSigner(key, name=name)


def _pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _publish(path: Path, data: bytes, mode: int) -> bool:
    """Write ``data`` to ``path`` unless it exists; True if this call wrote it.

    The data goes to a private temporary file first and ``link()`` publishes the complete
    file atomically, failing when another process got there first (it then wins).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as fh:
            # The umask may have narrowed the mode; set it exactly (a public key stays readable).
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError as exc:
        raise ConfigError(f"cannot create {path}: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return True


def write_log_public(signer: LogSigner, path: str | os.PathLike[str]) -> bool:
    """Write the signer's verifier-key line to ``path`` unless the file exists.

    Returns True when written. Public material: mode 0644.
    """
    return _publish(Path(path), (signer.verifier_key() + "\n").encode("ascii"), 0o644)


def load_or_create_log_key(
    path: str | os.PathLike[str] | None = None, *, name: str | None = None
) -> LogSigner:
    """Load the log key at ``path`` (default :func:`default_log_key_path`), creating it if
    absent, with its public half (:func:`log_public_path`) beside it.

    A new key is written as PKCS#8 PEM with mode 0600, in a directory made 0700; when two
    processes race, both end up with the one key that was published first.
    """
    key_path = Path(path) if path is not None else default_log_key_path()
    if key_path.exists():
        return load_log_key(key_path, name=name)
    key = Ed25519PrivateKey.generate()
    if not _publish(key_path, _pem(key), 0o600):
        return load_log_key(key_path, name=name)
    signer = LogSigner(key, name=name)
    write_log_public(signer, log_public_path(key_path))
    return signer


def log_keygen(out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``out_dir/jurat-log.key`` and ``out_dir/jurat-log.pub``; never overwrite.

    Raises ConfigError when either file exists.
    """
    out = Path(out_dir)
    key_path, pub_path = out / LOG_KEY_NAME, out / LOG_PUBLIC_NAME
    for path in (key_path, pub_path):
        if path.exists() or path.is_symlink():
            raise ConfigError(
                f"refusing to overwrite existing key file {path} "
                "(fix: choose another --out directory or move the old key away)"
            )
    key = Ed25519PrivateKey.generate()
    if not _publish(key_path, _pem(key), 0o600):
        raise ConfigError(f"refusing to overwrite existing key file {key_path}")
    if not write_log_public(LogSigner(key), pub_path):
        key_path.unlink(missing_ok=True)  # half a pair would make the next keygen refuse
        raise ConfigError(f"refusing to overwrite existing key file {pub_path}")
    return key_path, pub_path


def load_log_verifier(path: str | os.PathLike[str]) -> str:
    """The C2SP verifier key in ``path``: a ``jurat-log.pub`` line, or an Ed25519 public key
    as SPKI PEM (then named by its default origin, as jurat names its logs).

    Raises ConfigError for an unreadable file, a private key, or anything else.
    """
    key_path = Path(path)
    try:
        with key_path.open("rb") as fh:
            data = fh.read(_MAX_PUBLIC_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read log public key {key_path}: {exc.strerror}") from exc
    if b"PRIVATE KEY" in data:
        raise ConfigError(
            f"{key_path} holds a private key; checking a checkpoint needs the log's public key "
            f"(fix: pass the {log_public_path(key_path).name} written beside it)"
        )
    if data.lstrip().startswith(b"-----BEGIN PUBLIC KEY-----"):
        return _verifier_from_pem(data, key_path)
    try:
        text = data.decode("ascii").strip()
        public_key_from_verifier(text)
    except (UnicodeDecodeError, ConfigError) as exc:
        raise ConfigError(
            f"{key_path} is not a log public key: expected one C2SP verifier-key line "
            f"<name>+<hex key id>+<base64 key>, as in {LOG_PUBLIC_NAME} (fix: pass the "
            f"{LOG_PUBLIC_NAME} written beside the log key)"
        ) from exc
    return text


def _verifier_from_pem(data: bytes, source: Path) -> str:
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ConfigError(f"{source}: not a PEM public key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(
            f"{source} is not an Ed25519 key: a log key is Ed25519 (fix: pass the "
            f"{LOG_PUBLIC_NAME} written beside the log key, not the receipt key's .pub)"
        )
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return verifier_key(default_origin(raw), raw)


def needed_log_key(ledger_origin: str, place: Path | None = None) -> str:
    """The fix for a ledger whose checkpoints are signed as ``ledger_origin``: pass that
    key, named when it is jurat's legacy hidden key on this machine (which may also be
    moved to ``place``, where the command looked for the log key)."""
    legacy = legacy_log_key_path()
    if legacy.exists():
        try:
            if load_log_key(legacy).origin == ledger_origin:
                move = (
                    f"move it to {place}"
                    if place is not None
                    else (f"move it beside your signing key as {LOG_KEY_NAME}")
                )
                return (
                    f"pass --log-key {legacy}: it signed them (jurat's hidden default log "
                    f"key before the log key was explicit); or {move}"
                )
        except ConfigError:
            pass  # unreadable: it cannot be named as the fix
    return f"pass --log-key with the key that signed them (its public half names {ledger_origin})"


def wrong_log_key(ledger_origin: str, signer: LogSigner, key_path: Path | None) -> str:
    """Why ``signer`` cannot sign this ledger's next checkpoint, and which key can.

    One log has one identity (its origin): a second key would split its history between
    two origins no verifier connects.
    """
    which = f"the log key {key_path}" if key_path is not None else "this log key"
    return (
        f"this ledger's checkpoints are signed as {ledger_origin!r}, and {which} signs as "
        f"{signer.origin!r}; use the same log key (fix: {needed_log_key(ledger_origin)})"
    )
