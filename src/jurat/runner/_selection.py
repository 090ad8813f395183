"""Which of a campaign's artifacts a run judges: ``jurat run --limit N`` and ``--only ID``.

A selection chooses artifacts; it changes nothing about how each is judged. The campaign,
its policy and its digest are the same, so is every job identity (runner/_job.py binds the
artifact's content and context, never its place or the run's selection), and a judged
artifact's receipt is the one a run of the whole campaign would write: a later run without
a selection reuses it from the ledger and draws no sample again (issue 29). Artifacts left
out are not judged and get no receipt; the run says how many (``plan_line``).

``--only`` keeps the artifacts it names, ``--limit`` then the first N of what is kept, in
campaign order (``[[artifacts]]`` first, then each dataset's rows). Every artifact is still
checked before anything is sent (preflight), so a selection never hides a campaign problem,
and an ``--only`` id the campaign does not have is refused (exit 3) by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jurat.errors import ConfigError
from jurat.models._problems import close_match

__all__ = ["Picker", "Selection", "not_selected_line", "plan_line"]


@dataclass(frozen=True)
class Selection:
    """``--limit`` and ``--only`` as given; the default selects every artifact."""

    limit: int | None = None
    """Judge at most this many artifacts (the first, in campaign order); None: no limit."""
    only: tuple[str, ...] = ()
    """Judge only the artifacts with these ids; empty: every id."""

    @property
    def active(self) -> bool:
        """Whether it leaves anything out (a limit or ids were given)."""
        return self.limit is not None or bool(self.only)

    def options(self) -> str:
        """The options as typed, for messages: ``--only a --limit 2``."""
        given = [f"--only {artifact_id}" for artifact_id in self.only]
        if self.limit is not None:
            given.append(f"--limit {self.limit}")
        return " ".join(given)

    def picker(self) -> Picker:
        """A fresh pass over the campaign's artifacts in order."""
        return Picker(self)

    def refuse_unknown(self, known: Iterable[str]) -> None:
        """ConfigError (exit 3) naming every ``--only`` id that is not an artifact's."""
        ids = set(known)
        missing = [artifact_id for artifact_id in dict.fromkeys(self.only)
                   if artifact_id not in ids]
        if not missing:
            return
        guess = close_match(missing[0], ids) if len(missing) == 1 else None
        names = ", ".join(repr(m) for m in missing)
        which = "this id" if len(missing) == 1 else "these ids"
        raise ConfigError(
            f"--only {names}: no artifact of the campaign has {which}"
            + (f"; did you mean {guess!r}?" if guess else "")
            + " (fix: give the id of an [[artifacts]] entry or a dataset row)")


class Picker:
    """One pass of a ``Selection`` over the artifacts in campaign order."""

    def __init__(self, selection: Selection) -> None:
        self.selection = selection
        self._only = frozenset(selection.only)
        self.picked = 0
        """Artifacts picked so far."""

    @property
    def full(self) -> bool:
        """The limit is reached: no later artifact is picked."""
        limit = self.selection.limit
        return limit is not None and self.picked >= limit

    def pick(self, artifact_id: str) -> bool:
        """Whether the next artifact, ``artifact_id``, is judged (and count it if so)."""
        if self.full or (self._only and artifact_id not in self._only):
            return False
        self.picked += 1
        return True


def plan_line(selection: Selection, selected: int, total: int) -> str | None:
    """What a selected run judges, printed before it starts: ``selected 5 of 40 artifacts
    (--limit 5); the other 35 are not judged and get no receipt``. None without a selection."""
    if not selection.active:
        return None
    left = total - selected
    noun = "artifact" if total == 1 else "artifacts"
    tail = (f"; the other {left} {'is' if left == 1 else 'are'} not judged and get no receipt"
            if left else "")
    return f"selected {selected} of {total} {noun} ({selection.options()}){tail}"


def not_selected_line(selection: Selection, selected: int, total: int) -> str | None:
    """The summary's count of the artifacts a selection left out, or None if none were."""
    left = total - selected
    if not selection.active or not left:
        return None
    return (f"not selected: {left} of {total} artifacts ({selection.options()}): not judged, "
            "no receipt written")
