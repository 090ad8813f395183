"""``jurat signer keygen|serve|request``: printing layers over ``jurat.signer``.

``serve`` runs until SIGTERM or SIGINT and exits 0; configuration errors (registry, keys,
state, socket) exit 3 before it listens. ``request`` prints the signer's answer as one JSON
line: 0 granted, 1 refused, 3 a receipt or proof that cannot be read, 4 no signer reached.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from jurat.canonical import loads_strict
from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console
from jurat.errors import ConfigError, JuratError
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    MAX_DEPTH,
    MAX_PROOF_BYTES,
    PublicKey,
    load_public_key,
    read_at_most,
)

if TYPE_CHECKING:
    from jurat.signer import SocketLimits

__all__ = ["signer_keygen_command", "signer_request_command", "signer_serve_command"]


def signer_keygen_command(out: Path) -> ExitCode:
    """Write ``out/settlement.key`` (0600) and print its address on the last line."""
    from jurat.signer import keygen_settlement

    path, address = keygen_settlement(out)
    print(f"wrote {path} (mode 0600: the signer's settlement key; keep it on the signer's "
          "machine only)")
    print(address)
    return ExitCode.OK


def _log_keys(log_keys: Sequence[Path], receipt_keys: Sequence[Path]) -> list[str]:
    """The log public keys: every ``--log-key``, else ``<stem>-log.pub`` beside each
    ``--receipt-key`` that has one (``jurat keygen`` writes them side by side)."""
    from jurat.ledger import load_log_verifier, log_public_beside

    if log_keys:
        return [load_log_verifier(path) for path in log_keys]
    beside = [log_public_beside(path) for path in receipt_keys]
    return [load_log_verifier(path) for path in beside if path.exists()]


def _receipt_keys(paths: Sequence[Path]) -> list[PublicKey]:
    if not paths:
        raise ConfigError("no --receipt-key: the signer would trust no receipt (fix: "
                          "--receipt-key jurat.pub, once per allowlisted key)")
    return [load_public_key(path) for path in paths]


def signer_serve_command(*, socket_path: Path, registry_path: Path, key_path: Path,
                         receipt_keys: Sequence[Path], state_path: Path,
                         ledger_url: str | None, log_keys: Sequence[Path],
                         limits: SocketLimits | None = None) -> ExitCode:
    """Serve requests on the socket until SIGTERM/SIGINT."""
    from jurat.ledger import Ledger, open_ledger
    from jurat.signer import (
        Signer,
        SignerState,
        load_registry,
        load_settlement_key,
        serve_socket,
    )

    console = err_console()
    ledger: Ledger | None = None
    try:
        registry = load_registry(registry_path)
        keys = _receipt_keys(receipt_keys)
        verifiers = _log_keys(log_keys, receipt_keys)
        key = load_settlement_key(key_path)
        if ledger_url is not None:
            ledger = open_ledger(ledger_url, create=False)
        state = SignerState(state_path)
    except JuratError as exc:
        if ledger is not None:
            ledger.close()
        return print_error(exc, code=ExitCode.INPUT)
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    signer = Signer(registry=registry, key=key, receipt_keys=keys, state=state,
                    ledger=ledger, log_keys=verifiers)
    review = (f"review: asks the ledger {ledger.url}, trusting what checkpoints signed by "
              f"{len(verifiers)} log key(s) cover" if ledger is not None else
              f"review: needs inclusion proofs ({len(verifiers)} log key(s))")
    try:
        with state:
            console.print(f"signer {signer.address} listening on {socket_path}; "
                          f"{len(registry.campaigns)} campaign(s), {len(keys)} receipt key(s); "
                          f"{review}; log in {state_path}", markup=False, highlight=False)
            serve_socket(signer, socket_path, stop, limits)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    finally:
        if ledger is not None:
            ledger.close()
    return ExitCode.OK


def _read_json(path: Path, limit: int, what: str) -> dict[str, Any]:
    try:
        data = read_at_most(path, limit)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        doc = loads_strict(data, max_bytes=limit, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise ConfigError(f"{what} {path} is not a strict JSON document: {exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{what} {path} is not a JSON object")
    return doc


def signer_request_command(receipt: Path, *, socket_path: Path, proof: Path | None) -> ExitCode:
    """Send the receipt (and its proof) to the signer; print its answer as one JSON line."""
    from jurat.signer import request_signature

    try:
        request: dict[str, Any] = {"receipt": _read_json(receipt, MAX_BUNDLE_BYTES, "receipt")}
        if proof is not None:
            request["proof"] = _read_json(proof, MAX_PROOF_BYTES, "proof")
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    answer = request_signature(socket_path, request)
    sys.stdout.write(json.dumps(answer, separators=(",", ":"), ensure_ascii=False) + "\n")
    return ExitCode.ESCALATE if "refused" in answer else ExitCode.OK
