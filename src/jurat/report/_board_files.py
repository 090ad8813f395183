"""The files the public board publishes beside its page, and the commands that check them.

A stranger downloads a receipt, its inclusion proof, the checkpoint and the two public
keys from the page into one directory and runs the printed command there: with jurat
(``jurat verify``: signature, re-derivation and inclusion, docs/receipt-format.md §7), or
without it: ``openssl`` over the PAE bytes (§4.3, the recipe verbatim as a script) and
sigstore-js (§4.4, as tests/receipts/sigstore_verify.js runs it). Both outside checks prove
the signature only; re-deriving the decision needs ``jurat verify`` or a verifier written
from §8.
"""

from __future__ import annotations

import re
import shlex

__all__ = [
    "CHECKPOINT_NAME",
    "LOG_PUBLIC_NAME",
    "OPENSSL_SCRIPT",
    "OPENSSL_SCRIPT_NAME",
    "PUBLIC_NAME",
    "SIGSTORE_PACKAGES",
    "SIGSTORE_SCRIPT",
    "SIGSTORE_SCRIPT_NAME",
    "jurat_command",
    "openssl_command",
    "receipt_file_name",
    "sigstore_command",
]

CHECKPOINT_NAME = "checkpoint.txt"
PUBLIC_NAME = "jurat.pub"
LOG_PUBLIC_NAME = "jurat-log.pub"
OPENSSL_SCRIPT_NAME = "verify-openssl.sh"
SIGSTORE_SCRIPT_NAME = "sigstore_verify.js"
#: The versions jurat's own tests verify receipts with (tests/receipts/test_receipts_outside.py).
SIGSTORE_PACKAGES = "@sigstore/verify@3.1.1 @sigstore/bundle@4.0.0"

#: docs/receipt-format.md §4.3, verbatim but for the key, which is the second argument.
OPENSSL_SCRIPT = """#!/bin/sh
# verify-with-openssl (docs/receipt-format.md §4.3): usage: sh verify-openssl.sh RECEIPT PUB
# Needs jq, base64 and openssl. Proves the signature only; `jurat verify` also re-derives.
set -e
R="$1"
PUB="$2"
test "$(jq '.dsseEnvelope.signatures | length' "$R")" = 1
TYPE=$(jq -r '.dsseEnvelope.payloadType' "$R")
test "$TYPE" = application/vnd.in-toto+json
jq -r '.dsseEnvelope.payload' "$R" | base64 -d > payload.bin
jq -r '.dsseEnvelope.signatures[0].sig' "$R" | base64 -d > sig.der
printf 'DSSEv1 %d %s %d ' "${#TYPE}" "$TYPE" "$(wc -c < payload.bin)" > pae.bin
cat payload.bin >> pae.bin
openssl dgst -sha256 -verify "$PUB" -signature sig.der pae.bin
"""

#: docs/receipt-format.md §4.4: an empty trusted root, a key selector returning the key,
#: zero tlog/ctlog/timestamp thresholds.
SIGSTORE_SCRIPT = """// Verify a jurat receipt offline with sigstore-js (receipt-format.md §4.4).
// npm install @sigstore/verify@3.1.1 @sigstore/bundle@4.0.0
// Usage: node sigstore_verify.js RECEIPT.sigstore.json jurat.pub
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const [bundlePath, keyPath] = process.argv.slice(2);
const emptyRoot = {
  mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
  tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [],
};
try {
  const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath, 'utf8')));
  const pem = fs.readFileSync(keyPath, 'utf8');
  const trust = toTrustMaterial(emptyRoot, () => ({
    publicKey: crypto.createPublicKey(pem), validFor: () => true,
  }));
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 })
    .verify(toSignedEntity(bundle));
  console.log('sigstore-js: verified');
} catch (err) {
  console.log(`sigstore-js: REJECTED ${err.code || err.name}: ${err.message}`);
  process.exit(1);
}
"""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _slug(text: str) -> str:
    # Ids come from signed receipts, but a file name must never climb out of the directory.
    return _UNSAFE.sub("_", text).strip("._")[:80] or "x"


def receipt_file_name(campaign_id: str, artifact_id: str, version: int | None, seq: int) -> str:
    """``<campaign>.<artifact>.v<N>.<seq>.sigstore.json``: unique by ledger position."""
    return (f"{_slug(campaign_id)}.{_slug(artifact_id)}.v{version or 0}.{seq}"
            ".sigstore.json")


def jurat_command(name: str, *, key: bool, proof: bool, log_key: bool) -> str:
    """``jurat verify`` over the downloaded files: steps 1-7, and 8 when the proof is there."""
    command = f"jurat verify {shlex.quote(name)} --key {PUBLIC_NAME if key else '<pub>'}"
    if proof and log_key:
        command += f" --checkpoint {CHECKPOINT_NAME} --log-key {LOG_PUBLIC_NAME}"
    return command


def openssl_command(name: str, *, key: bool) -> str:
    """The §4.3 recipe over one receipt."""
    return f"sh {OPENSSL_SCRIPT_NAME} {shlex.quote(name)} {PUBLIC_NAME if key else '<pub>'}"


def sigstore_command(name: str, *, key: bool) -> str:
    """sigstore-js over one receipt (after ``npm install`` of ``SIGSTORE_PACKAGES``)."""
    return (f"NODE_PATH=node_modules node {SIGSTORE_SCRIPT_NAME} {shlex.quote(name)} "
            f"{PUBLIC_NAME if key else '<pub>'}")
