"""Signed decision receipts: in-toto Statement v1 in a DSSE envelope in a Sigstore bundle v0.3.

Build a statement from the fold's inputs and output, sign it with a local key
(ECDSA P-256 by default), and verify it offline in numbered steps that end by
re-running the fold on the signed inputs. The format is specified, byte for
byte, in ``docs/receipt-format.md``. ``sign_upstream`` signs the Stage 1/2 receipts a
campaign's ``[upstream]`` takes, with the same keys and bundle.
"""

from jurat.canonical import loads_strict
from jurat.receipts._bundle import (
    BUNDLE_MEDIA_TYPE,
    MAX_BUNDLE_BYTES,
    MAX_DEPTH,
    read_statement,
    receipt_digest,
    signing_key_id,
)
from jurat.receipts._dsse import PAYLOAD_TYPE, pae
from jurat.receipts._inclusion import (
    MAX_CHECKPOINT_BYTES,
    MAX_PROOF_BYTES,
    InclusionCheck,
    inclusion_step,
    read_at_most,
)
from jurat.receipts._keyless import keyless_available, sign_statement_keyless
from jurat.receipts._keys import (
    PrivateKey,
    PublicKey,
    default_key_path,
    default_public_key_path,
    keygen,
    load_or_create_default_key,
    load_private_key,
    load_public_key,
    public_key_hint,
    public_key_pem,
)
from jurat.receipts._paths import RECEIPT_SUFFIX, proof_path_for, receipt_path_for
from jurat.receipts._predicate import PREDICATE_TYPE, STATEMENT_TYPE, Statement
from jurat.receipts._review import adjudicated_statement
from jurat.receipts._statement import (
    StatementInputs,
    build_statement,
    decision_statement,
    read_decision_statement,
    replay_fidelity_level_for,
    sign_statement,
    statement_document,
)
from jurat.receipts._upstream_sign import (
    UPSTREAM_PREDICATE_TYPE,
    UpstreamPredicate,
    sign_upstream,
    upstream_time,
)
from jurat.receipts._verify import (
    INCLUSION_STEP,
    STEPS,
    VerifyReport,
    VerifyStep,
    rederive,
    rederive_bundle,
    verify_bundle,
)

__all__ = [
    "BUNDLE_MEDIA_TYPE",
    "MAX_BUNDLE_BYTES",
    "MAX_CHECKPOINT_BYTES",
    "MAX_DEPTH",
    "MAX_PROOF_BYTES",
    "PAYLOAD_TYPE",
    "INCLUSION_STEP",
    "PREDICATE_TYPE",
    "RECEIPT_SUFFIX",
    "STATEMENT_TYPE",
    "STEPS",
    "UPSTREAM_PREDICATE_TYPE",
    "InclusionCheck",
    "PrivateKey",
    "PublicKey",
    "Statement",
    "StatementInputs",
    "UpstreamPredicate",
    "VerifyReport",
    "VerifyStep",
    "adjudicated_statement",
    "build_statement",
    "decision_statement",
    "default_key_path",
    "default_public_key_path",
    "inclusion_step",
    "keygen",
    "keyless_available",
    "load_or_create_default_key",
    "load_private_key",
    "load_public_key",
    "loads_strict",
    "pae",
    "proof_path_for",
    "public_key_hint",
    "public_key_pem",
    "read_at_most",
    "read_decision_statement",
    "read_statement",
    "receipt_digest",
    "receipt_path_for",
    "rederive",
    "rederive_bundle",
    "replay_fidelity_level_for",
    "sign_statement",
    "sign_statement_keyless",
    "sign_upstream",
    "signing_key_id",
    "statement_document",
    "upstream_time",
    "verify_bundle",
]
