"""Frozen records: campaign, policy, rubric, artifact, evidence, judge config, vote, decision.

With them, what they need and nothing above them: their digests (``policy_digest``,
``record_digest``), the endpoint rule and the truth labels the records use
(``_endpoints``, ``_truth``), and the one translator of pydantic's errors (``_invalid``).
Loading a campaign file is ``jurat.campaign``'s.
"""

from jurat.models._adjudication import Adjudication, AdjudicationDisposition
from jurat.models._artifact import Artifact, ArtifactSpec
from jurat.models._base import Frozen
from jurat.models._budget import METERED_PROVIDERS, Budget
from jurat.models._campaign import Campaign
from jurat.models._checks import Limits, PythonChecks
from jurat.models._decision import (
    CriterionOutcome,
    Decision,
    Disposition,
    EquivalenceWord,
    Rollout,
    StabilityGate,
    Tone,
    Verdict,
    equivalence_word,
    outcome_word,
    tone_of,
)
from jurat.models._digest import policy_digest, record_digest
from jurat.models._echoed import MAX_TOKEN_COUNT, echoed, token_count
from jurat.models._evidence import EvidenceBundle, EvidenceItem, GateOutcome, GateStatus
from jurat.models._gate_ids import (
    DEFAULT_HARD_GATES,
    FORGEABLE_GATES,
    GATE_COMPLEXITY,
    GATE_COVERAGE,
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_LINT_RUFF,
    GATE_MUTATION,
    GATE_PROPERTIES,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_SUBJECT_EXECUTION,
    GATE_TESTS_PASS,
    PYTHON_GATES,
)
from jurat.models._judge import STUB_NAMES, JudgeConfig, Qualification
from jurat.models._monitor import MonitorBounds
from jurat.models._policy import (
    ARCV_SCORE_KEYS,
    RISK_TIERS,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    Kind,
    Policy,
    RiskTier,
    Rubric,
    SameWork,
)
from jurat.models._taint import Origin, TaintError, Untrusted
from jurat.models._visible import visible
from jurat.models._vote import Vote

__all__ = [
    "ARCV_SCORE_KEYS",
    "DEFAULT_HARD_GATES",
    "FORGEABLE_GATES",
    "GATE_COMPLEXITY",
    "GATE_COVERAGE",
    "GATE_EQUIVALENCE_DETERMINISTIC",
    "GATE_LINT_RUFF",
    "GATE_MUTATION",
    "GATE_PROPERTIES",
    "GATE_PYTHON_IMPORTS",
    "GATE_PYTHON_PARSE",
    "GATE_SUBJECT_EXECUTION",
    "GATE_TESTS_PASS",
    "MAX_TOKEN_COUNT",
    "METERED_PROVIDERS",
    "PYTHON_GATES",
    "RISK_TIERS",
    "STUB_NAMES",
    "Adjudication",
    "AdjudicationDisposition",
    "Artifact",
    "ArtifactSpec",
    "Budget",
    "Campaign",
    "CriteriaSuite",
    "Criterion",
    "CriterionOutcome",
    "Decision",
    "Disposition",
    "EquivalencePolicy",
    "EquivalenceWord",
    "EvidenceBundle",
    "EvidenceItem",
    "Frozen",
    "GateOutcome",
    "GateStatus",
    "JudgeConfig",
    "Kind",
    "Limits",
    "MonitorBounds",
    "Origin",
    "Policy",
    "PythonChecks",
    "Qualification",
    "RiskTier",
    "Rollout",
    "Rubric",
    "SameWork",
    "StabilityGate",
    "TaintError",
    "Tone",
    "Untrusted",
    "Verdict",
    "Vote",
    "echoed",
    "equivalence_word",
    "outcome_word",
    "policy_digest",
    "record_digest",
    "token_count",
    "tone_of",
    "visible",
]
