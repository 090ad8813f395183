from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, field_validator

from jurat.models._base import Frozen
from jurat.models._endpoints import endpoint
from jurat.models._problems import Problem, RecordProblems, close_match

_PROVIDERS = ("openai-compat", "anthropic", "sim", "replay")
STUB_NAMES = (
    "always-equivalent",
    "always-different",
    "always-abstain",
    "parse-error",
    "raising",
    "numeric-simulated",
    "always-accept",
    "always-reject",
    "always-yes",
    "always-no",
    "always-first",
)


class Qualification(Frozen):
    """A judge's required qualification (issue 31; docs/qualify.md, "Requiring it"): the
    signed record of a passing `jurat qualify` of this judge, stored in the run's ledger."""

    record: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """The record's digest, as `jurat qualify` prints it (``sha256:<hex>``)."""
    max_age_days: int = Field(30, ge=1, le=3650)
    """The record counts for this many days after its qualification started."""


class JudgeConfig(Frozen):
    """One pinned judge configuration of the panel (``[[judges]]``)."""

    id: str = Field(min_length=1, max_length=64)
    """Judge id, unique in the campaign."""
    provider: str
    """``openai-compat``, ``anthropic``, ``sim``, ``replay`` or ``stub:<name>``."""
    model: str = ""
    """Provider model id (pinned; the returned model is recorded separately)."""
    base_url: str | None = None
    """Endpoint base URL (``openai-compat``, ``anthropic``); None: the provider's default."""
    api_key_env: str | None = None
    """Environment variable holding the API key (never the key itself)."""
    samples: int = Field(5, ge=1, le=101)
    """Samples per item (rubric, pairwise, equivalence) or per non-blocker criterion."""
    temperature: float = Field(0.0, ge=0, le=2)
    """Decoding temperature of the judge."""
    max_tokens: int = Field(1024, ge=16, le=65536)
    """Output token budget per call."""
    timeout_s: float = Field(60.0, gt=0, le=3600)
    """Timeout of every call; no call can hang."""
    max_concurrency: int = Field(32, ge=1, le=1024)
    """Calls in flight to this judge's endpoint."""
    retries: int = Field(3, ge=0, le=10)
    """Transport retries per sample (attempts of the same sample, never new samples)."""
    rpm: int | None = Field(None, ge=1)
    """Requests per minute allowed to the endpoint (None: unlimited)."""
    tpm: int | None = Field(None, ge=1)
    """Tokens per minute allowed to the endpoint (None: unlimited)."""
    structured_output: bool = True
    """Ask the endpoint for JSON-schema structured output where supported."""
    price_in_per_mtok: float | None = Field(None, ge=0)
    """USD per million input tokens (None: unknown, cost reported as null)."""
    price_out_per_mtok: float | None = Field(None, ge=0)
    """USD per million output tokens."""
    seed: int = 0
    """Seed of the sim judge and of presentation-order draws."""
    reliability: float = Field(0.85, ge=0, le=1)
    """sim: probability that a sample answers the artifact's truth label."""
    correlation: float = Field(0.0, ge=0, le=1)
    """sim: weight of a shared per-item draw between samples of one item."""
    error_rate: float = Field(0.0, ge=0, le=1)
    """sim: probability that a call fails in transport."""
    malformed_rate: float = Field(0.0, ge=0, le=1)
    """sim: probability that an answer is malformed."""
    latency_ms: float = Field(0.0, ge=0)
    """sim: latency of every call."""
    spacing_ms: int | None = Field(
        None, ge=1, le=600_000, exclude_if=lambda value: value is None
    )
    """The least time between the dispatches of successive samples of one item (one
    artifact, one criterion) to this judge: latency traded for independence (seed 001, "Vote
    correlation is real and unquantified"). None: a burst. Part of the policy and its digest,
    since it changes what the samples are; written only when set, so a campaign that does
    not set it keeps the policy digest it had before the key existed."""
    qualification: Qualification | None = Field(
        None, exclude_if=lambda value: value is None
    )
    """The qualification `jurat run` and `jurat serve` require of this judge before they send
    it anything (exit 3 without a passing, current record); None: none. In the policy, so
    every receipt cites the record it relied on; written only when set."""
    replay_file: str | None = None
    """replay: NDJSON file of recorded raw responses (campaign files: inside its directory)."""
    model_family: str | None = Field(
        None, min_length=1, max_length=128, exclude_if=lambda value: value is None
    )
    """The model family this judge's answers come from (``jurat.fold/v2`` counts independent
    votes by family, seed 000: "multiple calls to one model are not independent witnesses").
    None: derived, see ``family``. Written into the policy only when set, so a campaign that
    does not set it keeps the policy digest it had before the key existed."""

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str) -> str:
        if value in _PROVIDERS:
            return value
        if value.startswith("stub:") and value[5:] in STUB_NAMES:
            return value
        guess = close_match(value, (*_PROVIDERS, *(f"stub:{name}" for name in STUB_NAMES)))
        raise RecordProblems([Problem(
            (),
            f"unknown provider {value!r}" + (f"; did you mean {guess!r}?" if guess else ""),
            f'provider = "{guess}"' if guess else
            f"use one of {', '.join(_PROVIDERS)}, or stub:<name> with name one of "
            f"{', '.join(STUB_NAMES)} (docs/campaign-format.md, [[judges]])",
        )])

    @property
    def family(self) -> str:
        """The declared ``model_family``, else one derived from the configuration.

        ``openai-compat``, ``anthropic``, ``replay``: provider + model, so two
        judges on one model are one witness whatever their ids, endpoints or prompts.
        ``sim``: provider + model + seed. A sim sample is a function of (seed, artifact,
        criterion, sample, attempt) and never of the judge id (judges/_sim.py), so two sim
        judges with one seed draw the same answers and are one witness, and judges with
        different seeds draw independently by construction: that is what the panel
        simulates, and it keeps the three-seed test and example panels three families.
        ``stub:<name>`` (and a judge with no model): provider + judge id. A stub is a
        constant test double, not a model; each stub judge stands for a witness of its own,
        as it did before families existed. Declare ``model_family`` to say otherwise.
        """
        if self.model_family is not None:
            return self.model_family
        if self.provider == "sim":
            return f"sim:{self.model}:seed={self.seed}"
        if self.provider.startswith("stub:") or not self.model:
            return f"{self.provider}:id={self.id}"
        return f"{self.provider}:{self.model}"

    @property
    def witness(self) -> str:
        """The one model behind this judge, whatever family it declares: provider,
        destination and model (``sim``: model and seed). Judges with one witness are one
        family (``family_problems``)."""
        if self.provider == "sim":
            return f"sim:{self.model}:seed={self.seed}"
        if self.provider.startswith("stub:") or not self.model:
            return f"{self.provider}:id={self.id}"
        return f"{self.provider}:{self.destination}:{self.model}"

    @property
    def destination(self) -> str:
        """Where this judge sends artifact content: a local judge's name or a normalised URL.

        Resolved by ``models/_endpoints.py`` (``endpoint``), the one place that decides it.
        """
        return endpoint(self)


def family_problems(judges: Sequence[JudgeConfig]) -> list[Problem]:
    """A declared ``model_family`` may join models, never divide one (seed 000: "multiple
    calls to one model are not independent witnesses"): judges with one ``witness`` in
    different families would count as independent votes at the tier."""
    problems: list[Problem] = []
    first: dict[str, JudgeConfig] = {}
    for index, judge in enumerate(judges):
        seen = first.setdefault(judge.witness, judge)
        if seen.family != judge.family:
            problems.append(Problem(
                ("judges", index, "model_family"),
                f"judges {seen.id!r} and {judge.id!r} are one model ({judge.witness}) "
                f"declared as two families ({seen.family!r}, {judge.family!r})",
                f'give them one model_family (model_family = "{seen.family}"), or remove '
                "the declarations: one model is one witness"))
    return problems
