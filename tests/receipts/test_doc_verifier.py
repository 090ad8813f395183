"""Receipts of all four kinds re-derive, field by field, with a verifier written from
docs/receipt-format.md alone (``doc_verifier``), and jurat agrees with the document on
inputs it never produced.

1. Campaigns run through the CLI (``python -m jurat run``) into a temporary directory: the
   quickstart ones (rubric, criteria, equivalence, dataset), a pairwise one, and a few
   "edge" campaigns that reach what the quickstart does not (errored and unparsable
   samples, even sample counts, non-substantive judges, a veto with and without judges,
   unstable blockers, abstentions counted as "different"). Every receipt passes steps 1-7
   of the document's verifier, and every inclusion proof §12.3's check.
2. Mutants: recorded inputs (votes, gates, policy) of those receipts changed at random,
   the decision re-derived by the document's rules, re-signed as §2-§5 describe, and
   handed to ``jurat verify``. jurat must accept every one (and refuse, at step 6, exactly
   those the document says the fold refuses): the document states what jurat computes on
   sample-index gaps, missing and extra samples, errors, vetoes, ties and bounds, not only
   on what the quickstart happens to produce.
3. Grounding and adjudication: the grounding example's receipts re-derive from §8.10's
   words (with cases jurat never produced: a three-way tie, nothing applicable), and a
   review `jurat adjudicate` made, with the proof it wrote, passes §8.9, §12.1 and §12.3.

Nothing here imports jurat: it runs as a separate process, as it would for an outsider.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.receipts.doc_verifier import (
    PROMPT_DERIVED_FROM,
    DocVerifyError,
    FoldRefused,
    canonical,
    check_entry_binding,
    check_inclusion,
    derive,
    derive_decision,
    expected_judges_skipped,
    key_hint,
    pae,
    sha256_hex,
    verify_receipt,
)

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"

PAIRWISE = """\
[campaign]
id = "doc-pairwise"
kind = "pairwise"
allowed_destinations = ["sim"]

[rubric]
version = "pw/1"
threshold = 0.5
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "a"
provider = "sim"
reliability = 0.95
seed = 1
samples = 6

[[judges]]
id = "b"
provider = "sim"
reliability = 0.9
seed = 2
samples = 5

[[judges]]
id = "c"
provider = "sim"
reliability = 0.8
seed = 3
samples = 6

[[artifacts]]
id = "p1"
a = "Paris is the capital of France."
b = "Lyon is the capital of France."
truth = "A"

[[artifacts]]
id = "p2"
a = "2 + 2 = 5"
b = "2 + 2 = 4"
truth = "B"

[[artifacts]]
id = "p3"
a = "Seven."
b = "7."
truth = "tie"
"""

EDGE_RUBRIC = """\
[campaign]
id = "edge-rubric"
kind = "rubric"
allowed_destinations = ["sim", "stub"]
risk_tier = { votes = 3, min_agreement = 0.6666666666666666 }
min_valid_fraction = 0.6

[rubric]
version = "edge/1"
threshold = 0.8
criteria = [
  { id = "correctness", weight = 0.45, minimum = 4 },
  { id = "reasoning", weight = 0.3 },
  { id = "presentation", weight = 0.25 },
]

[[judges]]
id = "noisy"
provider = "sim"
reliability = 0.6
error_rate = 0.2
malformed_rate = 0.2
retries = 0
seed = 5
samples = 4

[[judges]]
id = "steady"
provider = "sim"
reliability = 0.7
seed = 6
samples = 3

[[judges]]
id = "grump"
provider = "stub:always-reject"
samples = 2

[[judges]]
id = "broken"
provider = "stub:parse-error"
samples = 2

[[artifacts]]
id = "t1"
text = "def f(x): return x + 1"
truth = "accept"

[[artifacts]]
id = "t2"
text = "def f(x): return x - 1"
truth = "reject"

[[artifacts]]
id = "t3"
text = "print('hello')"
truth = "accept"

[[artifacts]]
id = "t4"
text = "lambda: None"
truth = "reject"
"""

EDGE_PAIRWISE = """\
[campaign]
id = "edge-pairwise"
kind = "pairwise"
allowed_destinations = ["sim", "stub"]
risk_tier = { votes = 2, min_agreement = 0.5 }

[rubric]
version = "pw-edge/1"
threshold = 0.5
hard_gates = ["tests.pass"]
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "a"
provider = "sim"
reliability = 0.55
error_rate = 0.25
retries = 0
seed = 7
samples = 4

[[judges]]
id = "b"
provider = "sim"
reliability = 0.6
malformed_rate = 0.3
seed = 8
samples = 5

[[judges]]
id = "c"
provider = "stub:parse-error"
samples = 2

[[artifacts]]
id = "q1"
a = "Water boils at 100 C at sea level."
b = "Water boils at 90 C at sea level."
truth = "A"

[[artifacts]]
id = "q2"
a = "The sum of 2 and 3 is 6."
b = "The sum of 2 and 3 is 5."
truth = "B"

[[artifacts]]
id = "q3"
a = "Seven."
b = "7."
truth = "tie"
"""

EDGE_CRITERIA = """\
[campaign]
id = "edge-criteria"
kind = "criteria"
allowed_destinations = ["sim", "stub"]

[criteria]
samples = 1
blocker_samples = 3
blocker_quorum = 0.7
items = [
  { id = "final", text = "Does it end with one final answer?", blocker = true },
  { id = "polite", text = "Is it polite?" },
]

[[judges]]
id = "noisy"
provider = "sim"
reliability = 0.6
error_rate = 0.5
retries = 0
seed = 12

[[judges]]
id = "naysayer"
provider = "stub:always-no"

[[artifacts]]
id = "k1"
text = "The answer is 4."
truth = { final = "yes", polite = "yes" }

[[artifacts]]
id = "k2"
text = "Whatever."
truth = { final = "no", polite = "no" }
"""

EDGE_EQUIVALENCE = """\
[campaign]
id = "edge-equivalence"
kind = "equivalence"
allowed_destinations = ["sim", "stub"]

[equivalence]
votes = 3
min_agreement = 2
abstain_as_neither = false
deterministic_first = false

[[judges]]
id = "abstainer"
provider = "stub:always-abstain"

[[judges]]
id = "broken"
provider = "stub:parse-error"

[[judges]]
id = "sim"
provider = "sim"
reliability = 0.7
seed = 4

