"""The labels an artifact's ``truth`` may name, per judge task: spelled once.

``truth`` (``ArtifactSpec.truth``) is read by the sim judge alone, which answers these labels
(judges/_sim.py); the campaign loader refuses a label outside them before anything runs
(``truth_problems``, models/_campaign.py). Matched in any case.
"""

from __future__ import annotations

__all__ = ["SIM_LABELS"]

#: The canonical labels a sim sample can answer, per kind.
SIM_LABELS: dict[str, tuple[str, ...]] = {
    "rubric": ("accept", "reject"),
    "pairwise": ("A", "B", "tie"),
    "criterion": ("yes", "no"),
    "equivalence": ("EQUIVALENT", "DIFFERENT", "ABSTAIN"),
    "claim": ("supported", "contradicted", "unresolved", "not_applicable"),
}
