"""jurat: turn noisy LLM judgments into signed, replayable verdicts.

The stable public API: the fold (pure decision functions), canonical digests and the
campaign loader. Everything else lives in its subpackage.
"""

from jurat._version import __version__
from jurat.campaign import load_campaign
from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import JuratError
from jurat.fold import (
    FOLD_RULE,
    claims_coverage,
    clean_pass_probability,
    decide,
    equivalence_verdict,
    false_block_probability,
    fold_criterion,
    pairwise_consensus,
    rollout,
    rubric_score,
    stability_gate,
    wilson_interval,
)

__all__ = [
    "FOLD_RULE",
    "JuratError",
    "__version__",
    "canonical_json",
    "claims_coverage",
    "clean_pass_probability",
    "decide",
    "equivalence_verdict",
    "false_block_probability",
    "fold_criterion",
    "load_campaign",
    "pairwise_consensus",
    "rollout",
    "rubric_score",
    "sha256_digest",
    "stability_gate",
    "wilson_interval",
]
