"""A campaign's reference key: what the digests of its reference material are keyed with.

Threat model (docs/receipt-format.md §11.3). Receipts, the public board, service responses
and the run's result files are read by contributors, and a contributor wants the gold
answers. Those are often short (``1889``, ``Canberra``, ``C``): from a plain SHA-256 of one
they are found by hashing a dictionary of guesses. So every public output binds reference
material (a criteria artifact's ``target``, an equivalence pair's gold ``b``) by
HMAC-SHA256 under this key (``jurat.canonical.keyed_digest``), which only the operator
holds: without it no guess can be tested offline, and with it the operator (or whom they
give it to) checks a reference against a receipt (``jurat verify --reference-key``).

The key is 32 random bytes in ``<campaign file's directory>/.jurat/<campaign id>.reference.key``
(mode 0600, its directory 0700), created the first time a campaign needs it (intake of a
target or a gold ``b``, in ``jurat run``, ``check`` or ``qualify``; or any other caller of
``reference_key``, under ``jurat serve`` too). It sits beside the hidden material it
protects and travels with it (a serve replica on another machine needs the campaign
directory already), and it is not the signing key, so rotating that keeps every job
identity. It is read through the campaign's confined reader (``campaign/_files.py``: a
regular file inside the campaign directory, no symlink out); a directory ``.jurat`` that is
a symlink is refused before a key is written into it. A key file that exists but is not 32
bytes is a ConfigError (exit 3) naming it: a new key would change every digest and job
identity the old one made.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import sys
from pathlib import Path

from jurat.campaign._files import read_inside
from jurat.canonical import keyed_digest, sha256_digest
from jurat.errors import CampaignError, ConfigError
from jurat.models import Campaign

__all__ = [
    "REFERENCE_KEY_BYTES",
    "REFERENCE_KEY_DIR",
    "ReferenceKey",
    "read_reference_key",
    "reference_key",
    "reference_key_path",
]

#: The key's length: SHA-256's output length, the least RFC 2104 §3 recommends for HMAC.
REFERENCE_KEY_BYTES = 32
#: The directory beside the campaign file that holds its keys.
REFERENCE_KEY_DIR = ".jurat"
#: A campaign id that can be a file name as it is; any other is named by its digest.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
#: The most bytes read of a key file: enough to say how wrong a wrong one is.
_MOST_READ = 4096
_FIX = ("restore the campaign's key file from where it is kept; only if it is lost, delete "
        "it: the next run creates another, and every artifact with reference material is "
        "then a new job, judged again")


class ReferenceKey:
    """One campaign's reference key. Its bytes leave it as digests (``digest``), or to
    trusted code that keys its own (``secret``); its ``repr`` names only its file."""

    __slots__ = ("_path", "_secret")

    def __init__(self, secret: bytes, path: Path) -> None:
        if len(secret) != REFERENCE_KEY_BYTES:
            held = f"{len(secret)}" if len(secret) < _MOST_READ else f"at least {_MOST_READ}"
            raise ConfigError(f"{path}: a reference key is {REFERENCE_KEY_BYTES} bytes, this "
                              f"file holds {held} (fix: {_FIX})")
        self._secret = bytes(secret)
        self._path = path

    @property
    def path(self) -> Path:
        """The file the key was read from (or written to)."""
        return self._path

    @property
    def secret(self) -> bytes:
        """The 32 bytes, for trusted code that keys digests where this object does not go
        (``jurat.canonical.keyed_digest``): never to print, log or record."""
        return self._secret

    def digest(self, text: str | bytes) -> str:
        """``hmac-sha256:<hex>`` of ``text`` (str as UTF-8) under this key."""
        return keyed_digest(self._secret, text)

    def __repr__(self) -> str:
        return f"ReferenceKey({str(self._path)!r})"


def _file_name(campaign_id: str) -> str:
    # A campaign id may hold any character; one that cannot be a file name is named by
    # its digest, so no id can lead the key file out of the directory.
    if _PLAIN_ID.fullmatch(campaign_id) and campaign_id not in (".", ".."):
        return f"{campaign_id}.reference.key"
    return f"id-{sha256_digest(campaign_id)[:32]}.reference.key"


def _relative(campaign: Campaign) -> str:
    return f"{REFERENCE_KEY_DIR}/{_file_name(campaign.id)}"


def reference_key_path(campaign: Campaign) -> Path:
    """Where the campaign's reference key is: ``.jurat/<campaign id>.reference.key`` in the
    campaign file's directory."""
    return Path(campaign.base_dir) / _relative(campaign)


