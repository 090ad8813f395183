"""Issue 36: reference answers reach public outputs only as keyed digests.

Short gold answers (``1889``, ``Canberra``, ``C``) are run through ``jurat run`` as a
criteria campaign's targets and an equivalence campaign's gold ``b``, with the sim judge;
then a contributor's dictionary attack is played against everything public: the receipts,
the board directory, the run-result JSON and JUnit files, telemetry and the terminal
output. For every word of a dictionary that holds the answers, the attacker computes what
jurat published before keyed digests (the word's sha256, the pair digest, the job identity
and the evidence bundle digest built from it) and finds none of them; the holder of the
campaign's reference key finds exactly the answers. The key file is created once and
reused; a malformed one exits 3 naming it; ``jurat verify`` checks the binding with the key
and says it did not without it; losing the key is a clean new review, never an error.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jurat import __version__
from jurat.canonical import digest_json, keyed_digest, sha256_digest
from jurat.models import Artifact, EvidenceBundle, EvidenceItem, Policy, policy_digest
from jurat.models._artifact import PAIR_MEDIA_TYPE, pair_digest
from jurat.receipts import receipt_digest
from jurat.runner._job import job_identity
from tests.receipts.doc_verifier import verify_receipt

from ._support import jurat, keys, verify

#: Criteria rows: id -> (question, the output judged, the gold target). No output is an
#: answer, so that a digest of an output (public, the contributor's own) is never one.
QUESTIONS = {
    "eiffel": ("In which year was the Eiffel Tower completed?", "It opened in 1887.", "1889"),
    "capital": ("What is the capital of Australia?", "Sydney, I believe.", "Canberra"),
    "quiz": ("Which option is right: A, B, C or D?", "Option B.", "C"),
}
#: Equivalence pairs: id -> (a, the contributor's answer; b, the gold answer).
PAIRS = {
    "year": ("The tower was finished in 1887.\n#### 1887", "1889"),
    "city": ("Sydney", "Canberra"),
    "letter": ("B", "C"),
}
ANSWERS = {"1889", "Canberra", "C"}
#: A contributor's dictionary: years, cities, letters and words, the answers among them.
DICTIONARY = sorted({str(year) for year in range(1850, 1950)} | set("ABCDEFGH") | {
    "Canberra", "Sydney", "Melbourne", "Perth", "Paris", "Lyon", "yes", "no", "true",
    "false", "42", "7", "51", "answer", "reference"})

CRITERIA = """\
[campaign]
id = "trivia"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 1
blocker_samples = 1
items = [{ id = "correct", text = "Is the answer correct for the question?", blocker = true }]

[[judges]]
id = "sim"
provider = "sim"
reliability = 0.9
seed = 7
"""

EQUIVALENCE = """\
[campaign]
id = "gold"
kind = "equivalence"
allowed_destinations = ["sim"]

