"""``jurat selftest [CAMPAIGN] [--judge PROVIDER ...]``: the judges' controls as a table.

Negative controls, canaries and the bias monitor (``jurat.runner._selftest``, seed 002 §6).
Exit 0 every judge passed every control; 1 a control failed; 3 the campaign or a
``--judge`` could not be read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pydantic
from rich.console import Console
from rich.table import Table

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import ConfigError, JuratError
from jurat.models import JudgeConfig, load_campaign
from jurat.runner._selftest import selftest_judge

__all__ = ["selftest_command"]


def _judges_from(campaign: Path | None, providers: Sequence[str]) -> list[JudgeConfig]:
    """The campaign's panel and one judge per ``--judge``; the built-in sim judge if none."""
    judges: list[JudgeConfig] = []
    if campaign is not None:
        judges.extend(load_campaign(campaign).policy.judges)
    for i, provider in enumerate(providers):
        try:
            judges.append(JudgeConfig(id=f"{provider}#{i}" if campaign else provider,
                                      provider=provider, samples=5, seed=11))
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                f"--judge {provider!r}: {first['msg']} (fix: e.g. --judge sim or "
                "--judge stub:always-equivalent)"
            ) from exc
    if not judges:
        judges.append(JudgeConfig(id="sim", provider="sim", samples=5, seed=11,
                                  reliability=0.95))
    return judges


def selftest_command(campaign: Path | None, providers: Sequence[str]) -> ExitCode:
    """Print a pass/fail table; OK only when every judge passes every control."""
    console = Console()
    try:
        judges = _judges_from(campaign, providers)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    table = Table(title="jurat selftest")
    for col in ("judge", "control", "result", "detail"):
        table.add_column(col)
    failed = 0
    for judge in judges:
        for check in asyncio.run(selftest_judge(judge)):
            failed += not check.ok
            table.add_row(shown(check.judge), check.name,
                          "[green]pass[/]" if check.ok else "[red]FAIL[/]", shown(check.detail))
    console.print(table)
    console.print("all controls pass" if not failed else f"[red]{failed} control(s) failed[/]")
    return ExitCode.OK if not failed else ExitCode.ESCALATE
