"""npm packages for the tests that check jurat's output with outside tools (sigstore-js,
ethers): installed once into a folder under .venv and reused by later runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.support.homes import user_env

__all__ = ["npm_packages"]


def _installed(root: Path, packages: Mapping[str, str]) -> bool:
    for name, version in packages.items():
        manifest = root / "node_modules" / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
            return False
    return True


def npm_packages(cache: Path, packages: Mapping[str, str]) -> Path:
    """``cache`` holding ``node_modules`` with exactly ``packages`` (name → version).

    Fails the test (never skips it) when Node.js or npm is missing or the install fails.
    """
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        pytest.fail("this test needs Node.js 20 and npm on PATH (CI has them)")
    if _installed(cache, packages):
        return cache
    # Install beside the cache and rename into place, so an interrupted install never
    # leaves a half-populated cache that later runs would trust.
    tmp = cache.with_name(f"{cache.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "package.json").write_text('{"private": true}\n')
    specs = [f"{name}@{version}" for name, version in packages.items()]
    try:
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", *specs],
            cwd=tmp, capture_output=True, text=True, timeout=600,
            # npm reads its configuration (registry, certificates) and keeps its download
            # cache in the user's home, not the session's private one.
            env=user_env())
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"npm install {' '.join(specs)} timed out: is the npm registry reachable?")
    if proc.returncode != 0 or not _installed(tmp, packages):
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"npm install {' '.join(specs)} failed (exit {proc.returncode}); the npm "
                    f"registry must be reachable for this test:\n{proc.stderr[-2000:]}")
    shutil.rmtree(cache, ignore_errors=True)
    try:
        tmp.rename(cache)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another run won the race; its cache will do
    return cache
