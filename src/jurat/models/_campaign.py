from __future__ import annotations

from collections import Counter

from pydantic import Field, model_validator

from jurat.models._artifact import ArtifactSpec, IntakeLimits
from jurat.models._base import Frozen
from jurat.models._policy import Policy


class Campaign(Frozen):
    """A loaded campaign file: the pinned policy plus the artifacts to evaluate."""

    policy: Policy
    """The policy; its digest is pinned into every job and receipt."""
    artifacts: tuple[ArtifactSpec, ...] = Field(min_length=1)
    """Artifacts in file order."""
    source: str | None = None
    """Path of the campaign file it was loaded from."""
    base_dir: str = "."
    """Directory relative paths are resolved against; no path may lead outside it."""
    intake: IntakeLimits = IntakeLimits()
    """Size caps intake applies (``[intake]``); not part of the policy or its digest."""

    @property
    def id(self) -> str:
        """Campaign id."""
        return self.policy.id

    @model_validator(mode="after")
    def _unique(self) -> Campaign:
        # One pass: a campaign (or a dataset) may hold hundreds of thousands of artifacts.
        dupes = sorted(i for i, n in Counter(a.id for a in self.artifacts).items() if n > 1)
        if dupes:
            raise ValueError(f"artifacts: duplicate ids {dupes}")
        return self
