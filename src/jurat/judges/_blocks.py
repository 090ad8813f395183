"""Prompt data blocks: the parts a prompt is assembled from, its delimiter tag, and the
gate and evidence lists (judges/_prompts.py renders the templates; judges/_claims.py and
judges/_extract.py use the same blocks).

Outside a block a prompt carries only jurat's template text, enums, indexes and known ids;
everything a candidate, a check's output or a reference could steer is inside a block
whose tag is drawn per call and occurs in none of the block's contents (issue 25).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from jurat.models import EvidenceBundle, GateOutcome, GateStatus
from jurat.models._gate_ids import ALL_GATE_IDS
from jurat.models._taint import Untrusted
from jurat.models._taint import data_block as _block

__all__ = ["Data", "Part", "Reference", "contents", "evidence_parts", "evidence_text",
           "gate_parts", "join", "nonce", "references"]

#: The most characters of one evidence item's excerpt shown.
_EXCERPT_LIMIT = 4000
#: The most characters of one gate's ``detail`` (a checks' summary, a few words) shown.
_DETAIL_LIMIT = 1000
#: The most characters of an unrecognised gate id shown (inside its block).
_GATE_ID_LIMIT = 200

#: The gate ids a prompt names outside a block (models/_gate_ids.py).
_KNOWN_GATES = frozenset(ALL_GATE_IDS)
_OUTCOMES = frozenset(get_args(GateStatus))
#: The evidence kinds jurat writes (checks/_steps.py, runner/_execute.py, runner/_job.py,
#: grounding's ``reference``); a prompt names any other kind only as "evidence".
_EVIDENCE_KINDS = frozenset({
    "artifact", "parse", "imports", "lint", "tests", "coverage", "properties", "complexity",
    "mutation", "subject_output", "reference",
})


def nonce(*contents: str | None, references: Sequence[Untrusted] = ()) -> str:
    """A fresh delimiter tag that occurs in none of ``contents`` nor ``references`` (a clash
    is redrawn)."""
    while True:
        tag = secrets.token_hex(8)
        if not any(tag in c for c in contents if c) and not any(
                r.contains(tag) for r in references):
            return tag


@dataclass(frozen=True)
class Data:
    """A data block still to be delimited: the tag is drawn once every block is known."""

    label: str
    content: str


@dataclass(frozen=True)
class Reference:
    """A data block of operator reference material (origin ``reference``), rendered only by
    ``Untrusted.reference_block``: the text never passes through this module as a ``str``."""

    label: str
    content: Untrusted


#: A prompt part: template or checked text (outside any block), or a data block.
Part = str | Data | Reference


def contents(*groups: Sequence[Part]) -> list[str]:
    return [part.content for group in groups for part in group if isinstance(part, Data)]


def references(*groups: Sequence[Part]) -> list[Untrusted]:
    return [part.content for group in groups for part in group
            if isinstance(part, Reference)]


def join(parts: Sequence[Part], nonce: str) -> str:
    return "\n".join(
        part if isinstance(part, str)
        else part.content.reference_block(part.label, nonce) if isinstance(part, Reference)
        else _block(part.label, part.content, nonce)
        for part in parts
    )


def gate_parts(
    gates: Sequence[GateOutcome], hard_gates: Sequence[str], bundle_size: int
) -> list[Part]:
    """The gate list: one line of enums and an index per gate, its free text in a block.

    A line names the gate's id only when it is a known id, its outcome, whether it is a hard
    gate, and the evidence index when that index exists in the bundle the prompt lists
    (``bundle_size`` 0: the prompt lists none). A gate's ``detail``, and an id that is not a
    known one, go into a block right below its line; a hard gate with no outcome is listed as
    not passed.
    """
    if not gates and not hard_gates:
        return ["(none)"]
    required = set(hard_gates) | {g.id for g in gates if g.required}
    seen = {g.id for g in gates}
    rows: list[tuple[str, str, str, str, int | None]] = [
        (g.id, g.outcome, g.detail, "hard gate" if g.id in required else "informational",
         g.evidence_index)
        for g in gates
    ]
    rows.extend((g, "", "", "hard gate", None) for g in sorted(required - seen))
    parts: list[Part] = []
    for number, (gate_id, outcome, detail, tag, index) in enumerate(rows, 1):
        known = gate_id in _KNOWN_GATES
        if not outcome:
            status = "no outcome (counts as not passed)"
        else:
            status = outcome if outcome in _OUTCOMES else "unrecognised outcome"
        if (isinstance(index, int) and not isinstance(index, bool)
                and 0 <= index < bundle_size):
            tag += f", evidence [{index}]"
        reported = ([] if known else [f"id: {gate_id[:_GATE_ID_LIMIT]}"]) + (
            [f"detail: {detail[:_DETAIL_LIMIT]}"] if detail else [])
        name = gate_id if known else "unrecognised gate"
        if not reported:
            parts.append(f"- {name}: {status} [{tag}]")
            continue
        what = "its detail" if known else ("its id and detail" if detail else "its id")
        parts.append(f"- {name}: {status} [{tag}]; {what} as reported:")
        parts.append(Data(f"GATE {number}", "\n".join(reported)))
    return parts


def evidence_parts(bundle: EvidenceBundle, first: str) -> list[Part]:
    """The evidence list of the decision prompts: outside a block only each item's index, its
    kind when jurat writes that kind, and the gate it supports when that is a known id;
    the item's tool, tool version, digest and excerpt inside its block. Item 0 is what is
    judged (``first`` says where it is shown)."""
    parts: list[Part] = []
    for i, item in enumerate(bundle.items):
        if i == 0:
            parts.append(f"[0] the candidate itself: {first}")
            continue
        kind = item.kind if item.kind in _EVIDENCE_KINDS else "evidence"
        gate = f", for gate {item.gate}" if item.gate in _KNOWN_GATES else ""
        body = f"tool: {item.tool} {item.tool_version}\nsha256: {item.sha256}"
        if item.excerpt:
            body += "\nexcerpt:\n" + item.excerpt[:_EXCERPT_LIMIT]
        parts.append(f"[{i}] {kind}{gate}:")
        parts.append(Data(f"EVIDENCE {i}", body))
    return parts


def evidence_text(bundle: EvidenceBundle, nonce: str,
                  first: str = "the candidate(s) below") -> str:
    """``jurat/claim-label@1``'s evidence list, byte for byte (judges/_claims.py): item 0 is
    what is judged (``first`` says where it is shown), the others' excerpts each inside this
    call's fresh delimiters, their tool, version and digest before the block."""
    lines = []
    for i, item in enumerate(bundle.items):
        head = f"[{i}] {item.kind} ({item.tool} {item.tool_version}, sha256 {item.sha256})"
        if i == 0:
            lines.append(f"{head}: {first}")
        elif item.excerpt:
            lines.append(
                head + ":\n" + _block(f"EVIDENCE {i}", item.excerpt[:_EXCERPT_LIMIT], nonce)
            )
        else:
            lines.append(head)
    return "\n".join(lines)
