"""Covert channels (issue 36): a candidate that reads the hidden tests' inputs and expected
values tries to send them out through every channel it can reach, and no contributor-visible
or public output carries more than the accept / reject outcome.

``tests/covert_world.py`` builds the world and says what the candidate tries. The test is
non-interference: three worlds run the same campaign with the same candidate and keys, two
with one secret (A, A2) and one with another (B); every public output of ``jurat run``
(receipts, proofs, the default terminal output, ``--json``, ``--junit``, telemetry), of
``jurat board`` and of ``jurat serve`` (everything a contributor token reads, and the
public board) is flattened to fields, and

* a field equal in A and A2 (a function of the secret, the campaign and the candidate) must
  be equal in B too: otherwise the secret reached it;
* a field that differs between A and A2 is noise, and must be one of ``NOISE``: random by
  construction (a signature, a salted commitment, a clock). A field listed as a digest
  (``SALTED``) must also really differ between A and A2, so a commitment that lost its salt
  would be caught.

The operator's record must differ between A and B (the candidate did leak into what it
could reach: coverage, resources, failures), so an empty finding means something.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.covert_world import (
    Outputs,
    campaign_toml,
    flatten,
    flatten_text,
    flatten_xml,
    fold_delimiters,
    hidden_tests,
    spy_source,
    witness_judge,
)
from tests.service._support import Env, subprocess_server, wait_decided
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.slow

COMMAND_TIMEOUT_S = 600
SERVICE_TIMEOUT_S = 300

#: Fields that are random by construction, by output (a regex on the output's name) and
#: path (a regex on the field's path). ``SALTED`` ones must differ between two worlds with
#: one secret; the clocks may happen to agree.
SALTED = [
    # The receipt's signature, and the commitment to the operator's record with what binds it.
    (r".", r"dsseEnvelope\.signatures\[\d+\]\.sig$"),
    (r".", r"\.record_sha256$"),
    (r".", r"\.evidence_bundle(\.sha256)?$|evidence_bundle_sha256$"),
    (r".", r"\[gate=tests\.pass\]\.sha256$"),
    # Inclusion proofs and checkpoints: hashes over the ledger, which holds the operator's
    # salted records and entry times, and the receipt they prove (compared on its own).
    (r"proof", r"\.(receipt|receipt_sha256|payload_sha256|prev_hash|entry_hash|leaf_hash"
               r"|root_hash|checkpoint)$|\.hashes\[\d+\]$"),
    (r"checkpoint\.txt$", r":(2|4)$"),
]
DERIVED = [
    # A digest of the judge's answer, which digests its prompt: the prompts are compared
    # line by line below, the salted commitment they show included.
    (r".", r"\.explanation_sha256$"),
]
CLOCKS = [
    (r".", r"latency_ms$|dispatch_ms$|_at$|\.at$|time$|timestamp|created|recorded|started"
           r"|finished|elapsed|duration|@time$"),
    # The terminal's timings, rates and the paths of each world's directory.
    (r"terminal", r"."),
]
NOISE = SALTED + DERIVED + CLOCKS
#: What is random in a judge's prompt: its marker tag (per call), and the tests' evidence
#: digest (the salted commitment), each replaced before the prompt is compared.
PROMPT_NOISE = (
    (re.compile(r"(marker tag is )[0-9a-f]+"), r"\1<per call>"),
    (re.compile(r"(tool: pytest [^\n]*\nsha256: )[0-9a-f]{64}"), r"\1<salted>"),
    (re.compile(r"(\] tests \(pytest [^,]+, sha256 )[0-9a-f]{64}"), r"\1<salted>"),
)


def _prompt(text: str) -> str:
    text = fold_delimiters(text)
    for pattern, replacement in PROMPT_NOISE:
        text = pattern.sub(replacement, text)
    return text


@dataclass
class World:
    secret: int
    root: Path
    outputs: Outputs


def _jurat(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(cwd / "cfg"),
           "XDG_STATE_HOME": str(cwd / "state")}
    env.pop("CI", None)
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)


def _write_campaign(root: Path, secret: int, url: str, *, with_artifacts: bool) -> Path:
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_hidden.py").write_text(hidden_tests(secret))
    for mode in ("pass", "fail"):
        (root / f"spy_{mode}.py").write_text(spy_source(mode))
    path = root / "campaign.toml"
    path.write_text(campaign_toml(url, with_artifacts=with_artifacts))
    return path


_ROOT_NAMES = re.compile(r"/tmp/pytest-of-[^\s'\"]+")


def _terminal(text: str, root: Path) -> str:
    return _ROOT_NAMES.sub("<dir>", text.replace(str(root), "<root>"))


def _run_world(root: Path, secret: int, keys: Path, url: str, outputs: Outputs) -> None:
    campaign = _write_campaign(root, secret, url, with_artifacts=True)
    shutil.copytree(keys, root / "keys")
    done = _jurat("run", str(campaign), "--out", "out", "--ledger", f"sqlite:///{root / 'l.db'}",
                  "--key", "keys/jurat.key", "--quiet", "--json", "run.json", "--junit",
                  "junit.xml", "--telemetry", "telemetry.ndjson", cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr  # spy-fail is rejected
    outputs.add("jurat run terminal", flatten_text(_terminal(done.stdout + done.stderr, root),
                                                   "terminal"))
    outputs.add_tree(root / "out", "out")
    outputs.add("run.json", flatten_text((root / "run.json").read_text(), "run.json"))
    outputs.add("junit.xml", flatten_xml((root / "junit.xml").read_text(), "junit.xml"))
    outputs.add("telemetry", flatten_text((root / "telemetry.ndjson").read_text(), "telemetry"))
    board = _jurat("board", f"sqlite:///{root / 'l.db'}", "--out", "site", "--key",
                   "keys/jurat.pub", cwd=root)
    assert board.returncode == 0, board.stderr
    outputs.add_tree(root / "site", "site")
    from jurat.ledger import open_ledger

    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        outputs.operator_record = [e.payload["record"] for e in ledger.entries()
                                   if e.kind == "checks_recorded"]


def _serve_world(root: Path, secret: int, keys: Path, url: str, outputs: Outputs) -> None:
    served = root / "served"
    campaign = _write_campaign(served, secret, url, with_artifacts=False)
    shutil.copytree(keys, served / "keys")
    env = Env(root=served, ledger_url=f"sqlite:///{served / 'l.db'}",
              key=served / "keys" / "jurat.key", pub=served / "keys" / "jurat.pub",
              log_key=served / "keys" / "jurat-log.key", campaigns={"covert": campaign})
    alice = env.auth("contributor", "covert", "alice")
    with subprocess_server(env, ("covert",), "--board") as (_, base), \
            httpx.Client(base_url=base, timeout=60) as http:
        seen: dict[str, Any] = {}
        for mode in ("pass", "fail"):
            body = {"artifact": {"id": f"spy-{mode}", "text": spy_source(mode),
                                 "media_type": "text/x-python"}}
            r = http.post("/v1/campaigns/covert/jobs", headers=alice, json=body)
            assert r.status_code == 202, r.text
            job = r.json()["job_id"]
            state = wait_decided(http, job, alice, timeout=SERVICE_TIMEOUT_S)
            assert state.get("status") == "decided", state
            seen[f"{mode} job"] = state
            seen[f"{mode} receipt"] = http.get(f"/v1/jobs/{job}/receipt", headers=alice).json()
            deadline = time.monotonic() + SERVICE_TIMEOUT_S
            while (proof := http.get(f"/v1/jobs/{job}/proof", headers=alice)).status_code == 409:
                assert time.monotonic() < deadline, "no checkpoint covered the job"
                time.sleep(0.25)
            seen[f"{mode} proof"] = proof.json()
        seen["jobs"] = http.get("/v1/jobs", headers=alice).json()
        seen["campaigns"] = http.get("/v1/campaigns", headers=alice).json()
        index = http.get("/board/")
        seen["board"] = index.text
        for href in sorted(set(re.findall(r'href="([^"#?]+)"', index.text))):
            if not href.startswith(("http:", "https:", "/")):
                seen[f"board/{href}"] = http.get(f"/board/{href}").text
    for name, value in seen.items():
        label = f"serve {name}"
        if isinstance(value, str):
            outputs.add(label, flatten_text(value, label))
        else:
            outputs.add(label, flatten(value, label))


def _noise(output: str, path: str, table: list[tuple[str, str]]) -> bool:
    return any(re.search(o, output) and re.search(p, path) for o, p in table)


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, World]]:
    from jurat.ledger import log_keygen
    from jurat.receipts import keygen

    keys = tmp_path_factory.mktemp("keys")
    keygen(keys)
    log_keygen(keys)
    # Different bits everywhere the spy reads them (low bits: failures, memory, time).
    base = secrets.randbits(40) << 24
    first, second = base | 0b101010_101010_101010_101010, base | 0b010101_010101_010101_010101
    found: dict[str, World] = {}
    with FakeOpenAI(behaviour=witness_judge) as judge:
        for name, secret in (("A", first), ("A2", first), ("B", second)):
            root = tmp_path_factory.mktemp(f"world-{name}")
            outputs = Outputs()
            for where, build in (("run", _run_world), ("serve", _serve_world)):
                before = len(judge.received)
                build(root, secret, keys, judge.url, outputs)
                # What a judge is shown can reach its answer, and so a receipt: compared as
                # if public, with the per-call delimiters' random tokens folded.
                for request in judge.received[before:]:
                    shown = _prompt(request.prompt)
                    label = f"judge prompt {where} {request.digest}"
                    outputs.add(label, flatten_text(shown, label))
            found[name] = World(secret, root, outputs)
    yield found


def _findings(worlds: dict[str, World]) -> list[str]:
    a, a2, b = (worlds[n].outputs.fields for n in ("A", "A2", "B"))
    found: list[str] = []
    for output in sorted(set(a) | set(b)):
        left, again, right = a.get(output, {}), a2.get(output, {}), b.get(output, {})
        for path in sorted(set(left) | set(again) | set(right)):
            x, x2, y = left.get(path), again.get(path), right.get(path)
            if _noise(output, path, CLOCKS):
                continue  # a clock may agree or not in any two worlds
            if x != x2:
                if not _noise(output, path, NOISE):
                    found.append(f"unexplained noise in {output} {path}: {x!r} / {x2!r}")
            elif _noise(output, path, SALTED) and x is not None and output in a2:
                found.append(f"a field listed as salted is the same in two worlds: "
                             f"{output} {path}: {x!r}")
            elif x != y:
                found.append(f"THE SECRET REACHED {output} {path}: {x!r} -> {y!r}")
    return found


def test_the_spy_ran_and_its_outcome_is_the_same_in_every_world(
        worlds: dict[str, World]) -> None:
    records = {name: world.outputs.operator_record for name, world in worlds.items()}
    assert all(len(r) == 2 for r in records.values()), records  # jurat run's two jobs
    # It did leak into everything it reaches: the operator's record differs with the secret.
    assert records["A"] != records["B"]
    for record in records.values():
        assert sorted(r["tests"]["outcome"] for r in record) == ["failed", "passed"]


def test_no_public_output_depends_on_the_hidden_secret(worlds: dict[str, World]) -> None:
    a = worlds["A"].outputs.fields
    assert len(a) > 20 and sum(len(f) for f in a.values()) > 1000, sorted(a)
    for world in worlds.values():
        assert str(world.secret) not in json.dumps(world.outputs.fields)
        assert f"{world.secret:x}" not in json.dumps(world.outputs.fields)
    found = _findings(worlds)
    assert not found, "\n".join(found[:80]) + (f"\n… {len(found) - 80} more" if len(
        found) > 80 else "")