[[judges]]
id = "sim"
provider = "sim"
reliability = 0.9
seed = 7
"""

#: The one criteria artifact without a target: it keeps its job across a key change.
PLAIN = ("plain", "What is 6 times 7?", "42 is the product.")


def _criteria_toml() -> str:
    text = CRITERIA
    for aid, (question, output, target) in QUESTIONS.items():
        text += (f"\n[[artifacts]]\nid = {json.dumps(aid)}\ninput = {json.dumps(question)}\n"
                 f"text = {json.dumps(output)}\ntarget = {json.dumps(target)}\n"
                 'truth = "no"\n')
    aid, question, output = PLAIN
    text += (f"\n[[artifacts]]\nid = {json.dumps(aid)}\ninput = {json.dumps(question)}\n"
             f'text = {json.dumps(output)}\ntruth = "yes"\n')
    return text


def _equivalence_toml() -> str:
    text = EQUIVALENCE
    for aid, (a, b) in PAIRS.items():
        text += (f"\n[[artifacts]]\nid = {json.dumps(aid)}\na = {json.dumps(a)}\n"
                 f'b = {json.dumps(b)}\ntruth = "DIFFERENT"\n')
    return text


@dataclass
class Campaign:
    """One campaign run in its own directory, with what the run published."""

    name: str
    root: Path

    @property
    def toml(self) -> Path:
        return self.root / "campaign.toml"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def ledger(self) -> str:
        return f"sqlite:///{self.root / 'l.db'}"

    @property
    def key_file(self) -> Path:
        return self.root / ".jurat" / f"{self.name}.reference.key"

    def run(self, tmp: Path) -> Any:
        key, _ = keys(tmp)
        return jurat("run", str(self.toml), "--out", str(self.out), "--ledger", self.ledger,
                     "--key", str(key), "--json", str(self.root / "result.json"),
                     "--junit", str(self.root / "junit.xml"),
                     "--telemetry", str(self.root / "telemetry.ndjson"), cwd=tmp)

    def predicate(self, aid: str) -> dict[str, Any]:
        return _statement((self.out / f"{aid}.sigstore.json").read_bytes())["predicate"]


def _statement(receipt: bytes) -> dict[str, Any]:
    envelope = json.loads(receipt)["dsseEnvelope"]
    statement: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return statement


def _campaigns(tmp: Path) -> tuple[Campaign, Campaign]:
    criteria, equivalence = Campaign("trivia", tmp / "trivia"), Campaign("gold", tmp / "gold")
    for campaign, text in ((criteria, _criteria_toml()), (equivalence, _equivalence_toml())):
        campaign.root.mkdir()
        campaign.toml.write_text(text)
    return criteria, equivalence


def _public_texts(tmp: Path, campaigns: tuple[Campaign, ...], runs: list[Any]) -> dict[str, str]:
    """Everything a contributor can read: receipts (bytes and signed payloads), the board's
    files (payloads of its receipts too), the run-result JSON and JUnit files, telemetry and
    the terminal output of every run (a CI log)."""
    _, pub = keys(tmp)
    texts: dict[str, str] = {}
    for campaign in campaigns:
        site = campaign.root / "site"
        board = jurat("board", campaign.ledger, "--out", str(site), "--key", str(pub), cwd=tmp)
        assert board.returncode == 0, board.stdout + board.stderr
        files = [*campaign.out.glob("*.sigstore.json"), *site.rglob("*"),
                 campaign.root / "result.json", campaign.root / "junit.xml",
                 campaign.root / "telemetry.ndjson"]
        for file in files:
            if not file.is_file():
                continue
            raw = file.read_bytes()
            texts[str(file)] = raw.decode("utf-8", "replace")
            if file.name.endswith(".sigstore.json"):
                texts[f"{file} (payload)"] = json.dumps(_statement(raw))
    for index, run in enumerate(runs):
        texts[f"run {index} output"] = run.stdout + run.stderr
    return texts


def _policy(campaign: Campaign) -> tuple[Policy, str]:
    """The campaign's policy and its digest, as every receipt publishes them."""
    first = next(iter(QUESTIONS if campaign.name == "trivia" else PAIRS))
    policy = Policy.model_validate(campaign.predicate(first)["campaign"]["policy"])
    return policy, policy_digest(policy)


def _derived(campaign: Campaign, b_digest: str, word: str, *,
             plain: bool) -> dict[str, set[str]]:
    """Every public digest a reference enters, recomputed from what is public (the policy,
    the version, each question and output, each pair's a) and the reference's digest
    ``b_digest``: as jurat wrote them before keyed digests (``plain``: the sha256 of
    ``word``), or as it writes them now (the keyed digest). By artifact id."""
    policy, policy_sha256 = _policy(campaign)
    out: dict[str, set[str]] = {}
    if campaign.name == "trivia":
        for aid, (question, output, _) in QUESTIONS.items():
            base = job_identity(policy_sha256, Artifact(
                id=aid, sha256=sha256_digest(output), media_type="text/plain", text=output,
                input=question), policy, 1)
            target = f"sha256:{b_digest}" if plain else b_digest
            out[aid] = {digest_json({"job": base, "target": target})}
        return out
    for aid, (a, _) in PAIRS.items():
        pair = pair_digest(sha256_digest(a), b_digest)
        job = job_identity(policy_sha256, Artifact(
            id=aid, sha256=pair, media_type=PAIR_MEDIA_TYPE, a=a, b=word), policy, 1)
        item = EvidenceItem(kind="artifact", tool="jurat", tool_version=__version__,
                            sha256=pair, excerpt=f"A:\n{a}\nB:\n{word if plain else b_digest}")
        out[aid] = {pair, job, EvidenceBundle(items=(item,)).digest}
    return out


def _guesses(word: str, criteria: Campaign, equivalence: Campaign) -> set[str]:
    """What a contributor computes from a guess of a reference, as jurat published it before
    keyed digests: its sha256, and every public digest built from it."""
    plain = sha256_digest(word)
    found = {plain, f"sha256:{plain}"}
    for campaign in (criteria, equivalence):
        for digests in _derived(campaign, plain, word, plain=True).values():
            found |= digests
    return found


