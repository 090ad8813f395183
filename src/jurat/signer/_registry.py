"""The signer's own registry: which campaigns it settles, and everything a settlement says.

The registry is the operator's file, read once when the signer starts (docs/signer.md,
"The registry"). Every field of the EIP-712 ``Settlement`` except the receipt digest, the
nonce and the deadline comes from here, never from the request (seed 000, "Decision receipt
and signing separation": the signer "checks the receipt against its own allowlisted
registry, function selector, dataset, recipient, and campaign reward"). So the file is
checked strictly at start: a malformed address, selector or reward refuses to start the
signer rather than sign something nobody meant.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import Field, field_validator

from jurat.errors import ConfigError
from jurat.models import Frozen
from jurat.models._invalid import invalid

__all__ = ["Registry", "RegistryCampaign", "checksum_address", "load_registry"]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_SELECTOR = re.compile(r"0x[0-9a-fA-F]{8}")
_BYTES32 = re.compile(r"0x[0-9a-fA-F]{64}")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_UINT256_MAX = 2**256 - 1
#: How long a signed authorisation stays valid when the registry does not say.
DEFAULT_VALID_FOR_S = 3600


def checksum_address(value: str) -> str:
    """``value`` as an EIP-55 address; a mixed-case address must already be EIP-55.

    Raises ValueError for anything else (a wrong length, a bad checksum), so that a typo in
    a mixed-case address is caught rather than turned into another valid address.
    """
    from eth_utils.address import to_checksum_address

    if not _ADDRESS.fullmatch(value):
        raise ValueError(f"{value[:60]!r} is not an address (0x + 40 hex digits)")
    checked = str(to_checksum_address(value.lower()))
    body = value[2:]
    if body != body.lower() and body != body.upper() and checked != value:
        raise ValueError(f"{value} has a wrong EIP-55 checksum (expected {checked})")
    return checked


def _uint256(value: str, what: str) -> str:
    if not _DECIMAL.fullmatch(value) or int(value) > _UINT256_MAX:
        raise ValueError(f"{what} {value[:80]!r} is not a decimal uint256 (base units)")
    return value


class RegistryCampaign(Frozen):
    """One campaign the signer settles, and the settlement's fixed fields."""

    id: str = Field(min_length=1)
    """The campaign id, as receipts carry it in ``predicate.campaign.id``."""
    chain_id: int = Field(ge=1)
    """EIP-712 domain ``chainId``."""
    contract: str
    """EIP-712 domain ``verifyingContract`` (EIP-55)."""
    selector: str
    """The function selector the settlement may call, ``0x`` + 8 lower-case hex digits."""
    dataset: str
    """The dataset, as configured: a string (hashed with keccak256) or ``0x`` + 64 hex."""
    reward: str
    """The amount, a decimal string in base units."""
    recipients: dict[str, str] = Field(default_factory=dict)
    """Contributor name -> payout address (EIP-55), for this campaign."""
    policy_sha256: str | None = None
    """Optional: the only policy digest accepted for this campaign (a live campaign never
    changes, docs/design.md); None accepts any policy under this id."""
    valid_for_s: int = Field(default=DEFAULT_VALID_FOR_S, ge=1, le=10 * 365 * 86400)
    """Seconds from signing to the settlement's ``deadline``."""
    settle_once_per: Literal["artifact", "task_artifact"] = "artifact"
    """What one settlement pays for: ``artifact``, one per artifact digest in this campaign,
    whatever its id, contributor, task or submission; ``task_artifact``, one per (task,
    artifact digest), for a campaign where identical bytes may answer different tasks
    (short answers to different questions). The task is the signed receipt's
    ``predicate.inputs.task.id``."""

    @field_validator("contract")
    @classmethod
    def _contract(cls, value: str) -> str:
        return checksum_address(value)

    @field_validator("selector")
    @classmethod
    def _selector(cls, value: str) -> str:
        if not _SELECTOR.fullmatch(value):
            raise ValueError(f"selector {value[:40]!r} is not 0x + 8 hex digits")
        return value.lower()

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, value: str) -> str:
        if not value:
            raise ValueError("dataset is empty")
        return value

    @field_validator("reward")
    @classmethod
    def _reward(cls, value: str) -> str:
        return _uint256(value, "reward")

    @field_validator("recipients")
    @classmethod
    def _recipients(cls, value: dict[str, str]) -> dict[str, str]:
        return {name: checksum_address(address) for name, address in value.items()}

    @field_validator("policy_sha256")
    @classmethod
    def _policy(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[0-9a-f]{64}", value):
            raise ValueError("policy_sha256 is not 64 lower-case hex digits")
        return value

    def dataset_bytes32(self) -> str:
        """The ``dataset`` field of the settlement: the given bytes32, else keccak256(text)."""
        if _BYTES32.fullmatch(self.dataset):
            return self.dataset.lower()
        from eth_utils.crypto import keccak

        return "0x" + keccak(text=self.dataset).hex()

    def recipient(self, contributor: str | None) -> str | None:
        """The payout address of ``contributor``, or None when the registry has none."""
        if contributor is None:
            return None
        return self.recipients.get(contributor)


class Registry(Frozen):
    """Every campaign the signer settles, by id."""

    campaigns: dict[str, RegistryCampaign]
    """Campaign id -> its entry."""

    def find(self, campaign_id: str) -> RegistryCampaign | None:
        """The entry for ``campaign_id``, or None: the signer settles only what is listed."""
        return self.campaigns.get(campaign_id)


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    unknown = set(doc) - {"campaigns", "recipients"}
    if unknown:
        raise ConfigError(f"unknown top-level key(s) {sorted(unknown)} (fix: the registry has "
                          "[[campaigns]] tables and an optional [recipients] table)")
    entries = doc.get("campaigns")
    if not isinstance(entries, list) or not entries:
        raise ConfigError("no [[campaigns]] table: the signer would settle nothing")
    shared = doc.get("recipients", {})
    if not isinstance(shared, dict):
        raise ConfigError("recipients must be a table of contributor = \"0x…\"")
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ConfigError("each [[campaigns]] entry must be a table")
        # A campaign's own recipients override the shared table, name by name.
        out.append({**entry, "recipients": {**shared, **entry.get("recipients", {})}})
    return out


def load_registry(path: Path) -> Registry:
    """Read and check the registry TOML; raises ConfigError naming the entry and field."""
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read registry {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"registry {path} is not TOML: {exc}") from exc
    campaigns: dict[str, RegistryCampaign] = {}
    for i, entry in enumerate(_entries(doc)):
        try:
            campaign = RegistryCampaign.model_validate(entry)
        except pydantic.ValidationError as exc:
            raise invalid(exc, RegistryCampaign, entry, ConfigError, source=f"registry {path}",
                          within=("campaigns", i)) from exc
        if campaign.id in campaigns:
            raise ConfigError(f"registry {path}: campaign {campaign.id!r} is listed twice")
        campaigns[campaign.id] = campaign
    return Registry(campaigns=campaigns)
