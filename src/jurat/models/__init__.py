"""Frozen records: campaign, policy, rubric, artifact, evidence, judge config, vote, decision."""

from jurat.models._artifact import Artifact, ArtifactSpec
from jurat.models._base import Frozen
from jurat.models._campaign import Campaign
from jurat.models._checks import Limits, PythonChecks
from jurat.models._decision import CriterionOutcome, Decision, Disposition, Rollout
from jurat.models._evidence import EvidenceBundle, EvidenceItem, GateOutcome, GateStatus
from jurat.models._judge import STUB_NAMES, JudgeConfig
from jurat.models._load import campaign_from_dict, load_campaign, policy_digest
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
)
from jurat.models._vote import Vote

__all__ = [
    "ARCV_SCORE_KEYS",
    "RISK_TIERS",
    "STUB_NAMES",
    "Artifact",
    "ArtifactSpec",
    "Campaign",
    "CriteriaSuite",
    "Criterion",
    "CriterionOutcome",
    "Decision",
    "Disposition",
    "EquivalencePolicy",
    "EvidenceBundle",
    "EvidenceItem",
    "Frozen",
    "GateOutcome",
    "GateStatus",
    "JudgeConfig",
    "Kind",
    "Limits",
    "Policy",
    "PythonChecks",
    "RiskTier",
    "Rollout",
    "Rubric",
    "Vote",
    "campaign_from_dict",
    "load_campaign",
    "policy_digest",
]
