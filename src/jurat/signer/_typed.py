"""The EIP-712 ``Settlement`` the signer signs, built from its registry alone.

The layout is docs/design.md's ("Contracts, part 2") and docs/signer.md's::

    domain  {name: "jurat-settlement", version: "1", chainId, verifyingContract}
    Settlement(bytes32 campaign, bytes32 dataset, address recipient, uint256 amount,
               bytes4 selector, bytes32 receipt, uint256 nonce, uint256 deadline)

``campaign`` is keccak256 of the campaign id, ``receipt`` the SHA-256 of the receipt's DSSE
payload. uint256 values and ``chainId`` are decimal strings, bytes lower-case 0x-hex,
addresses EIP-55. Of the request, only the verified receipt's payload digest enters, through
``receipt``; the rest is the registry's, the nonce the signer's state and the deadline its
clock.
"""

from __future__ import annotations

from typing import Any

from jurat.signer._registry import RegistryCampaign

__all__ = ["DOMAIN_NAME", "DOMAIN_VERSION", "SETTLEMENT_TYPES", "settlement_typed_data"]

DOMAIN_NAME = "jurat-settlement"
DOMAIN_VERSION = "1"
SETTLEMENT_TYPES: dict[str, list[dict[str, str]]] = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    "Settlement": [
        {"name": "campaign", "type": "bytes32"},
        {"name": "dataset", "type": "bytes32"},
        {"name": "recipient", "type": "address"},
        {"name": "amount", "type": "uint256"},
        {"name": "selector", "type": "bytes4"},
        {"name": "receipt", "type": "bytes32"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
}


def settlement_typed_data(entry: RegistryCampaign, *, recipient: str, payload_sha256: str,
                          nonce: int, deadline: int) -> dict[str, Any]:
    """The whole typed-data document: ``types``, ``primaryType``, ``domain``, ``message``."""
    from eth_utils.crypto import keccak

    return {
        "types": {name: [dict(f) for f in fields] for name, fields in SETTLEMENT_TYPES.items()},
        "primaryType": "Settlement",
        "domain": {
            "name": DOMAIN_NAME,
            "version": DOMAIN_VERSION,
            "chainId": str(entry.chain_id),
            "verifyingContract": entry.contract,
        },
        "message": {
            "campaign": "0x" + keccak(text=entry.id).hex(),
            "dataset": entry.dataset_bytes32(),
            "recipient": recipient,
            "amount": entry.reward,
            "selector": entry.selector,
            "receipt": "0x" + payload_sha256,
            "nonce": str(nonce),
            "deadline": str(deadline),
        },
    }
