"""docs/service.md's walk-through, run as written (on a free port instead of 8080): every
command works when copied, and the outcomes it describes are the ones the server gives."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service._support import free_port

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "service.md"


@pytest.mark.slow
def test_the_walk_through_runs_as_written(tmp_path: Path) -> None:
    if not shutil.which("jq") or not shutil.which("curl"):
        pytest.fail("docs/service.md's walk-through needs curl and jq (make sysdeps)")
    blocks = re.findall(r"^```sh\n(.*?)^```$", DOC.read_text(), re.M | re.S)
    script = "\n".join(blocks).replace("8080", str(free_port()))
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    (tmp_path / "walk.sh").write_text(
        "set -euo pipefail\ntrap 'kill %1 2>/dev/null || true' EXIT\n" + script)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "walk.sh"], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert '"disposition": "escalate"' in out
    assert "tier requires explicit adjudication before certification" in out
    assert '"review_version":2' in out
    assert "rubric -> accept" in out and "8. ok   check inclusion proof" in out
    assert "adjudication refused" in out
    assert "all decisions re-derive and every receipt's signature verifies" in out
    # The contest's end (issue 37): Bob's copy names Carol's job and is never settled; the
    # first submission is; the board is published.
    assert "a copy of the work first submitted as job" in out
    assert "\n1\n" in out
    assert (tmp_path / "demo" / "board" / "index.html").is_file()
