"""`jurat adjudicate` signs a checkpoint and writes the new review's inclusion proof, and
the command it prints verifies the review through step 8 (issue 27)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from jurat.ledger import open_ledger
from jurat.receipts import read_statement
from tests.service._support import CRITICAL, GOOD, Env, make_env
from tests.support.cli import invoke


def _escalated_run(tmp_path: Path) -> tuple[Env, str]:
    """A `jurat run` whose one decision escalates (the critical tier needs a person): the
    environment and the job id to adjudicate."""
    env = make_env(tmp_path)
    (tmp_path / "sq.py").write_text(GOOD)
    campaign = tmp_path / "run.toml"
    campaign.write_text(CRITICAL.format() + '\n[[artifacts]]\nid = "sq"\npath = "sq.py"\n')
    run = invoke("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                 env.ledger_url, "--key", str(env.key), "--quiet")
    assert run.exit_code == 1, run.output
    first = (tmp_path / "out" / "sq.sigstore.json").read_bytes()
    return env, read_statement(first)["predicate"]["inputs"]["job_id"]


def test_adjudicate_prints_a_verify_command_that_checks_the_new_reviews_proof(
        tmp_path: Path) -> None:
    env, job = _escalated_run(tmp_path)
    out = tmp_path / "sq.v2.sigstore.json"
    result = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                    "--rationale", "Reviewed.", "--reviewer", "rita", "--key", str(env.key),
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    seq = int(re.search(r"^ledger entry (\d+) ", result.stdout, re.M).group(1))  # type: ignore[union-attr]
    proof = json.loads(Path(f"{out}.proof.json").read_text())
    # The printed entry is the one the proof proves, and it is the adjudicated review's.
    assert proof["entry"]["seq"] == seq and proof["proof"]["leaf_index"] == seq
    assert proof["entry"]["payload"]["adjudicates"] == job
    assert proof["entry"]["payload"]["review_version"] == 2
    with open_ledger(env.ledger_url) as ledger:
        assert ledger.latest_checkpoint().tree_size == seq + 1  # type: ignore[union-attr]
    line = next(x for x in result.stdout.splitlines() if x.startswith("verify:"))
    command = shlex.split(line.removeprefix("verify:"))
    assert command[:2] == ["jurat", "verify"] and "--checkpoint" in command, line
    assert command[2] == str(out)
    verified = invoke(*command[1:])
    assert verified.exit_code == 0, verified.output
    # Step 8 ran and held for the printed entry (not just steps 1-7).
    assert re.search(rf"8\. ok +check inclusion proof +entry {seq} \(review version 2\)",
                     verified.output), verified.output


def test_adjudicate_with_a_log_key_the_ledger_does_not_know_is_refused_before_recording(
        tmp_path: Path) -> None:
    from jurat.ledger import log_keygen

    env, job = _escalated_run(tmp_path)
    other, _ = log_keygen(tmp_path / "other")
    with open_ledger(env.ledger_url) as ledger:
        before = ledger.size()
    result = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                    "--rationale", "Reviewed.", "--reviewer", "rita", "--key", str(env.key),
                    "--log-key", str(other), "--out", str(tmp_path / "v2.sigstore.json"))
    assert result.exit_code == 3, result.output
    assert "--log-key" in result.output and "Traceback" not in result.output
    with open_ledger(env.ledger_url) as ledger:
        assert ledger.size() == before  # nothing appended: no review without its proof
    assert not (tmp_path / "v2.sigstore.json").exists()


def test_adjudicate_names_the_version_it_settles(tmp_path: Path) -> None:
    """`--review-version`: a decision is applied only to the review the reviewer read;
    another is refused before anything is recorded (issue 37)."""
    env, job = _escalated_run(tmp_path)
    with open_ledger(env.ledger_url) as ledger:
        size = ledger.size()
    stale = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                   "--rationale", "Reviewed.", "--reviewer", "rita", "--key", str(env.key),
                   "--out", str(tmp_path / "x.json"), "--review-version", "2")
    assert stale.exit_code == 3 and "review_version" in stale.output, stale.output
    with open_ledger(env.ledger_url) as ledger:
        assert ledger.size() == size
    read = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                  "--rationale", "Reviewed.", "--reviewer", "rita", "--key", str(env.key),
                  "--out", str(tmp_path / "v2.json"), "--review-version", "1")
    assert read.exit_code == 0, read.output
