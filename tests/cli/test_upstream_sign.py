"""`jurat upstream sign|verify` (issue 37, item 4): a Stage 1/2 receipt an operator's stage
tool makes is taken by a campaign's ``[upstream]`` through `jurat run` and through `jurat
serve`; an altered one, or one signed by another key, is refused with the documented
reason; `jurat verify`, `jurat upstream verify` and the openssl recipe do what the docs say
(docs/campaign-format.md, "Making them"; docs/receipt-format.md §13)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from jurat.canonical import canonical_json, sha256_digest
from jurat.receipts import UPSTREAM_PREDICATE_TYPE, keygen, read_statement
from tests.cli._run_support import run
from tests.service._support import make_env, subprocess_server, wait_decided
from tests.support.cli import invoke
from tests.support.upstream import key_sha256, payload_sha256

REPO = Path(__file__).resolve().parents[2]
ESSAY = "An essay that Stage 1 admitted.\n"
NOT_TRUSTED = ("its signature does not verify with any key this campaign trusts (altered, or "
               "signed by another key)")

#: A campaign judged by one stand-in judge (no sim: nothing here needs --allow-sim) that
#: requires a Stage 1 receipt signed with stage1/jurat.pub.
CAMPAIGN = """\
[campaign]
id = "up"
kind = "rubric"
allowed_destinations = ["stub"]

[rubric]
version = "essay/1"
hard_gates = []
criteria = [ { id = "correctness", weight = 1.0 } ]

[[judges]]
id = "stand-in"
provider = "stub:always-accept"
samples = 1

