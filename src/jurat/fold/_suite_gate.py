"""The suite gate: a campaign's ``[gate]`` bounds held against a run's decision counts.

Pure, like the rest of the fold: counts in, a result out. It reads decisions and makes
none: no receipt records it, and the per-artifact decisions are what they are whatever it
says (models/_suite_gate.py says why it is kept out of the policy). The ship rate is
compared on exact fractions (``meets``), so 7 of 10 meets ``min_ship_rate = 0.7``.

Evidence is never weakened: the rate is over every artifact the run judged, and only a
SHIP (criteria) or an accept (rubric) counts as shipped. An artifact whose checks errored
or whose judges did not answer is a WARN, BLOCK, escalate or reject, never a ship.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from jurat.fold._criterion import meets
from jurat.models import Frozen
from jurat.models._suite_gate import SuiteGate

__all__ = ["GateBound", "GateCheck", "SuiteGateResult", "suite_gate", "suite_words"]

GateBound = Literal["min_ship_rate", "max_block", "max_warn"]
"""A bound of ``[gate]``."""

#: The decision words read as ship, warn and block, by campaign kind.
_WORDS: dict[str, tuple[str, str, str]] = {
    "criteria": ("SHIP", "WARN", "BLOCK"),
    "rubric": ("accept", "escalate", "reject"),
}


def suite_words(kind: str) -> tuple[str, str, str]:
    """The words of ``kind`` that read as ship, warn and block."""
    return _WORDS[kind]


class GateCheck(Frozen):
    """One declared bound and what the run measured against it."""

    bound: GateBound
    """Which bound."""
    limit: float | int
    """The bound as declared."""
    value: float | int | None
    """What the run measured: the ship rate (None without artifacts) or a count."""
    holds: bool
    """Whether the run is within the bound."""

    def text(self) -> str:
        """``min_ship_rate = 0.7: ship rate 0.75 holds``: the bound as written, then what
        the run measured."""
        mark = "holds" if self.holds else "FAILS"
        if self.bound == "min_ship_rate":
            shown = "-" if self.value is None else f"{self.value:.2f}"
            return f"min_ship_rate = {self.limit:g}: ship rate {shown} {mark}"
        what = "blocked" if self.bound == "max_block" else "warned"
        return f"{self.bound} = {self.limit}: {self.value} {what} {mark}"


class SuiteGateResult(Frozen):
    """The gate against one run: the counts it read and each declared bound's check."""

    gate: SuiteGate
    """The ``[gate]`` as declared."""
    artifacts: int
    """Artifacts the run judged: the rate's denominator."""
    ship: int
    """Of them, SHIP or accept."""
    warn: int
    """WARN or escalate."""
    block: int
    """BLOCK or reject."""
    checks: tuple[GateCheck, ...]
    """One per declared bound, in the order min_ship_rate, max_block, max_warn."""

    @property
    def holds(self) -> bool:
        """Every declared bound holds (the model refuses a ``[gate]`` with none)."""
        return bool(self.checks) and all(c.holds for c in self.checks)

    def text(self) -> str:
        """One line: whether it holds, then each bound."""
        head = "holds" if self.holds else "fails"
        return f"suite gate {head}: " + ", ".join(c.text() for c in self.checks)


def suite_gate(gate: SuiteGate, kind: str, outcomes: Mapping[str, int],
               artifacts: int) -> SuiteGateResult:
    """Hold ``gate`` against a run of ``artifacts`` artifacts of ``kind`` whose decisions
    ended in ``outcomes`` (decision word → count). A kind without ship / warn / block words
    raises KeyError: the campaign loader refuses ``[gate]`` on it."""
    ship_word, warn_word, block_word = suite_words(kind)
    ship, warn, block = (outcomes.get(w, 0) for w in (ship_word, warn_word, block_word))
    checks: list[GateCheck] = []
    if gate.min_ship_rate is not None:
        # No artifact is no evidence: a rate over none does not meet any bound.
        ok = artifacts > 0 and meets(ship, artifacts, gate.min_ship_rate)
        checks.append(GateCheck(bound="min_ship_rate", limit=gate.min_ship_rate,
                                value=ship / artifacts if artifacts else None, holds=ok))
    if gate.max_block is not None:
        checks.append(GateCheck(bound="max_block", limit=gate.max_block, value=block,
                                holds=block <= gate.max_block))
    if gate.max_warn is not None:
        checks.append(GateCheck(bound="max_warn", limit=gate.max_warn, value=warn,
                                holds=warn <= gate.max_warn))
    return SuiteGateResult(gate=gate, artifacts=artifacts, ship=ship, warn=warn, block=block,
                           checks=tuple(checks))
