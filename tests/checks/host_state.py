"""Read-only views of the host used to assert that a sandboxed run left nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

from jurat.checks._cgroup import controller_dirs


def _cmdline(pid: str) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def processes_with(text: str) -> list[int]:
    """Pids whose command line contains ``text`` (other than this process)."""
    me = str(os.getpid())
    return [
        int(pid)
        for pid in os.listdir("/proc")
        if pid.isdigit() and pid != me and text in _cmdline(pid)
    ]


def children_of(parent: int) -> list[int]:
    """Live (non-zombie) direct children of ``parent``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == parent:
            found.append(int(pid))
    return found


def cgroups_of(owner: int) -> list[str]:
    """Run groups created by process ``owner`` that still exist."""
    prefix = f"jurat-{owner}-"
    return sorted(
        str(entry)
        for directory in controller_dirs().values()
        for entry in directory.iterdir()
        if entry.name.startswith(prefix)
    )