#: Keys read, by file: a dataset of 10^5 rows intakes one row at a time, and each costs a
#: ``stat`` instead of a read. An entry holds only while the file is the one read.
_READ: dict[str, tuple[tuple[int, int, int, int], ReferenceKey]] = {}


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def reference_key(campaign: Campaign, *, create: bool = True) -> ReferenceKey:
    """The campaign's reference key, created (and announced on stderr, once) when absent
    and ``create``. Raises ConfigError (exit 3) naming the file when it cannot be read, is
    not 32 bytes, or cannot be created."""
    path = reference_key_path(campaign)
    if not os.path.lexists(path):
        if not create:
            raise ConfigError(f"{path}: no reference key (fix: run the campaign once with "
                              "`jurat run`, which creates it, or restore the file)")
        if _create(path):
            sys.stderr.write(f"created a reference key at {path} (keep it with the campaign's "
                             "hidden material; verification of reference digests needs it)\n")
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the reference key: {exc.strerror} "
                          f"(fix: {_FIX})") from exc
    cached = _READ.get(str(path))
    if cached is not None and cached[0] == _identity(info):
        return cached[1]
    try:
        secret = read_inside(campaign, _relative(campaign), "reference key",
                             cap=_MOST_READ, what="the reference key")
    except CampaignError as exc:
        # The confined reader's own words (a symlink out, not a regular file, too large),
        # said of the key file rather than of a campaign field.
        raise ConfigError(f"{path}: {exc.message} (fix: {_FIX})") from exc
    key = ReferenceKey(secret, path)
    _READ[str(path)] = (_identity(info), key)
    return key


def _create(path: Path) -> bool:
    """Write a new key to ``path`` unless another process did first (then theirs is kept);
    True if this call wrote it.

    The bytes go to a private temporary file, and ``link`` publishes the whole file at
    once, failing when the name exists: two replicas starting together end up with one key.
    """
    directory = path.parent
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ConfigError(f"{directory}: cannot create the reference key's directory: "
                          f"{exc.strerror} (fix: make the campaign directory writable)") from exc
    if directory.is_symlink() or not directory.is_dir():
        # A key written through a planted link would land wherever it leads.
        raise ConfigError(f"{directory}: not a directory of the campaign's own (a symlink or "
                          "a file); no reference key was written (fix: remove it)")
    temporary = directory / f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(temporary, flags, 0o600)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), stat.S_IRUSR | stat.S_IWUSR)  # whatever the umask
            handle.write(secrets.token_bytes(REFERENCE_KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False  # another process published its key first: that one is the campaign's
    except OSError as exc:
        raise ConfigError(f"{path}: cannot create the reference key: {exc.strerror} "
                          "(fix: make the campaign directory writable)") from exc
    finally:
        temporary.unlink(missing_ok=True)
    return True


def read_reference_key(path: str | os.PathLike[str]) -> ReferenceKey:
    """The key in a file the verifier names (``jurat verify --reference-key FILE``): the
    operator's copy, wherever it is kept. Raises ConfigError (exit 3) when it cannot be
    read or is not 32 bytes."""
    file = Path(path)
    try:
        with file.open("rb") as handle:
            secret = handle.read(_MOST_READ)
    except OSError as exc:
        raise ConfigError(f"cannot read reference key {file}: {exc.strerror or exc} "
                          "(fix: name the campaign's .jurat/<campaign id>.reference.key)"
                          ) from exc
    return ReferenceKey(secret, file)
