"""``jurat selftest [CAMPAIGN] [--judge PROVIDER ...]``: the judges' controls as a table.

Negative controls, canaries and the bias monitor (``jurat.runner._selftest``, seed 002 §6).
With a campaign, its panel is tested as the campaign uses it: only the controls of the
campaign's kind, and requests only to its ``allowed_destinations`` (local judges, which
send nothing anywhere, are always allowed). Without one, every control, local judges only.

A failed control is named after the table with what it asked (the control's input: jurat's
own text, shown capped with its digest), the answer it expected and the one the judge's
votes gave (answer words and counts, never a judge's prose).

Exit 0 every judge passed every control that applies to it; 1 a control failed, or no
control applied to a judge (nothing was shown); 3 the campaign or a ``--judge`` could not
be read, or a judge's endpoint is not allowed or its API key is not set (checked before
any request: nothing was sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pydantic
from rich.console import Console
from rich.table import Table

from jurat.campaign import load_campaign
from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import ConfigError, JuratError
from jurat.judges import CallKind, Engine
from jurat.models import Frozen, JudgeConfig
from jurat.models._endpoints import LOCAL_DESTINATIONS
from jurat.models._invalid import invalid
from jurat.runner import (
    ALL_CONTROLS,
    CONTROLS_FOR,
    Check,
    selftest_judge,
    selftest_preflight,
)

__all__ = ["selftest_command"]

_RESULT = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "n/a": "[dim]n/a[/]"}


class _Plan(Frozen):
    """Whom to test, with which controls, allowed to send where."""

    judges: tuple[JudgeConfig, ...]
    """The campaign's panel, then one judge per ``--judge``; the built-in sim judge if none."""
    fields: tuple[str, ...]
    """Where each judge comes from, for errors: ``judges[0]``, ``--judge sim``."""
    kinds: tuple[CallKind, ...]
    """The controls to run: the campaign kind's, or all."""
    panel: int
    """How many of ``judges`` are the campaign's panel (the rest come from ``--judge``)."""
    campaign_allowed: tuple[str, ...]
    """The campaign's ``allowed_destinations``: its panel is held to exactly these."""
    allowed: tuple[str, ...]
    """Where the controls may send content: the campaign's destinations plus local judges
    (which send nothing anywhere), so that a ``--judge sim`` can join a campaign's panel."""
    source: str | None
    """The campaign file, named in destination errors."""
    scope: str
    """One line saying what is tested, for the output."""


def _plan(campaign: Path | None, providers: Sequence[str]) -> _Plan:
    judges: list[JudgeConfig] = []
    fields: list[str] = []
    kinds: tuple[CallKind, ...] = ALL_CONTROLS
    campaign_allowed: tuple[str, ...] = ()
    allowed: tuple[str, ...] = LOCAL_DESTINATIONS
    source = None
    scope = "every control; local judges only (name a campaign to test its panel)"
    if campaign is not None:
        loaded = load_campaign(campaign)
        policy = loaded.policy
        judges.extend(policy.judges)
        fields.extend(f"judges[{i}]" for i in range(len(policy.judges)))
        kinds = CONTROLS_FOR[policy.kind]
        campaign_allowed = tuple(policy.allowed_destinations)
        # Local judges send content nowhere: allowing them widens nothing.
        allowed = tuple(dict.fromkeys((*campaign_allowed, *LOCAL_DESTINATIONS)))
        source = loaded.source
        destinations = shown(list(policy.allowed_destinations))
        scope = (f"campaign {shown(policy.id)} ({policy.kind}): its {policy.kind} controls, "
                 f"sent only to its allowed_destinations {destinations}")
    panel = len(judges)
    for i, provider in enumerate(providers):
        given = {"id": f"{provider}#{i}" if campaign else provider, "provider": provider,
                 "samples": 5, "seed": 11}
        try:
            judges.append(JudgeConfig.model_validate(given))
        except pydantic.ValidationError as exc:
            raise invalid(exc, JudgeConfig, given, ConfigError, source=f"--judge {provider!r}",
                          fix="e.g. --judge sim or --judge stub:always-equivalent") from exc
        fields.append(f"--judge {provider}")
    if not judges:
        judges.append(JudgeConfig(id="sim", provider="sim", samples=5, seed=11,
                                  reliability=0.95))
        fields.append("the built-in sim judge")
    return _Plan(judges=tuple(judges), fields=tuple(fields), kinds=kinds, panel=panel,
                 campaign_allowed=campaign_allowed, allowed=allowed, source=source, scope=scope)


async def _run(plan: _Plan) -> list[list[Check]]:
    async with Engine() as engine:
        # Every destination and key before the first request: a refusal sends nothing. The
        # panel is held to the campaign's own destinations, as `jurat run` holds it.
        panel, extra = plan.judges[:plan.panel], plan.judges[plan.panel:]
        selftest_preflight(panel, plan.campaign_allowed, engine,
                           fields=plan.fields[:plan.panel], source=plan.source)
        selftest_preflight(extra, plan.allowed, engine, fields=plan.fields[plan.panel:])
        return [await selftest_judge(judge, kinds=plan.kinds, allowed=plan.allowed,
                                     engine=engine) for judge in plan.judges]


def selftest_command(campaign: Path | None, providers: Sequence[str]) -> ExitCode:
    """Print the table; OK only when every judge passes every control that applies."""
    console = Console(emoji=False)
    try:
        plan = _plan(campaign, providers)
        results = asyncio.run(_run(plan))
    except ConfigError as exc:  # unreadable input, a refused destination, a missing key
        return print_error(exc, code=ExitCode.INPUT)
    except JuratError as exc:
        return print_error(exc)
    console.print(f"testing {plan.scope}", highlight=False)
    table = Table(title="jurat selftest")
    for col in ("judge", "control", "result", "detail"):
        table.add_column(col)
    failed = not_applicable = 0
    idle: list[str] = []
    for judge, checks in zip(plan.judges, results, strict=True):
        for check in checks:
            failed += check.result == "fail"
            not_applicable += check.result == "n/a"
            table.add_row(shown(check.judge), shown(check.name), _RESULT[check.result],
                          shown(check.detail))
        if all(check.result == "n/a" for check in checks):
            idle.append(shown(judge.id))
    console.print(table)
    _print_misses([check for checks in results for check in checks if check.result == "fail"],
                  console)
    na = f" ({not_applicable} not applicable)" if not_applicable else ""
    if idle:
        console.print(f"[red]no control applies to {', '.join(idle)}[/]: it answers none of "
                      "the prompts tested, so nothing was shown")
    if failed:
        console.print(f"[red]{failed} control(s) failed[/]{na}")
    elif not idle:
        console.print(f"all applicable controls pass{na}")
    return ExitCode.OK if not failed and not idle else ExitCode.ESCALATE


def _print_misses(failed: Sequence[Check], console: Console) -> None:
    """Each failed control: its judge and name, then each input it got wrong."""
    if not failed:
        return
    lines = ["failed controls:"]
    for check in failed:
        lines.append(f"  {shown(check.judge)}  {shown(check.name)}")
        for miss in check.misses:
            lines += [f"    input:    {shown(miss.input)}",
                      f"    expected: {shown(miss.expected)}",
                      f"    actual:   {shown(miss.actual)}"]
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