[[artifacts]]
id = "e1"
a = "two hundred"
b = "The answer is 200."
truth = "EQUIVALENT"

[[artifacts]]
id = "e2"
a = "It is 12."
b = "It is 13."
truth = "DIFFERENT"
"""


@dataclass
class Campaign:
    """One campaign run: its receipts directory and its ledger's checkpoint file."""

    name: str
    out: Path
    checkpoint: Path
    artifacts: int


@dataclass
class Runs:
    root: Path
    key: Path
    pub: Path
    log_pub: Path
    campaigns: list[Campaign]

    def receipts(self) -> list[tuple[Campaign, Path]]:
        return [(c, p) for c in self.campaigns for p in sorted(c.out.glob("*.sigstore.json"))]


def _jurat(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(cwd / ".config")}
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, env=env)


def _artifact_count(toml: str, campaign_dir: Path) -> int:
    count = sum(1 for line in toml.splitlines() if line.strip() == "[[artifacts]]")
    for m in re.finditer(r'path = "([^"]+\.jsonl)"', toml):
        count += len((campaign_dir / m.group(1)).read_text(encoding="utf-8").splitlines())
    return count


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("doc-verifier")
    r = _jurat("keygen", "--out", str(root / "keys"), cwd=root)
    assert r.returncode == 0, r.stderr
    sources: list[tuple[str, Path]] = []
    for name in ("rubric", "criteria", "equivalence", "dataset"):
        if (QUICKSTART / name / "campaign.toml").exists():
            shutil.copytree(QUICKSTART / name, root / name)
            sources.append((name, root / name / "campaign.toml"))
    # The quickstart rubric again, with judges asked about vetoed artifacts too (§6.4.1).
    shutil.copytree(QUICKSTART / "rubric", root / "rubric-veto")
    veto = root / "rubric-veto" / "campaign.toml"
    text = veto.read_text(encoding="utf-8")
    veto.write_text(text.replace('kind = "rubric"\n', 'kind = "rubric"\njudge_after_veto = true\n',
                                 1).replace('id = "quickstart-rubric"', 'id = "rubric-veto"', 1),
                    encoding="utf-8")
    sources.append(("rubric-veto", veto))
    # jurat.fold/v2: the quickstart criteria drawn with curtailment (§8.5), and the
    # quickstart rubric with its three judges declared one model family (§8.7 case 1a).
    for name, source, old, new in (
        ("criteria-curtailed", "criteria", "blocker_quorum = 0.8\n",
         "blocker_quorum = 0.8\ncurtail = true\n"),
        ("rubric-one-family", "rubric", 'provider = "sim"\n',
         'provider = "sim"\nmodel_family = "one"\n'),
    ):
        if (QUICKSTART / source / "campaign.toml").exists():
            shutil.copytree(QUICKSTART / source, root / name)
            path = root / name / "campaign.toml"
            text = path.read_text(encoding="utf-8").replace(old, new).replace(
                f'id = "quickstart-{source}"', f'id = "{name}"', 1)
            path.write_text(text, encoding="utf-8")
            sources.append((name, path))
    # Grounding (§8.10): the example campaign the grounding tests run, whose two answers
    # pass and fail the thresholds (every sentence of rule 5 fires for one of them).
    shutil.copytree(REPO / "examples" / "grounding", root / "grounding")
    sources.append(("grounding", root / "grounding" / "campaign.toml"))
    for name, toml in (("pairwise", PAIRWISE), ("edge-rubric", EDGE_RUBRIC),
                       ("edge-pairwise", EDGE_PAIRWISE), ("edge-criteria", EDGE_CRITERIA),
                       ("edge-equivalence", EDGE_EQUIVALENCE)):
        (root / name).mkdir()
        (root / name / "campaign.toml").write_text(toml, encoding="utf-8")
        sources.append((name, root / name / "campaign.toml"))
    campaigns = []
    for name, toml_path in sources:
        db = root / f"{name}.db"  # one ledger per campaign: its proofs meet its checkpoint
        r = _jurat("run", str(toml_path), "--out", str(root / "out" / name), "--ledger",
                   f"sqlite:///{db}", "--key", str(root / "keys" / "jurat.key"), "--quiet",
                   cwd=root)
        assert r.returncode in (0, 1, 2), f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}"
        campaigns.append(Campaign(
            name, root / "out" / name, Path(f"{db}.checkpoint"),
            _artifact_count(toml_path.read_text(encoding="utf-8"), toml_path.parent)))
    return Runs(root, root / "keys" / "jurat.key", root / "keys" / "jurat.pub",
                root / "keys" / "jurat-log.pub", campaigns)


def _statement(receipt: bytes) -> dict[str, Any]:
    statement: dict[str, Any] = json.loads(
        base64.b64decode(json.loads(receipt)["dsseEnvelope"]["payload"]))
    return statement


# -- 1. every receipt of every campaign ----------------------------------------------------


def test_every_receipt_rederives_field_by_field(runs: Runs) -> None:
    pub = runs.pub.read_bytes()
    kinds: Counter[str] = Counter()
    failures = []
    for campaign in runs.campaigns:
        receipts = sorted(campaign.out.glob("*.sigstore.json"))
        assert len(receipts) == campaign.artifacts, campaign.name
        for path in receipts:
            try:
                verified = verify_receipt(path.read_bytes(), pub)
            except DocVerifyError as exc:
                failures.append(f"{campaign.name}/{path.name}: {exc}")
                continue
            assert len(verified.compared) == 23
            kinds[verified.derived["kind"]] += 1
    assert not failures, "\n".join(failures)
    assert set(kinds) == {"rubric", "pairwise", "criteria", "equivalence"}, kinds
    assert sum(kinds.values()) == sum(c.artifacts for c in runs.campaigns)


