"""The signer: one request in, one answer out, every decision in its own log.

``Signer.handle`` runs the checks of ``_checks`` in order (the review check is ``_review``),
and either signs the settlement (``_typed``) or refuses naming the failed check. It never
raises for a request: whatever a request's bytes provoke is a refusal, logged like any
other. Requests are handled one at a time (the socket reads connections concurrently but
calls ``handle`` under one lock, ``_socket``), so the ``replay`` check and the grant it
guards cannot interleave with another request's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from jurat.errors import JuratError
from jurat.ledger import Ledger
from jurat.receipts import PublicKey
from jurat.signer._checks import (
    Authentic,
    Request,
    SignerRefusal,
    check_campaign,
    check_decision,
    check_rederivation,
    check_replay,
    check_signature,
    parse_request,
    settle_key,
)
from jurat.signer._key import SettlementKey
from jurat.signer._registry import Registry, RegistryCampaign
from jurat.signer._review import check_review
from jurat.signer._state import Decided, Grant, SignerState
from jurat.signer._typed import settlement_typed_data

__all__ = ["Signer"]


class Signer:
    """The settlement signer's decision logic, over its registry, keys, state and ledger.

    The caller opens the state and the ledger and closes them; the signer holds the
    settlement key for as long as it lives.
    """

    def __init__(
        self,
        *,
        registry: Registry,
        key: SettlementKey,
        receipt_keys: Sequence[PublicKey],
        state: SignerState,
        ledger: Ledger | None = None,
        log_keys: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry, self._key, self.state = registry, key, state
        self.receipt_keys, self.ledger, self.log_keys = tuple(receipt_keys), ledger, log_keys
        self._clock = clock

    @property
    def address(self) -> str:
        """The settlement key's address: what every signature recovers to."""
        return self._key.address

    def handle(self, line: bytes) -> dict[str, Any]:
        """The answer to one request line: granted (typed data, signature, signer) or
        ``{"refused": check, "reason": …}``. Logged either way; never raises."""
        known: dict[str, Any] = {}
        try:
            answer, decided, grant = self._decide(line, known)
        except SignerRefusal as exc:
            answer = {"refused": exc.check, "reason": exc.reason}
            decided, grant = Decided(outcome="refused", check=exc.check, reason=exc.reason,
                                     **known), None
        try:
            self.state.record(decided, grant)
        except JuratError as exc:
            # A grant the state refuses (a race the replay check lost) is never answered.
            answer = {"refused": "replay", "reason": str(exc)}
            self.state.record(Decided(outcome="refused", check="replay", reason=str(exc),
                                      **known))
        return answer

    def refuse_request(self, reason: str) -> dict[str, Any]:
        """Refuse a request the socket could not take whole (check 1, ``request``), logged
        like any other refusal: a line over the length cap."""
        self.state.record(Decided(outcome="refused", check="request", reason=reason))
        return {"refused": "request", "reason": reason}

    def _decide(self, line: bytes, known: dict[str, Any]
                ) -> tuple[dict[str, Any], Decided, Grant | None]:
        check = "request"
        try:
            request = parse_request(line)
            known["receipt_sha256"] = request.receipt_sha256
            check = "signature"
            report = check_signature(request, self.receipt_keys)
            check = "rederivation"
            receipt = check_rederivation(report, request.bundle)
            known.update(payload_sha256=receipt.payload_sha256, campaign_id=receipt.campaign_id,
                         artifact_id=receipt.artifact_id, review_version=receipt.review_version)
            # An authenticated receipt tells the signer which review it supersedes, refused
            # or not: what the review check knows without a ledger.
            self.state.note_review(receipt.campaign_id, receipt.artifact_id,
                                   receipt.review_version, request.receipt_sha256,
                                   receipt.supersedes)
            check = "campaign"
            entry, recipient = check_campaign(receipt, self.registry)
            check = "decision"
            check_decision(receipt)
            check = "review"
            check_review(receipt, request, ledger=self.ledger, log_keys=self.log_keys,
                         state=self.state)
            check = "replay"
            check_replay(receipt, request, self.state, entry)
        except SignerRefusal:
            raise
        except Exception as exc:
            # The last guard: a request is untrusted bytes, so even a bug it provokes is a
            # refusal by the check that was running, never a crash of the signer.
            raise SignerRefusal(check, f"unexpected {type(exc).__name__}: {exc}") from exc
        return self._grant(request, receipt, entry, recipient, known)

    def _grant(self, request: Request, receipt: Authentic, entry: RegistryCampaign,
               recipient: str,
               known: dict[str, Any]) -> tuple[dict[str, Any], Decided, Grant]:
        nonce = self.state.next_nonce()
        deadline = int(self._clock()) + entry.valid_for_s
        typed = settlement_typed_data(entry, recipient=recipient,
                                      payload_sha256=receipt.payload_sha256, nonce=nonce,
                                      deadline=deadline)
        signature = self._key.sign_typed_data(typed)
        grant = Grant(payload_sha256=receipt.payload_sha256,
                      receipt_sha256=request.receipt_sha256, campaign_id=receipt.campaign_id,
                      artifact_id=receipt.artifact_id, review_version=receipt.review_version,
                      nonce=nonce, artifact_sha256=receipt.work_sha256,
                      task_sha256=receipt.task_sha256, settle_key=settle_key(receipt, entry))
        decided = Decided(outcome="granted", nonce=str(nonce), signature=signature, **known)
        return {"typed_data": typed, "signature": signature, "signer": self.address}, decided, grant
