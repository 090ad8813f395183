from __future__ import annotations

from pydantic import Field, model_validator

from jurat.canonical import KEYED_DIGEST, canonical_json, sha256_digest
from jurat.models._base import Frozen
from jurat.models._checks import PythonChecks
from jurat.models._grounding import GroundedClaim
from jurat.models._problems import Problem, raise_problems
from jurat.models._taint import Untrusted

_MIB = 1024 * 1024

#: The media type of a pair (pairwise, equivalence), whose digest is ``pair_digest``'s.
PAIR_MEDIA_TYPE = "application/vnd.jurat.pair+json"

#: Default cap on one artifact: a file, inline text, one part of a pair, or an input. The
#: largest judge context windows hold about a million tokens, roughly 4 MiB of text, so a
#: larger artifact cannot be judged whole anyway.
MAX_ARTIFACT_BYTES = 4 * _MIB
#: Hard ceiling a campaign may raise ``[intake] max_artifact_bytes`` to.
ARTIFACT_BYTES_CEILING = 32 * _MIB
#: Default cap on one test file (``[checks.python] tests`` or an artifact's ``tests``).
MAX_TESTS_BYTES = 1 * _MIB
#: Hard ceiling a campaign may raise ``[intake] max_tests_bytes`` to.
TESTS_BYTES_CEILING = 8 * _MIB
#: Hard ceilings of ``[intake] max_claims`` and ``max_claim_chars`` (submitted claims).
CLAIMS_CEILING = 64
CLAIM_CHARS_CEILING = 2000
#: Default cap on one contributor explanation: a few pages of prose, not a second artifact.
MAX_EXPLANATION_BYTES = 64 * 1024
#: Hard ceiling a campaign may raise ``[intake] max_explanation_bytes`` to.
EXPLANATION_BYTES_CEILING = 1 * _MIB


class IntakeLimits(Frozen):
    """The ``[intake]`` table: the most intake reads of any one input (docs/campaign-format.md).

    Intake reads no more than the cap plus one byte of a file and refuses what is larger.
    """

    max_artifact_bytes: int = Field(MAX_ARTIFACT_BYTES, ge=1, le=ARTIFACT_BYTES_CEILING)
    """Largest artifact in bytes: a file, inline text, each part of a pair, an input."""
    max_tests_bytes: int = Field(MAX_TESTS_BYTES, ge=1, le=TESTS_BYTES_CEILING)
    """Largest test file in bytes."""
    max_claims: int = Field(16, ge=1, le=CLAIMS_CEILING)
    """Most claims one artifact may submit (``claims = [...]``)."""
    max_claim_chars: int = Field(500, ge=1, le=CLAIM_CHARS_CEILING)
    """Longest submitted claim, in characters."""
    max_explanation_bytes: int = Field(MAX_EXPLANATION_BYTES, ge=1, le=EXPLANATION_BYTES_CEILING)
    """Largest contributor explanation in bytes (``explanation`` or ``explanation_path``)."""


class ArtifactSpec(Frozen):
    """One ``[[artifacts]]`` entry as written in the campaign file."""

    id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._-]+$")
    """Artifact id, unique in the campaign; also the receipt file name."""
    path: str | None = None
    """File holding the artifact, relative to the campaign file and inside its directory."""
    text: str | None = None
    """The artifact inline."""
    a: str | None = None
    """First answer or candidate (pairwise, equivalence)."""
    b: str | None = None
    """Second answer or candidate (pairwise, equivalence)."""
    a_path: str | None = None
    """File holding ``a``."""
    b_path: str | None = None
    """File holding ``b``."""
    tests: str | None = None
    """Per-artifact test file, overriding ``[checks.python].tests``."""
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    """Pinned digest of the content; intake refuses the artifact if its bytes differ."""
    input: str | None = None
    """criteria kind: the test-case input run through the ``[subject]`` to get the output."""
    target: str | None = None
    """criteria kind: the reference answer the judges compare the output with (inspect's
    ``target``); operator material, bound in the receipt by digest only."""
    target_path: str | None = None
    """File holding ``target``, relative to the campaign file and inside its directory."""
    truth: str | dict[str, str] | None = None
    """Known label (or one per criterion id); only the sim judge and selftest canaries read it."""
    media_type: str | None = None
    """Media type; guessed from the path when omitted."""
    contributor: str | None = None
    """Who submitted it."""
    task: str | None = None
    """Task or test-case id it answers; with ``[[tasks]]``, one of their ids."""
    explanation: str | None = None
    """The contributor's explanation of the work, inline (untrusted; capped by ``[intake]
    max_explanation_bytes``)."""
    explanation_path: str | None = None
    """File holding ``explanation``, inside the campaign directory."""
    upstream: tuple[str, ...] = Field((), max_length=8)
    """Files of its upstream (Stage 1/2) receipts, Sigstore bundles relative to the
    campaign file and inside its directory; checked against ``[upstream]`` (runner/_upstream.py)."""
    claims: tuple[str, ...] = Field((), max_length=CLAIMS_CEILING)
    """Short factual statements the contributor says the artifact makes (untrusted text),
    labelled with the campaign's claims; capped by ``[intake] max_claims`` and
    ``max_claim_chars``, and needing ``[grounding] submitted_weight``."""

    @model_validator(mode="after")
    def _one_source(self) -> ArtifactSpec:
        single = [x for x in (self.path, self.text) if x is not None]
        pair = self.a is not None or self.b is not None or self.a_path or self.b_path
        if len(single) > 1:
            raise_problems([Problem(("text",), "give either path or text, not both",
                                    "keep one of path = … and text = …")])
        if self.target is not None and self.target_path is not None:
            raise_problems([Problem(("target",), "give either target or target_path, not both",
                                    "keep one of target = … and target_path = …")])
        if self.explanation is not None and self.explanation_path is not None:
            raise_problems([Problem(("explanation",),
                                    "give either explanation or explanation_path, not both",
                                    "keep one of explanation = … and explanation_path = …")])
        if not single and not pair and self.input is None:
            raise_problems([Problem(
                (), "the artifact has no content: give path, text, input, or a and b",
                'add path = "submission.py" (a file next to the campaign) or text = "…"')])
        return self