def test_the_runs_reach_the_rules_the_doc_describes(runs: Runs) -> None:
    """The receipts above are not all alike: they reach the cases §6.4.1 and §8 single out."""
    seen: Counter[str] = Counter()
    for _campaign, path in runs.receipts():
        pred = _statement(path.read_bytes())["predicate"]
        d, votes = pred["decision"], pred["votes"]
        skipped = pred["inputs"].get("judges_skipped")
        if d["kind"] == "equivalence" and skipped:
            # §6.8: settled deterministically: no judge counted, not the panel size.
            assert d["independent_votes"] == 0 and d["samples"] == 0 and votes == []
            seen["equivalence settled deterministically"] += 1
        if d["kind"] == "equivalence" and votes:
            seen["equivalence judged"] += 1
            if d["label"] in ("ABSTAIN", "PARSE_ERROR") and d["equivalent"] is not None:
                seen["equivalence label is the most frequent raw decision"] += 1
        if d["kind"] == "criteria":
            quorum = pred["campaign"]["policy"]["criteria"]["blocker_quorum"]
            assert d["stability"]["min_blocker_agreement"] == quorum  # the quorum, §8.5
            labels = [s for c in d["criteria"] for s in c["sample_verdicts"]]
            seen["criteria errored slot"] += any(s.startswith("error:") for s in labels)
            seen["criteria unstable blocker"] += d["stability"]["unstable_blocker_failures"]
        if d["kind"] in ("rubric", "pairwise", "criteria") and d["gates_failed"]:
            if skipped:
                assert votes == [] and d["label"] is None and d["q"] is None
                seen["veto, judges skipped"] += 1
            elif votes:
                seen["veto, judges asked"] += 1
                if d["kind"] == "rubric" and pred["campaign"]["policy"].get("judge_after_veto"):
                    assert d["label"] is not None and d["q_bp"] is not None  # §8.2
        if d["kind"] == "rubric" and d["independent_votes"] < len(pred["judges"]):
            seen["rubric non-substantive judge"] += 1
        if d["kind"] == "pairwise" and any(v["order"] == "BA" for v in votes):
            seen["pairwise BA order"] += 1
        if d["kind"] == "criteria" and any("drawn" in c for c in d["criteria"]):
            assert d["curtailment"]["drawn"] == len(votes) < d["curtailment"]["planned"]
            seen["criteria curtailed"] += 1
        if d.get("independent_families") == 1 and d["independent_votes"] == 3:
            assert d["disposition"] in ("escalate", "reject")
            seen["one model family"] += 1
    wanted = {
        "equivalence settled deterministically", "equivalence judged",
        "equivalence label is the most frequent raw decision", "criteria errored slot",
        "criteria unstable blocker", "veto, judges skipped", "veto, judges asked",
        "rubric non-substantive judge", "pairwise BA order", "criteria curtailed",
        "one model family",
    }
    assert wanted <= {k for k, v in seen.items() if v}, seen


def test_inclusion_proofs_check_against_each_checkpoint(runs: Runs) -> None:
    log_key = runs.log_pub.read_text(encoding="utf-8")
    checked = 0
    for campaign, path in runs.receipts():
        proof = Path(f"{path}.proof.json")
        seq = check_inclusion(path.read_bytes(), proof.read_bytes(),
                              campaign.checkpoint.read_text(encoding="utf-8"), log_key)
        assert seq >= 0
        checked += 1
    assert checked == sum(c.artifacts for c in runs.campaigns)
    # jurat's step 8 agrees on one of them.
    campaign, path = runs.receipts()[0]
    r = _jurat("verify", str(path), "--key", str(runs.pub), "--checkpoint",
               str(campaign.checkpoint), "--log-key", str(runs.log_pub), cwd=runs.root)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_proof_for_another_receipt_or_checkpoint_fails(runs: Runs) -> None:
    log_key = runs.log_pub.read_text(encoding="utf-8")
    campaign = next(c for c in runs.campaigns if c.name == "equivalence")
    first, second = sorted(campaign.out.glob("*.sigstore.json"))[:2]
    checkpoint = campaign.checkpoint.read_text(encoding="utf-8")
    with pytest.raises(DocVerifyError, match="not this receipt"):
        check_inclusion(second.read_bytes(), Path(f"{first}.proof.json").read_bytes(),
                        checkpoint, log_key)
    other = next(c for c in runs.campaigns if c.name == "criteria")
    with pytest.raises(DocVerifyError, match="another checkpoint"):
        check_inclusion(first.read_bytes(), Path(f"{first}.proof.json").read_bytes(),
                        other.checkpoint.read_text(encoding="utf-8"), log_key)
    lines = checkpoint.split("\n")
    lines[1] = str(int(lines[1]) + 1)  # the size changed: the signature no longer covers it
    with pytest.raises(DocVerifyError, match="does not verify"):
        check_inclusion(first.read_bytes(), Path(f"{first}.proof.json").read_bytes(),
                        "\n".join(lines), log_key)


# -- 2. signing per §2-§5, and mutants jurat must agree on ---------------------------------


def _sign(statement: dict[str, Any], key: ec.EllipticCurvePrivateKey) -> bytes:
    """A receipt as §2-§5 describe it: canonical payload, ECDSA P-256 over PAE, bundle."""
    payload = canonical(statement)
    sig = key.sign(pae("application/vnd.in-toto+json", payload), ec.ECDSA(hashes.SHA256()))
    hint = key_hint(key.public_key())
    bundle = {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"publicKey": {"hint": hint}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": base64.b64encode(sig).decode(), "keyid": hint}],
        },
    }
    return canonical(bundle)


