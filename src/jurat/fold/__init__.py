"""The pure decision functions (``jurat.fold/v1``). No I/O, no clock, no judges, no ledger."""

from jurat.fold._claims import claims_coverage
from jurat.fold._consensus import Consensus, pairwise_consensus
from jurat.fold._criterion import (
    CriterionResult,
    GateResult,
    RolloutResult,
    Verdict,
    fold_criterion,
    rollout,
    stability_gate,
)
from jurat.fold._decide import (
    DETERMINISTIC_EQUIVALENCE_GATE,
    FOLD_RULE,
    RUBRIC_OPERATOR,
    canonical_preference,
    decide,
    gate_veto,
)
from jurat.fold._equivalence import equivalence_outcome, equivalence_verdict
from jurat.fold._rubric import basis_points, q_exact, rubric_score
from jurat.fold._stats import (
    clean_pass_probability,
    false_block_probability,
    quorum_count,
    wilson_interval,
)

__all__ = [
    "DETERMINISTIC_EQUIVALENCE_GATE",
    "FOLD_RULE",
    "RUBRIC_OPERATOR",
    "Consensus",
    "CriterionResult",
    "GateResult",
    "RolloutResult",
    "Verdict",
    "basis_points",
    "canonical_preference",
    "claims_coverage",
    "clean_pass_probability",
    "decide",
    "equivalence_outcome",
    "equivalence_verdict",
    "false_block_probability",
    "fold_criterion",
    "gate_veto",
    "pairwise_consensus",
    "q_exact",
    "quorum_count",
    "rollout",
    "rubric_score",
    "stability_gate",
    "wilson_interval",
]
