"""Every command's --help shows each option's help as written (issue 29): rich markup would
otherwise swallow a campaign table's name in brackets (`a [subject]` printed as `a `)."""

from __future__ import annotations

import re
from typing import Any

import typer.main

from jurat.cli import app
from tests.support.cli import invoke

_BOX = re.compile(r"[│╭╮╰╯─┃]")


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    # typer vendors click (typer._click): its classes are not the click package's.
    found = [(path, group)]
    if hasattr(group, "commands"):
        for name, command in group.commands.items():
            found += _commands(command, (*path, name))
    return found


def _flat(text: str) -> str:
    return " ".join(_BOX.sub(" ", text).split())


def test_every_help_text_is_shown_whole() -> None:
    root = typer.main.get_command(app)
    checked = 0
    for path, command in _commands(root):
        shown = _flat(invoke(*path, "--help").stdout)
        for param in command.params:
            written = getattr(param, "help", None)
            if not written:
                continue
            expected = _flat(written.replace("\\[", "["))
            assert expected in shown, (path, param.name, expected)
            checked += 1
    assert checked > 60  # every command's options, not a few
