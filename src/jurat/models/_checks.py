from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from jurat.models._base import Frozen


class Limits(Frozen):
    """Per-run resource limits of the sandbox."""

    wall_s: float = Field(10.0, gt=0, le=3600)
    """Wall-clock limit in seconds; the harness SIGKILLs the whole group after it."""
    cpu_s: int = Field(5, gt=0, le=3600)
    """CPU-time limit (RLIMIT_CPU) in seconds."""
    memory_mb: int = Field(512, gt=0, le=65536)
    """Memory limit (cgroup memory controller, plus RLIMIT_AS) in MiB."""
    procs: int = Field(32, gt=0, le=4096)
    """Process limit (cgroup pids controller)."""
    output_kb: int = Field(256, gt=0, le=1048576)
    """Captured stdout+stderr cap in KiB; output beyond it is truncated and flagged."""
    file_mb: int = Field(16, gt=0, le=65536)
    """Largest file the candidate may write (RLIMIT_FSIZE) in MiB."""
    nofile: int = Field(256, gt=8, le=65536)
    """Open file descriptors (RLIMIT_NOFILE)."""
    tmpfs_mb: int = Field(64, gt=0, le=65536)
    """Size of the sandbox's writable tmpfs workdir in MiB."""


class PythonChecks(Frozen):
    """The ``[checks.python]`` table: deterministic checks for Python candidates."""

    version: str = "3.11"
    """The Python version the candidate is declared for (parsing uses this grammar)."""
    tests: str | None = None
    """The pytest file the candidate must pass. In a campaign file, its path relative to the
    campaign file (inside the campaign's directory, capped by ``[intake] max_tests_bytes``);
    in the policy (so in every receipt), ``sha256:`` of that path, since the hidden tests'
    file name is reference material. ``Campaign.tests_path`` keeps the path.
    """
    module: str = "solution"
    """Module name the candidate is placed under in the sandbox workdir."""
    limits: Limits = Limits()
    """Resource limits of each sandboxed run."""
    lint_rules: tuple[str, ...] = ("E", "F", "W")
    """Extra ruff rule selectors on top of the pinned PEP 8 set."""
    import_policy: str = "jurat.imports/v1"
    """Id of the versioned import and operation policy."""
    coverage: bool = True
    """Measure line and branch coverage while running the tests."""
    mutation: bool = False
    """Run mutation sensitivity (costs one test run per mutant)."""
    max_mutants: int = Field(20, ge=0, le=500)
    """Upper bound on mutants executed per candidate."""
    skips_fail: bool = Field(False, strict=True, exclude_if=lambda on: on is False)
    """A test the test file itself skips (a ``skip``/``skipif`` marker, a fixture) fails the
    run too. Off: it is reported as skipped, and the run passes when every other test
    passed and at least one did. A skip raised in a test's body, which reads the
    candidate, is always a failure. Absent from the policy when off."""
    objects: tuple[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")], ...
    ] = Field((), max_length=64, exclude_if=lambda names: not names)
    """The candidate's classes whose instances the tests may hold (``["Stack"]``): calls
    on them, their attributes and their special methods, each result coerced to plain data
    in the tests' process. Every other value crosses the sandbox as plain data only, and
    anything else is a test failure (docs/checks.md, "The tests' view of the artifact").
    Absent from the policy when empty, so policies written before keep their digest."""