class Artifact(Frozen):
    """An artifact after intake: its bytes are digested and pinned."""

    id: str
    """Artifact id."""
    sha256: str
    """sha256 of the content (pairs: of the canonical JSON of both parts' digests, ``b``'s
    keyed when it is the reference, ``reference_hmac``)."""
    media_type: str
    """Media type of the content."""
    text: str = ""
    """The content (single artifacts)."""
    a: str | None = None
    """First part (pairs)."""
    b: str | None = None
    """Second part (pairs)."""
    tests: dict[str, str] = Field(default_factory=dict)
    """Test files by name, for code artifacts."""
    checks: PythonChecks | None = None
    """The ``[checks.python]`` its code checks run under when its task sets its own limits
    or objects (``models._task.task_checks``); None: the campaign's."""
    input: str | None = None
    """criteria kind: the test-case input; ``text`` is then the subject's output."""
    target: Untrusted | None = None
    """criteria kind: the reference answer, of origin ``reference``: it reaches a judge only
    through ``Untrusted.reference_block`` and a receipt only as its keyed digest
    (``reference_hmac``)."""
    reference_hmac: str | None = Field(None, pattern=KEYED_DIGEST.pattern)
    """The keyed digest (``hmac-sha256:<hex>``, under the campaign's reference key) of its
    reference material, which intake computes: its ``target``, or an equivalence pair's
    ``b`` when ``b`` is the reference; None without reference material. What receipts, the
    job identity and a pair's digest bind instead of a plain sha256, which a dictionary of
    guesses reverses (docs/receipt-format.md §11.3)."""
    truth: str | dict[str, str] | None = None
    """Known label (or one per criterion), for the sim judge only; never sent to a provider."""
    contributor: str | None = None
    """Who submitted it."""
    task: str | None = None
    """Task id."""
    task_statement: str | None = None
    """The statement of its ``[[tasks]]`` entry (the operator's), when the campaign has tasks;
    sent to judges as delimited data, bound by digest (``inputs.task.statement_sha256``)."""
    explanation: Untrusted | None = None
    """The contributor's explanation (origin ``contributor``): only a data block of a prompt
    and its digest (``inputs.explanation_sha256``) leave jurat."""
    upstream: tuple[str, ...] = ()
    """Its upstream receipt files as the campaign names them (``ArtifactSpec.upstream``),
    read and checked when its job starts; never sent to a judge."""
    claims: tuple[GroundedClaim, ...] = ()
    """Its claims from the work: those it submitted (intake), then those extracted from it
    (the runner, before any claim is labelled). Untrusted text; never dumped to a receipt."""
    metadata: dict[str, Untrusted] = Field(default_factory=dict)
    """A dataset row's extra columns (``[[datasets]] extra = "keep"``), by column name, each
    value of origin ``reference`` (a column may hold a gold answer the row does not map): held
    for the operator, never sent to a judge (``Untrusted.delimited`` refuses the origin), never
    in a receipt, and not part of the job's identity."""


def pair_digest(a_sha256: str, b_digest: str) -> str:
    """A pair's artifact digest (docs/receipt-format.md §6.3): the sha256 of the RFC 8785
    JSON ``{"a": a_sha256, "b": b_digest}``, ``a_sha256`` being the sha256 (hex) of ``a`` and
    ``b_digest`` ``b``'s keyed digest (``hmac-sha256:<hex>``) when ``b`` is the reference,
    else its sha256 (hex)."""
    return sha256_digest(canonical_json({"a": a_sha256, "b": b_digest}))