def _found(needles: set[str], texts: dict[str, str]) -> list[str]:
    return [f"{where}: {needle}" for needle in needles for where, text in texts.items()
            if needle in text]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, Campaign, Campaign, list[Any]]:
    tmp = tmp_path_factory.mktemp("keyed")
    criteria, equivalence = _campaigns(tmp)
    runs = []
    for campaign in (criteria, equivalence):
        run = campaign.run(tmp)
        assert run.returncode in (0, 1, 2), run.stdout + run.stderr
        # Created once, announced once on stderr, private to the operator.
        assert run.stderr.count("created a reference key at") == 1, run.stderr
        assert str(campaign.key_file) in run.stderr
        assert len(campaign.key_file.read_bytes()) == 32
        assert campaign.key_file.stat().st_mode & 0o777 == 0o600
        assert campaign.key_file.parent.stat().st_mode & 0o777 == 0o700
        runs.append(run)
    return tmp, criteria, equivalence, runs


def test_a_dictionary_finds_no_reference_in_any_public_output(
        published: tuple[Path, Campaign, Campaign, list[Any]]) -> None:
    tmp, criteria, equivalence, runs = published
    texts = _public_texts(tmp, (criteria, equivalence), runs)
    assert any("site" in where for where in texts) and len(texts) > 20
    # The search finds what is published by plain digest: each output's sha256 is its
    # receipt's subject, and each a's digest builds its pair's (the contributor's own).
    outputs = {sha256_digest(output) for _, output, _ in QUESTIONS.values()}
    assert all(_found({digest}, texts) for digest in outputs)
    # The attacker's recomputation is exact: given the keyed digest of each answer, it gives
    # the job ids, pair digests and evidence bundle digests the receipts hold.
    for campaign, answers in ((criteria, {k: v[2] for k, v in QUESTIONS.items()}),
                              (equivalence, {k: v[1] for k, v in PAIRS.items()})):
        secret = campaign.key_file.read_bytes()
        for aid, answer in answers.items():
            derived = _derived(campaign, keyed_digest(secret, answer), answer, plain=False)[aid]
            pred = campaign.predicate(aid)
            assert pred["inputs"]["job_id"] in derived
            if campaign is equivalence:
                assert {pred["artifact"]["sha256"],
                        pred["inputs"]["evidence_bundle"]["sha256"]} <= derived
    # Before keyed digests, that recomputation from a guess found every answer; now none.
    leaks = [hit for word in DICTIONARY
             for hit in _found(_guesses(word, criteria, equivalence), texts)]
    assert leaks == []

    # The holder of the keys finds exactly the answers: the targets, the gates' and the
    # pairs' digests of b, and nothing else of the dictionary.
    secret = {c.name: c.key_file.read_bytes() for c in (criteria, equivalence)}
    held: dict[str, set[str]] = {"trivia": set(), "gold": set()}
    for word in DICTIONARY:
        for name, key in secret.items():
            if _found({keyed_digest(key, word)}, texts):
                held[name].add(word)
    assert held == {"trivia": ANSWERS, "gold": ANSWERS}
    for aid, (_, _, target) in QUESTIONS.items():
        inputs = criteria.predicate(aid)["inputs"]
        assert inputs["target_hmac"] == keyed_digest(secret["trivia"], target)
        assert "target_sha256" not in inputs
    for aid, (a, b) in PAIRS.items():
        pred = equivalence.predicate(aid)
        keyed = keyed_digest(secret["gold"], b)
        assert pred["artifact"]["sha256"] == pair_digest(sha256_digest(a), keyed)
        (gate,) = pred["gates"]
        assert gate["data"]["reference_hmac"] == keyed
        assert "reference_sha256" not in gate["data"]
    # The year is settled deterministically (1887 is not 1889); the words go to the judge.
    assert equivalence.predicate("year")["gates"][0]["outcome"] == "fail"


def test_the_key_is_reused_and_nothing_is_judged_again(
        published: tuple[Path, Campaign, Campaign, list[Any]]) -> None:
    tmp, criteria, equivalence, _ = published
    for campaign in (criteria, equivalence):
        key = campaign.key_file.read_bytes()
        receipts = {p.name: p.read_bytes() for p in campaign.out.glob("*.sigstore.json")}
        again = campaign.run(tmp)
        assert again.returncode in (0, 1, 2), again.stdout + again.stderr
        assert "created a reference key" not in again.stderr
        assert campaign.key_file.read_bytes() == key
        assert "judge calls: 0 drawn in this run" in again.stdout
        # The same jobs, so the same receipts, byte for byte (the same digests).
        assert {p.name: p.read_bytes() for p in campaign.out.glob("*.sigstore.json")} == receipts


