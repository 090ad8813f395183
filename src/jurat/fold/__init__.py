"""The pure decision functions (``jurat.fold/v2``, and ``v1`` for the receipts that name it).

No I/O, no clock, no judges, no ledger.
"""

from jurat.fold._claims import claims_coverage
from jurat.fold._consensus import Consensus, pairwise_consensus
from jurat.fold._criterion import (
    CriterionResult,
    fold_criterion,
    rollout,
    stability_gate,
)
from jurat.fold._curtail import CURTAIL_RULE, fewest_to_settle, settled
from jurat.fold._decide import (
    FOLD_RULE,
    FOLD_RULE_V1,
    FOLD_RULES,
    RUBRIC_OPERATOR,
    canonical_preference,
    decide,
)
from jurat.fold._equivalence import equivalence_outcome, equivalence_verdict
from jurat.fold._gates import GateVeto, gate_veto, hard_gates_pass, required_gates
from jurat.fold._grounding import (
    NOT_MEASURED,
    ClaimFinding,
    ClaimLabel,
    ClaimResult,
    GroundingOutcome,
    GroundingThresholds,
    fold_claim,
    grounding_outcome,
)
from jurat.fold._rates import MEASURES, Rate, overall_rate
from jurat.fold._rubric import Eligibility, basis_points, eligibility, q_exact, rubric_score
from jurat.fold._stats import (
    clean_pass_probability,
    false_block_probability,
    quorum_count,
    wilson_interval,
)
from jurat.fold._suite_gate import (
    GateBound,
    GateCheck,
    SuiteGateResult,
    suite_gate,
    suite_words,
)

__all__ = [
    "MEASURES",
    "Rate",
    "overall_rate",
    "GateBound",
    "GateCheck",
    "SuiteGateResult",
    "suite_gate",
    "suite_words",
    "NOT_MEASURED",
    "CURTAIL_RULE",
    "FOLD_RULE",
    "FOLD_RULES",
    "FOLD_RULE_V1",
    "RUBRIC_OPERATOR",
    "Consensus",
    "ClaimFinding",
    "ClaimLabel",
    "ClaimResult",
    "CriterionResult",
    "Eligibility",
    "GateVeto",
    "GroundingOutcome",
    "GroundingThresholds",
    "basis_points",
    "canonical_preference",
    "claims_coverage",
    "clean_pass_probability",
    "decide",
    "eligibility",
    "equivalence_outcome",
    "equivalence_verdict",
    "false_block_probability",
    "fewest_to_settle",
    "fold_claim",
    "fold_criterion",
    "gate_veto",
    "grounding_outcome",
    "hard_gates_pass",
    "pairwise_consensus",
    "q_exact",
    "quorum_count",
    "required_gates",
    "rollout",
    "rubric_score",
    "settled",
    "stability_gate",
    "wilson_interval",
]
