"""Optional Sigstore keyless signing (Fulcio certificate + Rekor entry) via ``sigstore``.

Offered only where the ``sigstore`` package is installed and an ambient OIDC identity
exists (e.g. CI with ``id-token: write``); it needs the network. Offline it is simply
not offered, and jurat's own verifier reports a certificate bundle as unverifiable
here (it verifies key-signed receipts only).
"""

from __future__ import annotations

import importlib
from typing import Any

from jurat.errors import ConfigError, DependencyError, ExecutionError
from jurat.receipts._predicate import Statement
from jurat.receipts._statement import checked_payload


def _sigstore(module: str) -> Any:
    try:
        return importlib.import_module(f"sigstore.{module}")
    except ImportError as exc:
        raise DependencyError(
            "keyless signing needs the sigstore package (pip install sigstore) and an OIDC "
            "identity; sign with a local key instead (jurat keygen)"
        ) from exc


def keyless_available() -> bool:
    """Whether the ``sigstore`` package can be imported (an identity is checked at signing)."""
    try:
        importlib.import_module("sigstore.sign")
    except ImportError:
        return False
    return True


def sign_statement_keyless(statement: Statement) -> bytes:
    """``sign_statement`` with Sigstore keyless (``Signer.sign_dsse``) instead of a key: the
    same checked payload; returns the bundle JSON bytes.

    Raises DependencyError without ``sigstore``, ConfigError without an ambient OIDC token,
    ValidationError for a statement a verifier would refuse (nothing is sent).
    """
    payload = checked_payload(statement)
    sign, oidc, dsse = _sigstore("sign"), _sigstore("oidc"), _sigstore("dsse")
    token = oidc.detect_credential()
    if not token:
        raise ConfigError("keyless signing: no ambient OIDC identity token was found")
    try:
        if hasattr(sign.SigningContext, "from_trust_config"):
            trust = _sigstore("models").ClientTrustConfig.production()
            context = sign.SigningContext.from_trust_config(trust)
        else:
            context = sign.SigningContext.production()
        with context.signer(oidc.IdentityToken(token)) as signer:
            bundle = signer.sign_dsse(dsse.Statement(payload))
    except Exception as exc:
        # Every failure of the remote flow (Fulcio, Rekor, token) is the same to the caller.
        raise ExecutionError(f"keyless signing failed: {exc}") from exc
    return str(bundle.to_json()).encode("utf-8")