def test_verify_checks_the_binding_with_the_key_and_says_so_without(
        published: tuple[Path, Campaign, Campaign, list[Any]]) -> None:
    tmp, criteria, equivalence, _ = published
    _, pub = keys(tmp)
    answer = tmp / "answer.txt"
    receipt = criteria.out / "capital.sigstore.json"
    without = verify(receipt, pub, tmp)
    assert without.returncode == 0, without.stdout + without.stderr
    assert "reference binding NOT checked (it is keyed" in without.stdout
    answer.write_bytes(b"Canberra")
    checked = jurat("verify", str(receipt), "--key", str(pub), "--reference", str(answer),
                    "--reference-key", str(criteria.key_file), cwd=tmp)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "reference binding checked with --reference-key" in checked.stdout
    for wrong, key in ((b"Sydney", criteria.key_file), (b"Canberra\n", criteria.key_file),
                       (b"Canberra", equivalence.key_file)):
        answer.write_bytes(wrong)
        refused = jurat("verify", str(receipt), "--key", str(pub), "--reference", str(answer),
                        "--reference-key", str(key), cwd=tmp)
        assert refused.returncode == 1, refused.stdout
        assert "5. FAIL check subject digest  inputs.target_hmac is not the keyed digest" in (
            refused.stdout)
    # A pair: its a as --artifact, its b as --reference, the pair's digest built with the key.
    a, b = PAIRS["city"]
    (tmp / "a.txt").write_text(a)
    answer.write_text(b)
    pair = equivalence.out / "city.sigstore.json"
    paired = jurat("verify", str(pair), "--key", str(pub), "--artifact", str(tmp / "a.txt"),
                   "--reference", str(answer), "--reference-key", str(equivalence.key_file),
                   cwd=tmp)
    assert paired.returncode == 0, paired.stdout + paired.stderr
    assert "the pair of --artifact" in paired.stdout and "binding checked" in paired.stdout
    alone = jurat("verify", str(pair), "--key", str(pub), "--artifact", str(tmp / "a.txt"),
                  cwd=tmp)
    assert alone.returncode == 1 and "a pair's digest binds both parts" in alone.stdout
    # One without the other is refused before anything is verified.
    half = jurat("verify", str(pair), "--key", str(pub), "--reference", str(answer), cwd=tmp)
    assert half.returncode == 3 and "--reference-key" in half.stderr
    # The verifier written from docs/receipt-format.md alone (§7 step 5) agrees.
    public = pub.read_bytes()
    bundle = pair.read_bytes()
    assert verify_receipt(bundle, public).reference_checked is False
    key = equivalence.key_file.read_bytes()
    assert verify_receipt(bundle, public, reference=(key, b.encode())).reference_checked is True
    done = verify_receipt(bundle, public, artifact_sha256=sha256_digest(a),
                          reference=(key, b.encode()))
    assert done.reference_checked is True


@pytest.mark.parametrize("content", [b"\x00" * 31, b"\x00" * 64, b""])
def test_a_malformed_key_file_exits_3_naming_it(tmp_path: Path, content: bytes) -> None:
    criteria, _ = _campaigns(tmp_path)
    criteria.key_file.parent.mkdir(mode=0o700)
    criteria.key_file.write_bytes(content)
    run = criteria.run(tmp_path)
    assert run.returncode == 3, run.stdout + run.stderr
    assert str(criteria.key_file) in run.stderr
    assert "a reference key is 32 bytes" in run.stderr and "fix:" in run.stderr
    assert not criteria.out.exists() or not list(criteria.out.glob("*.sigstore.json"))
    assert criteria.key_file.read_bytes() == content  # never replaced


def test_a_lost_key_is_a_new_review_not_an_error(tmp_path: Path) -> None:
    """A new key (a lost one, or the first run after upgrading jurat: an artifact id with a
    receipt under another job) makes new jobs of the artifacts with reference material:
    judged again, each receipt the next review of its artifact; the others are reused."""
    criteria, equivalence = _campaigns(tmp_path)
    _, pub = keys(tmp_path)
    for campaign, ids in ((criteria, [*QUESTIONS, PLAIN[0]]), (equivalence, list(PAIRS))):
        first = campaign.run(tmp_path)
        assert first.returncode in (0, 1, 2), first.stdout + first.stderr
        before = {aid: campaign.predicate(aid) for aid in ids}
        signed = {aid: (campaign.out / f"{aid}.sigstore.json").read_bytes() for aid in ids}
        campaign.key_file.unlink()
        second = campaign.run(tmp_path)
        assert second.returncode in (0, 1, 2), second.stdout + second.stderr
        assert "created a reference key" in second.stderr
        for aid in ids:
            after = campaign.predicate(aid)
            if aid == PLAIN[0]:  # no reference: the same job, its receipt reused
                assert after == before[aid]
                continue
            assert after["inputs"]["job_id"] != before[aid]["inputs"]["job_id"]
            assert after["review"]["version"] == 2
            assert after["review"]["supersedes"] == receipt_digest(signed[aid])
            verified = verify(campaign.out / f"{aid}.sigstore.json", pub, tmp_path)
            assert verified.returncode == 0, verified.stdout
