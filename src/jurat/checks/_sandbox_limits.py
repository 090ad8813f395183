"""The rlimits every in-sandbox process applies to itself (protocol ``jurat.sandbox/v2``).

Stdlib-only: bound read-only into both sandboxes beside the programs that import it.
Memory and process limits that hold come from the run's cgroups (``_cgroup.py``); these
turn a runaway into a prompt, named ending (SIGXCPU, MemoryError, SIGXFSZ).
"""

from __future__ import annotations

import resource
from typing import Any

__all__ = ["apply_rlimits"]


def apply_rlimits(limits: dict[str, Any]) -> None:
    """CPU (soft, hard = soft + 1), address space, file size, open files; no core dumps."""
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["as_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["fsize_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limits["nofile"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
