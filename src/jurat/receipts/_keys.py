"""Signing keys: generation, PEM files, the default key, raw sign/verify and the key hint.

ECDSA P-256 with SHA-256 is the default because it is the key type cosign and
sigstore-js verify with a plain public key (docs/design.md, "Facts measured on these
machines": their Ed25519 and P-384 paths have open bugs). Ed25519 is accepted as an
option.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from jurat.errors import ConfigError

PrivateKey = ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
PublicKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey
Algorithm = Literal["ecdsa-p256", "ed25519"]

PRIVATE_KEY_NAME = "jurat.key"
PUBLIC_KEY_NAME = "jurat.pub"


def _check_curve(key: PrivateKey | PublicKey, source: str) -> None:
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and not isinstance(
        key.curve, ec.SECP256R1
    ):
        raise ConfigError(
            f"{source}: ECDSA key on curve {key.curve.name}; jurat signs and verifies "
            "ECDSA only on P-256 (secp256r1), the curve Sigstore clients accept with a key"
        )


def generate_key(algorithm: Algorithm = "ecdsa-p256") -> PrivateKey:
    """A fresh private key of the given algorithm."""
    if algorithm == "ecdsa-p256":
        return ec.generate_private_key(ec.SECP256R1())
    if algorithm == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    raise ConfigError(f"unknown key algorithm {algorithm!r}; use 'ecdsa-p256' or 'ed25519'")


def private_key_pem(key: PrivateKey) -> bytes:
    """PKCS#8 PEM, unencrypted (file permissions protect it)."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_key_pem(key: PublicKey) -> bytes:
    """SubjectPublicKeyInfo PEM, the form ``openssl`` and Sigstore clients read."""
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def public_key_der(key: PublicKey) -> bytes:
    """SubjectPublicKeyInfo DER."""
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def public_key_hint(key: PublicKey) -> str:
    """Standard base64 of sha256(DER SubjectPublicKeyInfo): the bundle's ``publicKey.hint``."""
    return base64.b64encode(hashlib.sha256(public_key_der(key)).digest()).decode("ascii")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    # O_EXCL makes "refuses to overwrite" atomic; O_NOFOLLOW refuses a planted symlink.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError as exc:
        raise ConfigError(
            f"refusing to overwrite existing key file {path} "
            "(fix: choose another --out directory or move the old key away)"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot create key file {path}: {exc.strerror}") from exc
    try:
        # The umask may have narrowed the mode; set it exactly so the public key stays readable.
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def keygen(out_dir: str | Path, *, algorithm: Algorithm = "ecdsa-p256") -> tuple[Path, Path]:
    """Write ``out_dir/jurat.key`` (PKCS#8 PEM, mode 0600) and ``out_dir/jurat.pub`` (SPKI PEM).

    Refuses with ConfigError when either file exists; never overwrites a key.
    """
    out = Path(out_dir)
    priv_path, pub_path = out / PRIVATE_KEY_NAME, out / PUBLIC_KEY_NAME
    for path in (priv_path, pub_path):
        if path.exists() or path.is_symlink():
            raise ConfigError(
                f"refusing to overwrite existing key file {path} "
                "(fix: choose another --out directory or move the old key away)"
            )
    try:
        out.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"cannot create key directory {out}: {exc.strerror}") from exc
    key = generate_key(algorithm)
    _write_new(priv_path, private_key_pem(key), 0o600)
    try:
        _write_new(pub_path, public_key_pem(key.public_key()), 0o644)
    except ConfigError:
        # Half a key pair is worse than none: the next keygen would refuse forever.
        priv_path.unlink(missing_ok=True)
        raise
    return priv_path, pub_path


def _read(path: str | Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc


def load_private_key(path: str | Path) -> PrivateKey:
    """Load a PEM private key (PKCS#8 or traditional), ECDSA P-256 or Ed25519, unencrypted."""
    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError as exc:
        raise ConfigError(
            f"{path}: the private key is encrypted; jurat reads unencrypted PKCS#8 keys "
            "protected by file permissions (fix: `jurat keygen --out DIR`)"
        ) from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ConfigError(f"{path}: not a PEM private key ({exc})") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey):
        raise ConfigError(
            f"{path}: unsupported key type {type(key).__name__}; use ECDSA P-256 or Ed25519"
        )
    _check_curve(key, str(path))
    return key


def load_public_key(path: str | Path) -> PublicKey:
    """Load a PEM SubjectPublicKeyInfo public key, ECDSA P-256 or Ed25519."""
    data = _read(path, "public key")
    if b"PRIVATE KEY" in data:
        raise ConfigError(
            f"{path} holds a private key; verification needs the public key "
            f"(fix: pass the {PUBLIC_KEY_NAME} written next to it)"
        )
    return public_key_from_pem(data, source=str(path))


def public_key_from_pem(data: bytes, *, source: str = "public key") -> PublicKey:
    """Parse PEM SubjectPublicKeyInfo bytes."""
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ConfigError(f"{source}: not a PEM public key ({exc})") from exc
    if not isinstance(key, ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey):
        raise ConfigError(
            f"{source}: unsupported key type {type(key).__name__}; use ECDSA P-256 or Ed25519"
        )
    _check_curve(key, source)
    return key


def default_key_dir() -> Path:
    """``$XDG_CONFIG_HOME/jurat`` when that is an absolute path, else ``~/.config/jurat``."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "jurat"


def default_key_path() -> Path:
    """The default private key: ``<config dir>/jurat/jurat.key``."""
    return default_key_dir() / PRIVATE_KEY_NAME


def default_public_key_path() -> Path:
    """The default public key, next to the default private key."""
    return default_key_dir() / PUBLIC_KEY_NAME


def load_or_create_default_key() -> tuple[PrivateKey, Path, bool]:
    """Load the default signing key, creating the pair once. Returns (key, path, created)."""
    path = default_key_path()
    if path.exists():
        return load_private_key(path), path, False
    try:
        priv_path, _ = keygen(path.parent)
    except ConfigError:
        # Another process may have created it between our check and keygen.
        if path.exists():
            return load_private_key(path), path, False
        raise
    return load_private_key(priv_path), priv_path, True


def sign_bytes(key: PrivateKey, data: bytes) -> bytes:
    """Sign ``data``: ECDSA P-256 over SHA-256, DER-encoded (r, s); or pure Ed25519 (64 bytes)."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(data, ec.ECDSA(hashes.SHA256()))
    return key.sign(data)


def verify_bytes(key: PublicKey, signature: bytes, data: bytes) -> bool:
    """Whether ``signature`` over ``data`` verifies with ``key`` (never raises for a bad one)."""
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
        else:
            key.verify(signature, data)
    except InvalidSignature:
        return False
    return True


def key_algorithm(key: PrivateKey | PublicKey) -> str:
    """A short name for reports: ``ecdsa-p256-sha256`` or ``ed25519``."""
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        return "ecdsa-p256-sha256"
    return "ed25519"
