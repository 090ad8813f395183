"""The restricted settlement signer (``jurat signer``): a separate process that alone holds
the settlement key.

It answers one request per line on a Unix socket: a receipt (and optionally its inclusion
proof) in; out, either an EIP-712 ``Settlement`` built from the signer's own registry and
signed with the settlement key, or a refusal naming the check that failed (``CHECKS``, in
order). Every decision goes to the signer's own append-only log in its state file. The
protocol, the registry and the threat model are in docs/signer.md.
"""

from jurat.signer._checks import CHECKS, MAX_REQUEST_BYTES, SignerRefusal
from jurat.signer._key import (
    KEY_FILE_NAME,
    SettlementKey,
    keygen_settlement,
    load_settlement_key,
)
from jurat.signer._registry import Registry, RegistryCampaign, checksum_address, load_registry
from jurat.signer._signer import Signer
from jurat.signer._socket import SocketLimits, request_signature, serve_socket
from jurat.signer._state import Decided, Grant, SignerState
from jurat.signer._typed import SETTLEMENT_TYPES, settlement_typed_data

__all__ = [
    "CHECKS",
    "KEY_FILE_NAME",
    "MAX_REQUEST_BYTES",
    "SETTLEMENT_TYPES",
    "Decided",
    "Grant",
    "SignerRefusal",
    "Registry",
    "RegistryCampaign",
    "SettlementKey",
    "SocketLimits",
    "Signer",
    "SignerState",
    "checksum_address",
    "keygen_settlement",
    "load_registry",
    "load_settlement_key",
    "request_signature",
    "serve_socket",
    "settlement_typed_data",
]