[upstream]
keys = [{ path = "stage1/jurat.pub", stage = "stage1" }]
"""


def _sign(root: Path, out: Path, *extra: str, key: str = "stage1") -> Any:
    return invoke("upstream", "sign", "--stage", "stage1", "--campaign", "up", "--artifact",
                  str(root / "essay.txt"), "--key", str(root / key / "jurat.key"),
                  "--out", str(out), *extra)


def _setup(root: Path) -> None:
    keygen(root / "stage1")
    keygen(root / "other")
    (root / "essay.txt").write_text(ESSAY)


def _altered(bundle: bytes) -> bytes:
    """The receipt with its predicate edited after signing (a later not_after)."""
    doc = json.loads(bundle)
    payload = json.loads(base64.b64decode(doc["dsseEnvelope"]["payload"]))
    payload["predicate"]["not_after"] = "2999-01-01T00:00:00Z"
    doc["dsseEnvelope"]["payload"] = base64.b64encode(canonical_json(payload)).decode()
    return canonical_json(doc)


def test_sign_writes_the_statement_the_docs_describe(tmp_path: Path) -> None:
    _setup(tmp_path)
    out = tmp_path / "r.json"
    done = _sign(tmp_path, out, "--task", "essay", "--check", "parse", "--check", "lint",
                 "--not-after", "2999-01-01T00:00:00Z")
    assert done.exit_code == 0, done.output
    statement = read_statement(out.read_bytes())
    assert statement["predicateType"] == UPSTREAM_PREDICATE_TYPE
    assert statement["subject"] == [{"name": "essay.txt",
                                     "digest": {"sha256": sha256_digest(ESSAY)}}]
    predicate = statement["predicate"]
    assert set(predicate) == {"stage", "issued_at", "not_after", "campaign", "task", "checks"}
    assert (predicate["stage"], predicate["campaign"], predicate["task"]) == (
        "stage1", "up", "essay")
    assert predicate["checks"] == ["parse", "lint"]
    assert predicate["not_after"] == "2999-01-01T00:00:00.000000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", predicate["issued_at"])
    # The bundle is written as jurat writes its own receipts: RFC 8785 bytes.
    assert out.read_bytes() == canonical_json(json.loads(out.read_bytes()))
    # What it prints is the command that checks it, and that command holds.
    verify = done.stdout.strip().splitlines()[-1].removeprefix("verify: jurat ").split()
    checked = invoke(*verify)
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("verified: a stage1 receipt")


@pytest.mark.parametrize(("args", "words"), [
    (("--stage", "Stage 1"), "stage 'Stage 1' is not a stage name"),
    (("--campaign", "a b"), "campaign 'a b' is not a campaign name"),
    (("--check", "two words"), "check 'two words' is not a check name"),
    (("--not-after", "2020-01-01T00:00:00Z"), "is not after issued_at"),
    (("--not-after", "tomorrow"), "--not-after 'tomorrow' is not a UTC RFC 3339 time"),
    (("--artifact-digest", "sha256:" + "0" * 64), "exactly one of --artifact"),
])
def test_sign_refuses_what_upstream_would_not_take_and_writes_nothing(
        tmp_path: Path, args: tuple[str, ...], words: str) -> None:
    _setup(tmp_path)
    out = tmp_path / "r.json"
    done = _sign(tmp_path, out, *args)  # a repeated option: its last value is the one read
    assert done.exit_code == 3, done.output
    assert words in done.output, done.output
    assert not out.exists() and not list(tmp_path.glob(".r.json.*"))


def test_jurat_run_takes_the_signed_receipt_and_refuses_an_altered_or_foreign_one(
        tmp_path: Path) -> None:
    _setup(tmp_path)
    (tmp_path / "receipts").mkdir()
    receipt = tmp_path / "receipts" / "e1.stage1.json"
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(CAMPAIGN + '\n[[artifacts]]\nid = "e1"\npath = "essay.txt"\n'
                        'upstream = ["receipts/e1.stage1.json"]\n')
    good = _sign(tmp_path, receipt)
    assert good.exit_code == 0, good.output
    signed = receipt.read_bytes()
    for bundle in (_altered(signed), None):
        if bundle is None:  # signed by a key the campaign does not trust for stage1
            assert _sign(tmp_path, receipt, key="other").exit_code == 0
        else:
            receipt.write_bytes(bundle)
        done = run(tmp_path, campaign, None)
        assert done.code == 3, done.out + done.err
        assert ("artifact 'e1': upstream receipt 'receipts/e1.stage1.json' is refused: "
                + NOT_TRUSTED) in " ".join(done.err.split())
        assert not (tmp_path / "out" / "e1.sigstore.json").exists()
    receipt.write_bytes(signed)
    done = run(tmp_path, campaign, None)
    assert done.code in (0, 1, 2), done.out + done.err
    assert done.predicate("e1")["inputs"]["upstream_receipts"] == [{
        "name": UPSTREAM_PREDICATE_TYPE, "sha256": payload_sha256(json.loads(signed)),
        "stage": "stage1", "key_sha256": key_sha256(tmp_path / "stage1" / "jurat.pub"),
        "issued_at": read_statement(signed)["predicate"]["issued_at"]}]


@pytest.mark.slow
def test_jurat_serve_takes_the_signed_receipt_and_refuses_an_altered_or_foreign_one(
        tmp_path: Path) -> None:
    env = make_env(tmp_path)
    _setup(tmp_path)
    (tmp_path / "up.toml").write_text(CAMPAIGN)
    env.campaigns["up"] = tmp_path / "up.toml"
    alice = env.auth("contributor", "up", "alice")
    good, foreign = tmp_path / "good.json", tmp_path / "foreign.json"
    assert _sign(tmp_path, good).exit_code == 0
    assert _sign(tmp_path, foreign, key="other").exit_code == 0
    signed = json.loads(good.read_bytes())

    def body(bundle: Any) -> dict[str, Any]:
        return {"artifact": {"id": "e1", "text": ESSAY}, "upstream_receipts": [bundle]}

    with subprocess_server(env, ("up",)) as (_, url), httpx.Client(base_url=url,
                                                                    timeout=60) as http:
        for bundle in (json.loads(_altered(good.read_bytes())), json.loads(foreign.read_bytes())):
            r = http.post("/v1/campaigns/up/jobs", headers=alice, json=body(bundle))
            assert r.status_code == 422, r.text
            assert r.json()["field"] == "upstream_receipts[0]"
            assert r.json()["error"] == (f"upstream_receipts[0]: {NOT_TRUSTED}; the job was "
                                         "refused and nothing was sampled")
        r = http.post("/v1/campaigns/up/jobs", headers=alice, json=body(signed))
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        assert wait_decided(http, job, alice)["status"] == "decided"
        receipt = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
    bound = read_statement(receipt)["predicate"]["inputs"]["upstream_receipts"]
    assert [(b["name"], b["sha256"], b["stage"]) for b in bound] == [
        (UPSTREAM_PREDICATE_TYPE, payload_sha256(signed), "stage1")]


def test_upstream_verify_gives_the_campaigns_verdict(tmp_path: Path) -> None:
    _setup(tmp_path)
    receipt = tmp_path / "r.json"
    assert _sign(tmp_path, receipt).exit_code == 0
    pub, other = tmp_path / "stage1" / "jurat.pub", tmp_path / "other" / "jurat.pub"
    essay = str(tmp_path / "essay.txt")

    def verify(*args: str) -> Any:
        return invoke("upstream", "verify", str(receipt), *args)

    held = verify("--key", str(pub), "--stage", "stage1", "--artifact", essay)
    assert held.exit_code == 0 and held.stdout.startswith("verified: a stage1 receipt")
    assert payload_sha256(json.loads(receipt.read_bytes())) in held.stdout
    for args, reason in [
        (("--key", str(other), "--stage", "stage1", "--artifact", essay), NOT_TRUSTED),
        (("--key", str(pub), "--stage", "stage2", "--artifact", essay), "foreign stage"),
        (("--key", str(pub), "--stage", "stage1", "--artifact-digest",
          "sha256:" + sha256_digest("other bytes")), "it is about other bytes"),
    ]:
        refused = verify(*args)
        assert refused.exit_code == 1, refused.output
        assert refused.stdout.startswith("not verified: ") and reason in refused.stdout
    receipt.write_bytes(_altered(receipt.read_bytes()))
    altered = verify("--key", str(pub), "--stage", "stage1", "--artifact", essay)
    assert altered.exit_code == 1 and NOT_TRUSTED in altered.stdout
    missing = invoke("upstream", "verify", str(tmp_path / "nope.json"), "--key", str(pub),
                     "--stage", "stage1", "--artifact", essay)
    assert missing.exit_code == 3 and "cannot read upstream receipt" in missing.output


def test_jurat_verify_checks_the_signature_and_stops_at_step_4(tmp_path: Path) -> None:
    _setup(tmp_path)
    receipt = tmp_path / "r.json"
    assert _sign(tmp_path, receipt).exit_code == 0
    done = invoke("verify", str(receipt), "--key", str(tmp_path / "stage1" / "jurat.pub"))
    assert done.exit_code == 1, done.output
    lines = [" ".join(line.split()) for line in done.output.splitlines()]
    assert any(line.startswith("3. ok verify signature") for line in lines), done.output
    assert ("4. FAIL parse statement predicateType 'https://jurat.dev/upstream/v1' is not "
            "https://jurat.dev/decision/v1") in lines, done.output


def test_the_openssl_recipe_checks_its_signature(tmp_path: Path) -> None:
    if not shutil.which("jq") or not shutil.which("openssl"):
        pytest.fail("the recipe needs jq and openssl (make sysdeps)")
    _setup(tmp_path)
    receipt = tmp_path / "r.json"
    assert _sign(tmp_path, receipt).exit_code == 0
    doc = (REPO / "docs" / "receipt-format.md").read_text()
    recipe = re.search(r"```sh\n# verify-with-openssl\n(.*?)```", doc, re.S)
    assert recipe is not None
    (tmp_path / "verify.sh").write_text("set -eu\n" + recipe.group(1))
    shutil.copy(tmp_path / "stage1" / "jurat.pub", tmp_path / "jurat.pub")
    ok = subprocess.run(["bash", "verify.sh", str(receipt)], cwd=tmp_path, text=True,
                        capture_output=True, timeout=60)
    assert ok.returncode == 0 and "Verified OK" in ok.stdout, ok.stdout + ok.stderr
    receipt.write_bytes(_altered(receipt.read_bytes()))
    ko = subprocess.run(["bash", "verify.sh", str(receipt)], cwd=tmp_path, text=True,
                        capture_output=True, timeout=60)
    assert ko.returncode != 0


def test_the_documented_commands_run_as_written(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "campaign-format.md").read_text()
    block = re.search(r"```sh\n(jurat keygen --out keys/stage1.*?)```", doc, re.S)
    assert block is not None, "the example of `jurat upstream sign` is missing"
    (tmp_path / "contributions").mkdir()
    (tmp_path / "receipts").mkdir()
    (tmp_path / "contributions" / "c1.py").write_text("def fizzbuzz(n):\n    return n\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.group(1)], cwd=tmp_path,
                          env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified: a stage1 receipt" in done.stdout
    predicate = read_statement((tmp_path / "receipts" / "c1.stage1.json").read_bytes())[
        "predicate"]
    assert (predicate["campaign"], predicate["checks"]) == ("fizzbuzz-review",
                                                            ["parse", "lint"])
