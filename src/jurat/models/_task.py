"""The ``[[tasks]]`` a campaign declares, and how an artifact's ``task`` resolves to one.

Seed 000 (code pipeline, step 6): "Compare observed behavior and analysis with the
contributor's explanation": a judge can only do that against the task the work answers, so
a campaign states its tasks and every judge reads the statement (as delimited data,
judges/_prompts.py). The statement is the operator's; its digest, not its text, is bound
into the job identity and the receipt (docs/receipt-format.md §6.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from jurat.models._base import Frozen
from jurat.models._checks import Limits, PythonChecks
from jurat.models._problems import Problem, close_match, raise_problems

__all__ = ["TASKED_KINDS", "TaskSpec", "resolve_task", "task_checks", "task_checks_problems",
           "task_kind_problems", "task_problems"]


class TaskSpec(Frozen):
    """One ``[[tasks]]`` entry as written in the campaign file."""

    id: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._-]+$")
    """Task id an artifact's ``task`` names; may be omitted when the campaign has one task."""
    statement: str | None = Field(None, min_length=1)
    """The task statement inline, sent to every judge as delimited data."""
    path: str | None = None
    """File holding the statement, relative to the campaign file and inside its directory."""
    reference: str | None = None
    """Operator-only reference material (a model solution, marking notes) inline: read at
    intake, never sent to a judge, a contributor or a receipt."""
    reference_path: str | None = None
    """File holding ``reference``, inside the campaign directory."""
    tests: str | None = None
    """The task's own hidden tests (a pytest file inside the campaign directory): its
    artifacts run these instead of ``[checks.python] tests`` (an artifact's own ``tests``
    still replaces both). Needs ``[checks.python]``."""
    limits: Limits | None = None
    """The sandbox limits of its artifacts' test runs, instead of ``[checks.python]
    limits`` (recorded in each ``tests.pass`` gate)."""
    objects: tuple[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")], ...
    ] | None = Field(None, max_length=64)
    """The classes its tests may hold instances of, instead of ``[checks.python]
    objects`` (docs/checks.md, "The tests' view of the artifact")."""

    @model_validator(mode="after")
    def _one_statement(self) -> TaskSpec:
        if (self.statement is None) == (self.path is None):
            raise_problems([Problem(
                ("statement",), "a task needs its statement: give either statement or path",
                'add statement = "Write fizzbuzz(n) …" or path = "task.md", not both')])
        if self.reference is not None and self.reference_path is not None:
            raise_problems([Problem(("reference",), "give either reference or reference_path",
                                    "keep one of reference = … and reference_path = …")])
        return self


def task_problems(tasks: Sequence[TaskSpec], named: Sequence[str | None]) -> list[Problem]:
    """The tasks' ids (unique, all given when there are several) and every artifact's
    ``task`` (``named``, in ``[[artifacts]]`` order) resolving to one of them.

    A campaign without tasks keeps ``task`` a free label, as before tasks existed.
    """
    if not tasks:
        return []
    problems: list[Problem] = []
    ids = [t.id for t in tasks]
    if len(tasks) > 1:
        problems += [Problem(("tasks", i, "id"), "with several [[tasks]], every task needs an id",
                             'add id = "fizzbuzz" (artifacts name it as task = "fizzbuzz")')
                     for i, t in enumerate(tasks) if t.id is None]
    seen: set[str] = set()
    for i, task_id in enumerate(ids):
        if task_id is not None and task_id in seen:
            problems.append(Problem(("tasks", i, "id"), f"task id {task_id!r} appears twice",
                                    "give every [[tasks]] entry its own id"))
        seen.add(task_id or "")
    for index, name in enumerate(named):
        problem = _unresolved(tasks, name)
        if problem is not None:
            problems.append(Problem(("artifacts", index, "task"), *problem))
    return problems


def _unresolved(tasks: Sequence[TaskSpec], name: str | None) -> tuple[str, str] | None:
    """Why ``name`` does not resolve (message, fix), or None when it does."""
    ids = [t.id for t in tasks if t.id is not None]
    if name is None:
        if len(tasks) == 1:
            return None
        return (f"the artifact names no task, and the campaign has {len(tasks)}",
                f'add task = one of {", ".join(repr(i) for i in ids)}')
    if name in ids:
        return None
    guess = close_match(name, ids)
    return (f"task {name!r} is not a [[tasks]] id" + (
        f"; did you mean {guess!r}?" if guess else ""),
        f'task = "{guess}"' if guess else
        f"use one of {', '.join(repr(i) for i in ids) or 'the [[tasks]] ids (give one an id)'}")


def resolve_task(tasks: Sequence[TaskSpec], name: str | None) -> TaskSpec | tuple[str, str]:
    """The task ``name`` resolves to, or why not (message, fix); ``tasks`` is not empty."""
    problem = _unresolved(tasks, name)
    if problem is not None:
        return problem
    return tasks[0] if name is None else next(t for t in tasks if t.id == name)


#: The campaign kinds whose prompts show a task statement (judges/_prompts.py): every kind
#: but equivalence, whose judge compares two answers with no task block.
TASKED_KINDS = ("rubric", "pairwise", "criteria")


def task_kind_problems(tasks: Sequence[TaskSpec], kind: str) -> list[Problem]:
    """``[[tasks]]`` on an equivalence campaign is refused at load: its judges never see a
    statement, yet its digest would be bound into every receipt as if they had."""
    if not tasks or kind in TASKED_KINDS:
        return []
    return [Problem(("tasks",), f"[[tasks]] statements are read by rubric, pairwise and "
                    f"criteria judges; this campaign is of kind {kind!r}, whose judges never "
                    "see one", "remove [[tasks]] (an artifact's task may stay a free label)")]


def task_checks(task: TaskSpec, python: PythonChecks | None) -> PythonChecks | None:
    """The ``[checks.python]`` a task's artifacts run under: the campaign's, with the
    task's ``limits`` and ``objects`` where it gives them."""
    if python is None:
        return None
    update: dict[str, object] = {}
    if task.limits is not None:
        update["limits"] = task.limits
    if task.objects is not None:
        update["objects"] = task.objects
    return python.model_copy(update=update) if update else python


def task_checks_problems(tasks: Sequence[TaskSpec], python: PythonChecks | None
                         ) -> list[Problem]:
    """A task's tests, limits or objects need the campaign's ``[checks.python]``: without
    it no code check runs, and the task's tests would silently never run."""
    if python is not None:
        return []
    return [Problem(("tasks", i, key), f"task {t.id or i!r} sets {key}, and the campaign has "
                    "no [checks.python], so no test ever runs",
                    "add a [checks.python] table (it may name no tests of its own)")
            for i, t in enumerate(tasks)
            for key in ("tests", "limits", "objects") if getattr(t, key) is not None]