def _private_key(runs: Runs) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(runs.key.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def _refresh_derived(pred: dict[str, Any]) -> None:
    """Re-derive what §6 and §7 derive from the policy, after an edit of the inputs."""
    policy = pred["campaign"]["policy"]
    pred["campaign"]["policy_sha256"] = sha256_hex(canonical(policy))
    for part, judge in zip(pred["judges"], policy["judges"], strict=True):
        part["config_sha256"] = sha256_hex(canonical(judge))
        ids = sorted({v["prompt_id"] for v in pred["votes"]
                      if v["judge"] == judge["id"] and v["prompt_id"]})
        part["prompt_id"] = ids[0] if len(ids) == 1 else None
        part.pop("prompt_derived_from", None)
        if part["prompt_id"] in PROMPT_DERIVED_FROM:
            part["prompt_derived_from"] = PROMPT_DERIVED_FROM[part["prompt_id"]]
    skipped = expected_judges_skipped(policy, pred["gates"])
    pred["inputs"].pop("judges_skipped", None)
    if skipped is not None:
        pred["inputs"]["judges_skipped"] = skipped


def _answer(policy: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random answer of the kind's shape (§6.7), now and then one the fold cannot use."""
    kind = policy["kind"]
    if kind == "rubric":
        crits = [c["id"] for c in policy["rubric"]["criteria"]]
        return {"scores": {c: rng.choice([1, 2, 3, 4, 5, 5, 4.5, 2.5]) for c in crits}}
    if kind == "pairwise":
        return {"preference": rng.choice(["A", "A", "B", "tie", "abstain", "maybe"])}
    if kind == "criteria":
        return {"verdict": rng.choice(["yes", "no", "no", "unsure"])}
    return {"decision": rng.choice(["EQUIVALENT", "DIFFERENT", "DIFFERENT", "ABSTAIN", "UNSURE"])}


def _keys(policy: dict[str, Any]) -> list[tuple[str, int]]:
    """(criterion key, N) pairs of one judge (§8.1)."""
    kind = policy["kind"]
    if kind == "criteria":
        suite = policy["criteria"]
        return [(i["id"], suite["blocker_samples"] if i["blocker"] else suite["samples"])
                for i in suite["items"]]
    if kind == "equivalence":
        return [("equivalence", (policy["equivalence"] or {"votes": 1})["votes"])]
    return [(kind, 0)]  # N is the judge's own samples


def _vote(judge: str, key: str, sample: int, answer: dict[str, Any] | None, *,
          error: str | None = None, order: str | None = None) -> dict[str, Any]:
    """A vote with every §6.7 field."""
    return {
        "judge": judge, "criterion": key, "sample": sample, "attempts": 1, "order": order,
        "answer": answer, "error": error, "returned_model": None, "system_fingerprint": None,
        "usage": {}, "dispatch_ms": 0, "latency_ms": 0, "prompt_id": "doc-test@1",
    }


def _synthesize(pred: dict[str, Any], rng: random.Random) -> None:
    """Votes for every judge, as if the judges had been asked (random answers, some errors)."""
    policy = pred["campaign"]["policy"]
    votes = []
    for judge in policy["judges"]:
        for key, n in _keys(policy):
            for k in range(n or judge["samples"]):
                error = rng.random() < 0.15
                votes.append(_vote(
                    judge["id"], key, k, None if error else _answer(policy, rng),
                    error="timeout" if error else None,
                    order=rng.choice(["AB", "BA"]) if policy["kind"] == "pairwise" else None))
    rng.shuffle(votes)  # dispatch order is not the fold's order (§6.7)
    pred["votes"] = votes


def _mutate(pred: dict[str, Any], rng: random.Random) -> str:
    """One random edit of the recorded inputs; returns what it did."""
    policy, votes, gates = pred["campaign"]["policy"], pred["votes"], pred["gates"]
    kind = policy["kind"]
    choices = ["policy", "synthesize"] + (["gates"] if kind != "equivalence" or gates else [])
    if votes:
        choices += ["drop", "error", "empty", "renumber", "answer", "answer", "order", "scramble"]
    if kind == "equivalence" and gates:
        choices += ["unsettle", "unsettle"]
    if kind == "equivalence" and policy["judges"] and rng.random() < 0.05:
        choices = ["no judges"]
    if kind in ("rubric", "pairwise") and rng.random() < 0.1:
        choices = ["add a judge"]
    what = rng.choice(choices)
    if what == "synthesize":
        _synthesize(pred, rng)
    elif what == "add a judge":  # a fourth or fifth judge: even panels, ties, plurality
        judge = {**rng.choice(policy["judges"]), "id": f"extra-{len(policy['judges'])}"}
        policy["judges"].append(judge)
        pred["judges"].append({**pred["judges"][0], "id": judge["id"],
                               "provider": judge["provider"], "model": judge["model"],
                               "decoding": {k: judge[k] for k in (
                                   "temperature", "max_tokens", "seed", "structured_output")}})
        _synthesize(pred, rng)
    elif what == "unsettle":  # the deterministic pass left it to the judges
        for g in gates:
            if g["id"] == "equivalence.deterministic":
                g["outcome"] = rng.choice(["skip", "error"])
        if not votes:
            _synthesize(pred, rng)
    elif what == "no judges":
        policy["judges"], pred["judges"], pred["votes"] = [], [], []
    elif what == "scramble":
        for v in votes:
            v["answer"], v["error"] = _answer(policy, rng), None
    elif what == "drop":
        del votes[rng.randrange(len(votes))]
    elif what == "error":
        v = rng.choice(votes)
        v["error"], v["answer"] = rng.choice(["timeout", "malformed_json", "http_5xx"]), None
    elif what == "empty":
        v = rng.choice(votes)
        v["error"], v["answer"] = None, None
    elif what == "renumber":
        v = rng.choice(votes)
        v["sample"] = rng.randrange(0, 14)  # gaps, indices past N, or a repeat (refused)
    elif what == "order":
        v = rng.choice(votes)
        v["order"] = {"AB": "BA", "BA": "AB"}.get(v["order"] or "", rng.choice(["AB", "BA", None]))
    elif what == "answer":
        v = rng.choice(votes)
        v["answer"], v["error"] = {**(v["answer"] or {}), **_answer(policy, rng)}, None
    elif what == "gates":
        ids = ["tests.pass", "python.parse", "lint.ruff", "equivalence.deterministic"]
        if gates and rng.random() < 0.6:
            g = rng.choice(gates)
            if rng.random() < 0.5:
                g["outcome"] = rng.choice(["pass", "fail", "error", "skip"])
            else:
                g["required"] = not g["required"]
        else:
            gates.append({"id": rng.choice(ids), "outcome": rng.choice(["pass", "fail", "error"]),
                          "required": rng.random() < 0.7, "tool": "doc-test",
                          "tool_version": "1", "evidence_index": None,
                          "detail": rng.choice(["", "2 failed"]), "data": {}})
    else:
        what = _mutate_policy(policy, rng)
    return what


def _mutate_policy(policy: dict[str, Any], rng: random.Random) -> str:
    kind = policy["kind"]
    edits = ["min_valid_fraction"] + (["judge_samples"] if policy["judges"] else [])
    if kind in ("rubric", "pairwise"):
        edits += ["tier", "tier", "hard_gates"]
    if kind == "rubric":
        edits += ["threshold", "minimum"]
    if kind == "criteria":
        edits += ["quorum", "criteria_samples"]
    if kind == "equivalence":
        edits += ["equivalence", "equivalence"]
    edit = rng.choice(edits)
    if edit == "min_valid_fraction":
        policy["min_valid_fraction"] = rng.choice([0.25, 0.5, 0.6, 0.75, 1.0])
    elif edit == "judge_samples":
        rng.choice(policy["judges"])["samples"] = rng.randrange(1, 8)
    elif edit == "tier":
        tier = policy["risk_tier"]
        tier["votes"] = rng.randrange(1, 5)
        tier["min_agreement"] = rng.choice([0.5, 0.6, 0.6666666666666666, 0.8, 1.0])
        tier["adjudication"] = rng.random() < 0.2
    elif edit == "hard_gates":
        policy["rubric"]["hard_gates"] = rng.choice(
            [[], ["tests.pass"], ["python.parse", "tests.pass"], ["lint.ruff"]])
    elif edit == "threshold":
        policy["rubric"]["threshold"] = rng.choice([0.0, 0.5, 0.56875, 0.75, 0.9, 1.0])
    elif edit == "minimum":
        c = rng.choice(policy["rubric"]["criteria"])
        c["minimum"] = rng.choice([None, 2, 3, 4, 5])
    elif edit == "quorum":
        policy["criteria"]["blocker_quorum"] = rng.choice([0.5, 0.6, 0.7, 0.8, 1.0])
    elif edit == "criteria_samples":
        suite = policy["criteria"]
        suite["samples"], suite["blocker_samples"] = rng.randrange(1, 6), rng.randrange(1, 12)
    else:
        settings = policy["equivalence"]
        settings["votes"] = rng.randrange(1, 7)
        settings["min_agreement"] = rng.randrange(1, settings["votes"] + 1)
        settings["abstain_as_neither"] = rng.random() < 0.5
    return f"policy.{edit}"


def _verify_dir(runs: Runs, directory: Path) -> dict[str, str]:
    """``jurat verify DIR``: each receipt's line, by file name."""
    r = _jurat("verify", str(directory), "--key", str(runs.pub), cwd=runs.root)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    lines: dict[str, str] = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(not )?verified: (\S+\.sigstore\.json): (.*)", line)
        if m:
            lines[Path(m.group(2)).name] = ("FAIL " if m.group(1) else "OK ") + m.group(3)
    return lines


MUTANTS_PER_RECEIPT = int(os.environ.get("DOC_MUTANTS", "4"))


def test_jurat_accepts_what_the_doc_derives_on_mutated_inputs(runs: Runs, tmp_path: Path) -> None:
    key = _private_key(runs)
    rng = random.Random(int(os.environ.get("DOC_MUTANT_SEED", "20261130")))
    out = tmp_path / "mutants"
    out.mkdir()
    expect: dict[str, tuple[bool, str]] = {}
    fields_changed: Counter[str] = Counter()
    for campaign, path in runs.receipts():
        original = _statement(path.read_bytes())
        for i in range(MUTANTS_PER_RECEIPT):
            statement = copy.deepcopy(original)
            pred = statement["predicate"]
            done = [_mutate(pred, rng) for _ in range(rng.randrange(1, 4))]
            _refresh_derived(pred)
            try:
                derived = derive(pred)  # grounded receipts' grounding included (§8.10)
            except FoldRefused:
                derived = None
            if derived is not None:
                fields_changed.update(k for k in derived if derived[k] != pred["decision"][k])
                pred["decision"] = derived
            name = f"{campaign.name}-{path.name.removesuffix('.sigstore.json')}-{i}.sigstore.json"
            receipt = _sign(statement, key)
            (out / name).write_bytes(receipt)
            expect[name] = (derived is not None, ", ".join(done))
            if derived is not None:  # the document's own verifier accepts its signing
                verify_receipt(receipt, runs.pub.read_bytes())
    lines = _verify_dir(runs, out)
    disagreements = []
    for name, (derivable, edits) in sorted(expect.items()):
        line = lines.get(name, "missing from jurat verify's output")
        if derivable and not line.startswith("OK"):
            disagreements.append(f"{name} ({edits}): the doc derives it, jurat says {line}")
        if not derivable and not line.startswith("FAIL step 6"):
            disagreements.append(f"{name} ({edits}): the doc refuses it, jurat says {line}")
    assert not disagreements, "\n".join(disagreements[:20])
    refused = sum(1 for ok, _ in expect.values() if not ok)
    assert 0 < refused < len(expect) / 4  # some duplicate sample indices, mostly derivable
    # The mutants moved the decisive fields, not only the prose.
    assert {"disposition", "rollout", "equivalent", "label", "q_bp", "agreement_votes",
            "independent_votes", "missing", "samples", "valid_samples", "criteria",
            "gates_failed", "reasons"} <= set(fields_changed), fields_changed


def test_a_decision_field_changed_and_resigned_fails_step_7(runs: Runs, tmp_path: Path) -> None:
    """The verifier compares, it does not echo: one field changed, validly signed, is caught
    by the document's verifier and by jurat's (§7 step 7)."""
    key = _private_key(runs)
    campaign = next(c for c in runs.campaigns if c.name == "criteria")
    path = sorted(campaign.out.glob("*.sigstore.json"))[0]
    statement = _statement(path.read_bytes())
    decision = statement["predicate"]["decision"]
    # What issue 11's outside engineer expected the field to hold: the lowest measured
    # blocker agreement. The receipt records the quorum (§8.5).
    lowest = min(c["agreement"] for c in decision["criteria"] if c["blocker"])
    decision["stability"]["min_blocker_agreement"] = lowest - 0.01
    receipt = _sign(statement, key)
    with pytest.raises(DocVerifyError, match=r"step 7: .*decision\.stability"):
        verify_receipt(receipt, runs.pub.read_bytes())
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(receipt)
    r = _jurat("verify", str(bad), "--key", str(runs.pub), cwd=runs.root)
    assert r.returncode == 1 and "step 7" in r.stdout + r.stderr, r.stdout + r.stderr


def test_unsigned_bytes_are_refused_before_the_fold(runs: Runs) -> None:
    campaign = next(c for c in runs.campaigns if c.name == "rubric")
    receipt = sorted(campaign.out.glob("*.sigstore.json"))[0].read_bytes()
    bundle = json.loads(receipt)
    payload = bytearray(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    at = payload.index(b'"q_bp":') + len(b'"q_bp":')
    payload[at] = ord("1") if payload[at] != ord("1") else ord("2")
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    with pytest.raises(DocVerifyError, match="step 3"):
        verify_receipt(json.dumps(bundle).encode(), runs.pub.read_bytes())
    # Reordered and re-indented outer JSON still verifies (§1): only PAE is signed.
    loose = json.dumps(json.loads(receipt), indent=3, sort_keys=False).encode()
    assert hashlib.sha256(loose).hexdigest() != hashlib.sha256(receipt).hexdigest()
    verify_receipt(loose, runs.pub.read_bytes())


# -- 3. the document's worked cases, signed and handed to jurat ----------------------------


def _base(runs: Runs, campaign: str, artifact: str) -> dict[str, Any]:
    c = next(c for c in runs.campaigns if c.name == campaign)
    return _statement((c.out / f"{artifact}.sigstore.json").read_bytes())


def _rubric_votes(pred: dict[str, Any], scores: dict[str, Any]) -> None:
    pred["votes"] = [_vote(j["id"], "rubric", k, {"scores": dict(scores)})
                     for j in pred["campaign"]["policy"]["judges"] for k in range(j["samples"])]


def _case_rounding(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.3 and §8.8: Q = 1/32 is written 0.0312 (%.4f, ties to even on the double) while
    q_bp rounds half up (312.5 -> 313); the threshold 1 is written 1.0."""
    st = _base(runs, "edge-rubric", "t1")
    pred = st["predicate"]
    rubric = pred["campaign"]["policy"]["rubric"]
    rubric["threshold"] = 1.0
    for c in rubric["criteria"]:
        c["minimum"] = None
    _rubric_votes(pred, {c["id"]: 1.125 for c in rubric["criteria"]})
    return st, {"q_bp": 313, "label": "reject", "disposition": "reject",
                "reasons": ["Q 0.0312 below threshold 1.0"], "independent_votes": 4}


def _case_half_up(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.3: q_bp = floor(Q·10000 + 1/2) exactly: Q = 0.00005 is 1 basis point, not 0."""
    st = _base(runs, "edge-rubric", "t1")
    pred = st["predicate"]
    rubric = pred["campaign"]["policy"]["rubric"]
    rubric["criteria"] = [
        {**rubric["criteria"][0], "weight": 0.9998, "minimum": None},
        {**rubric["criteria"][1], "weight": 0.0002, "minimum": None},
    ]
    _rubric_votes(pred, {"correctness": 1, "reasoning": 2})
    return st, {"q_bp": 1, "q": 0.00005}


def _case_tier_share(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.7 step 3 and §8.8 %.4g: 2 of 3 judges do not meet 0.7."""
    st = _base(runs, "rubric", "c1-canonical")
    pred = st["predicate"]
    policy = pred["campaign"]["policy"]
    policy["risk_tier"] = {"name": "declared", "votes": 3, "min_agreement": 0.7,
                           "adjudication": False}
    top = {c["id"]: 5 for c in policy["rubric"]["criteria"]}
    low = {c["id"]: 1 for c in policy["rubric"]["criteria"]}
    _rubric_votes(pred, top)
    for v in pred["votes"]:
        if v["judge"] == policy["judges"][2]["id"]:
            v["answer"] = {"scores": dict(low)}
    return st, {"disposition": "escalate", "label": "accept", "agreement_votes": "2/3",
                "reasons": ["agreement 2/3 below the tier minimum 0.7"]}


def _case_gaps(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.1: a gap is not a slot in the middle, an index past N is kept. Judge 1 has samples
    {0, 3} of N = 5 (2 of 5 valid: not substantive at 0.5); judge 2 has {0, ..., 6} (7
    slots); judge 3 has 5 of its 5."""
    st = _base(runs, "rubric", "c1-canonical")
    pred = st["predicate"]
    policy = pred["campaign"]["policy"]
    scores = {c["id"]: 5 for c in policy["rubric"]["criteria"]}
    j1, j2, j3 = (j["id"] for j in policy["judges"])
    pred["votes"] = (
        [_vote(j1, "rubric", k, {"scores": scores}) for k in (3, 0)]
        + [_vote(j2, "rubric", k, {"scores": scores}) for k in range(7)]
        + [_vote(j3, "rubric", k, {"scores": scores}) for k in range(5)]
    )
    return st, {"samples": 5 + 7 + 5, "valid_samples": 14, "independent_votes": 2,
                "missing": 1, "disposition": "escalate",
                "reasons": ["too few independent votes: 2 of 3 required"]}


def _case_no_strict_majority(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.4: four judges A, A, B, tie at min_agreement 0.5: the tier rule accepts 2/4, but
    there is no strict majority, so it escalates."""
    st = _base(runs, "pairwise", "p1")
    pred = st["predicate"]
    policy = pred["campaign"]["policy"]
    judge = {**policy["judges"][0], "id": "d"}
    policy["judges"].append(judge)
    pred["judges"].append({**pred["judges"][0], "id": "d"})
    policy["risk_tier"] = {"name": "declared", "votes": 2, "min_agreement": 0.5,
                           "adjudication": False}
    prefs = {"a": "A", "b": "A", "c": "B", "d": "tie"}
    pred["votes"] = [
        _vote(j["id"], "pairwise", k, {"preference": prefs[j["id"]]}, order="AB")
        for j in policy["judges"] for k in range(j["samples"])
    ]
    return st, {"disposition": "escalate", "label": None, "agreement_votes": "2/4",
                "reasons": ["no strict majority among A, B and tie"], "missing": 0}


def _case_unstable_blocker(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.5's example: 7 of 11 "no" on a blocker does not meet the quorum 0.8: warn, and
    stability.min_blocker_agreement still records the quorum."""
    st = _base(runs, "criteria", "gsm8k-0-175b-verification")
    pred = st["predicate"]
    policy = pred["campaign"]["policy"]
    votes = []
    for j in policy["judges"]:
        for item in policy["criteria"]["items"]:
            n = policy["criteria"]["blocker_samples"] if item["blocker"] else policy[
                "criteria"]["samples"]
            for k in range(n):
                verdict = "yes"
                if j is policy["judges"][0] and item["id"] == "correct":
                    verdict = "no" if k < 7 else "yes"
                votes.append(_vote(j["id"], item["id"], k, {"verdict": verdict}))
    pred["votes"] = votes
    judge = policy["judges"][0]["id"]
    return st, {"rollout": "WARN", "reasons": [f"{judge}/correct: warn (no, 7/11)"],
                "stability": {"min_blocker_agreement": 0.8, "unstable_blocker_failures": 1}}


def _case_equivalence_label(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.6 step 4's example: 3 ABSTAIN and 2 EQUIVALENT at min_agreement 2 (abstain as
    neither): equivalent, with label ABSTAIN, the most frequent raw decision."""
    st = _base(runs, "equivalence", "pair-12")
    pred = st["predicate"]
    policy = pred["campaign"]["policy"]
    policy["equivalence"].update(votes=5, min_agreement=2, abstain_as_neither=True)
    judge = policy["judges"][0]["id"]
    decisions = ["ABSTAIN", "EQUIVALENT", "ABSTAIN", "EQUIVALENT", "ABSTAIN"]
    pred["votes"] = [_vote(judge, "equivalence", k, {"decision": d})
                     for k, d in enumerate(decisions)]
    return st, {"equivalent": True, "label": "ABSTAIN", "agreement_votes": "3/5",
                "missing": 3, "valid_samples": 5, "independent_votes": 1,
                "reasons": ["judge votes {'ABSTAIN': 3, 'EQUIVALENT': 2}, min_agreement 2"]}


def _case_gate_order(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    """§8.2 reads the last gate with an id; §8.6 the first equivalence.deterministic."""
    st = _base(runs, "rubric", "c1-canonical")
    gates = st["predicate"]["gates"]
    tests = next(g for g in gates if g["id"] == "tests.pass")
    gates.insert(0, {**tests, "outcome": "fail", "detail": "earlier"})
    return st, {"gates_failed": [], "disposition": "accept"}


def _case_first_deterministic_gate(runs: Runs) -> tuple[dict[str, Any], dict[str, Any]]:
    st = _base(runs, "equivalence", "pair-01")
    gates = st["predicate"]["gates"]
    gates.append({**gates[0], "outcome": "fail"})
    return st, {"equivalent": True, "label": "EQUIVALENT", "independent_votes": 0}


CASES = (
    _case_rounding, _case_half_up, _case_tier_share, _case_gaps, _case_no_strict_majority,
    _case_unstable_blocker, _case_equivalence_label, _case_gate_order,
    _case_first_deterministic_gate,
)


def test_the_docs_worked_cases_are_what_jurat_computes(runs: Runs, tmp_path: Path) -> None:
    key = _private_key(runs)
    out = tmp_path / "cases"
    out.mkdir()
    for case in CASES:
        statement, expected = case(runs)
        pred = statement["predicate"]
        _refresh_derived(pred)
        derived = derive_decision(pred["campaign"]["policy"], pred["gates"], pred["votes"],
                                  pred["fold_rule"])
        for field_name, value in expected.items():
            assert derived[field_name] == value, (case.__name__, field_name, derived)
        pred["decision"] = derived
        (out / f"{case.__name__}.sigstore.json").write_bytes(_sign(statement, key))
    lines = _verify_dir(runs, out)
    wrong = {name: line for name, line in lines.items() if not line.startswith("OK")}
    assert len(lines) == len(CASES) and not wrong, wrong


def _escalated(runs: Runs) -> tuple[Campaign, Path]:
    """A receipt of the runs that escalated, for an adjudication to settle."""
    escalated = [(c, p) for c, p in runs.receipts() if c.name in ("rubric", "pairwise",
                                                                   "edge-rubric")
                 and _statement(p.read_bytes())["predicate"]["decision"]["disposition"]
                 == "escalate"]
    assert escalated, "the runs have no escalation to adjudicate"
    return escalated[0]


def _ledger_copy(runs: Runs, campaign: Campaign, tmp_path: Path) -> Path:
    """A copy of the campaign's ledger and checkpoint: an adjudication signs a checkpoint,
    and the runs' own checkpoints must stay the ones their proofs meet."""
    db = tmp_path / "copy.db"
    shutil.copy(runs.root / f"{campaign.name}.db", db)
    shutil.copy(campaign.checkpoint, f"{db}.checkpoint")
    return db


def test_adjudicated_reviews_rederive_from_the_doc(runs: Runs, tmp_path: Path) -> None:
    """§8.9: an escalation settled by `jurat adjudicate` re-derives in the document's
    verifier; an adjudication edited after signing (re-signed) or added to a decision that
    did not escalate does not."""
    campaign, path = _escalated(runs)
    predicate = _statement(path.read_bytes())["predicate"]
    disposition = "reject" if predicate["decision"]["gates_failed"] else "accept"
    out = tmp_path / "v2.sigstore.json"
    db = _ledger_copy(runs, campaign, tmp_path)
    r = _jurat("adjudicate", f"sqlite:///{db}", predicate["inputs"]["job_id"],
               "--disposition", disposition, "--rationale", "Read the answer and the votes.",
               "--reviewer", "rita", "--key", str(runs.key), "--out", str(out), cwd=runs.root)
    assert r.returncode == 0, r.stdout + r.stderr
    verified = verify_receipt(out.read_bytes(), runs.pub.read_bytes())
    assert verified.derived["disposition"] == disposition
    assert verified.derived["adjudicated"] is True
    assert verified.derived["reasons"][0].startswith(f"adjudicated {disposition} by rita at ")
    key = _private_key(runs)
    statement = _statement(out.read_bytes())
    statement["predicate"]["review"]["adjudication"]["reviewer"] = "mallory"
    with pytest.raises(DocVerifyError, match=r"step 7: .*decision\.reasons"):
        verify_receipt(_sign(statement, key), runs.pub.read_bytes())
    settled = next(p for c, p in runs.receipts() if c.name == "rubric" and _statement(
        p.read_bytes())["predicate"]["decision"]["disposition"] != "escalate")
    statement = _statement(settled.read_bytes())
    statement["predicate"]["review"]["adjudication"] = {
        "reviewer": "rita", "at": "2026-12-01T10:00:00.000000Z", "disposition": "accept",
        "rationale": "Looks fine."}
    statement["predicate"]["review"]["version"] = 2
    statement["predicate"]["review"]["supersedes"] = "0" * 64
    with pytest.raises(DocVerifyError, match=r"step 6: .*only an escalated"):
        verify_receipt(_sign(statement, key), runs.pub.read_bytes())


# -- 3. grounding (§8.10) and an adjudicated review's entry (§12.1) -------------------------


def _label_claim(pred: dict[str, Any], claim: str, labels: dict[str, str]) -> None:
    """Every sample of ``claim`` by each judge of ``labels`` answers that judge's label."""
    for vote in pred["votes"]:
        if vote["criterion"] == f"claim:{claim}" and vote["judge"] in labels:
            vote["answer"] = {**vote["answer"], "label": labels[vote["judge"]]}
            vote["error"] = None


def test_grounded_receipts_rederive_from_section_8_10(runs: Runs, tmp_path: Path) -> None:
    """The grounding example's receipts re-derive from §8.10's words (labels, shares,
    measures in doubles, the sentences and their order after the kind's reasons); on
    inputs jurat never produced (a three-way tie, nothing applicable) jurat computes what
    the document derives, and a sentence re-worded and re-signed fails step 7 in both."""
    pub = runs.pub.read_bytes()
    grounded = {p.name: verify_receipt(p.read_bytes(), pub)
                for c, p in runs.receipts() if c.name == "grounding"}
    assert set(grounded) == {"good.sigstore.json", "bad.sigstore.json"}
    good, bad = grounded["good.sigstore.json"].derived, grounded["bad.sigstore.json"].derived
    assert good["disposition"] == "accept" and good["grounding"]["gate"] == "pass"
    # Rule 5's three sentences, in order a, b, c, after the rubric's own reason.
    assert bad["disposition"] == "reject" and bad["reasons"][1:] == [
        "grounding: contradiction rate 0.5000 > max_contradiction_rate 0.0",
        "grounding: coverage 0.5000 < min_coverage 0.6",
        "grounding: material claims without supporting evidence: bad-moon"]
    key = _private_key(runs)
    original = _statement((runs.root / "out" / "grounding" / "bad.sigstore.json").read_bytes())
    out = tmp_path / "grounding"
    out.mkdir()
    # A tie of three judges (rule 2: unresolved, top 1 whatever label holds it), and a
    # panel that finds nothing applicable (rule 4).
    tie = copy.deepcopy(original)
    _label_claim(tie["predicate"], "bad-moon", {"sim-a": "supported", "sim-b": "contradicted",
                                                "sim-c": "not_applicable"})
    none = copy.deepcopy(original)
    for claim in ("bad-boil", "bad-moon", "bad-iron"):
        _label_claim(none["predicate"], claim, dict.fromkeys(("sim-a", "sim-b", "sim-c"),
                                                             "not_applicable"))
    for name, statement in (("tie", tie), ("none", none)):
        statement["predicate"]["decision"] = derive(statement["predicate"])
        (out / f"{name}.sigstore.json").write_bytes(_sign(statement, key))
    moon = tie["predicate"]["decision"]["grounding"]["claims"][1]
    assert (moon["label"], moon["agreement_votes"]) == ("unresolved", "1/3")
    unmeasured = none["predicate"]["decision"]["grounding"]
    assert unmeasured["coverage"] is None and unmeasured["gate"] == "warn"
    assert unmeasured["reasons"][0].endswith(": not measured")
    assert unmeasured["unevidenced_material"] == ["bad-moon"]
    lines = _verify_dir(runs, out)
    assert set(lines) == {"tie.sigstore.json", "none.sigstore.json"}
    assert all(line.startswith("OK") for line in lines.values()), lines
    # A threshold written as the JSON number (`0`) rather than §8.8's repr (`0.0`).
    edited = copy.deepcopy(original)
    decision = edited["predicate"]["decision"]
    decision["reasons"][1] = decision["reasons"][1].removesuffix(".0")
    receipt = _sign(edited, key)
    with pytest.raises(DocVerifyError, match=r"step 7: .*decision\.reasons"):
        verify_receipt(receipt, pub)
    (tmp_path / "edited.sigstore.json").write_bytes(receipt)
    r = _jurat("verify", str(tmp_path / "edited.sigstore.json"), "--key", str(runs.pub),
               cwd=runs.root)
    assert r.returncode == 1 and "step 7" in r.stdout, r.stdout + r.stderr


def test_an_adjudicated_reviews_proof_checks_from_section_12_1(runs: Runs,
                                                               tmp_path: Path) -> None:
    """`jurat adjudicate` writes the review's proof and prints its entry; the document's
    §12.3 check holds against the checkpoint it signed, and §12.1's binding of the entry
    (its own job id, ``adjudicates``) holds, and fails when the entry names another job."""
    campaign, path = _escalated(runs)
    db = _ledger_copy(runs, campaign, tmp_path)
    predicate = _statement(path.read_bytes())["predicate"]
    job = predicate["inputs"]["job_id"]
    disposition = "reject" if predicate["decision"]["gates_failed"] else "accept"
    out = tmp_path / "v2.sigstore.json"
    r = _jurat("adjudicate", f"sqlite:///{db}", job, "--disposition", disposition,
               "--rationale", "Read the answer and the votes.", "--reviewer", "rita",
               "--key", str(runs.key), "--out", str(out), cwd=runs.root)
    assert r.returncode == 0, r.stdout + r.stderr
    printed = int(re.search(r"^ledger entry (\d+) ", r.stdout, re.M).group(1))  # type: ignore[union-attr]
    verified = verify_receipt(out.read_bytes(), runs.pub.read_bytes())
    assert verified.derived["adjudicated"] is True
    log_key = runs.log_pub.read_text(encoding="utf-8")
    proof = Path(f"{out}.proof.json").read_bytes()
    checkpoint = Path(f"{db}.checkpoint").read_text(encoding="utf-8")
    assert check_inclusion(out.read_bytes(), proof, checkpoint, log_key) == printed
    entry = json.loads(proof)["entry"]
    assert entry["payload"]["adjudicates"] == job and entry["job_id"] != job
    assert entry["job_id"] == sha256_hex(canonical({
        "identity": "jurat.service.adjudication/v1", "job": job, "review_version": 2}))
    # §12.1 binds the entry to the receipt: the entry under the reviewed job's id, or
    # without ``adjudicates``, is not this review's (its hashes would not hold either; the
    # binding is checked on its own here, so that it is known to be checked at all).
    with pytest.raises(DocVerifyError, match="job_id is not the one §12.1 gives"):
        check_entry_binding({**entry, "job_id": job}, out.read_bytes())
    bare = {k: v for k, v in entry["payload"].items() if k != "adjudicates"}
    with pytest.raises(DocVerifyError, match="payload members are not §12.1's"):
        check_entry_binding({**entry, "payload": bare}, out.read_bytes())
    run_entry = json.loads(Path(f"{path}.proof.json").read_bytes())["entry"]
    check_entry_binding(run_entry, path.read_bytes())  # a run's receipt: its job, 4 members
    with pytest.raises(DocVerifyError, match="payload members are not §12.1's"):
        check_entry_binding({**run_entry, "payload": {**run_entry["payload"],
                                                      "adjudicates": job}}, path.read_bytes())
