"""The campaign's reference key (campaign/_reference_key.py): where it is, how it is made
and read, what is refused, and what intake binds with it (issue 36)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
from pathlib import Path

import pytest

from jurat.campaign import (
    REFERENCE_KEY_BYTES,
    ReferenceKey,
    load_campaign,
    read_reference_key,
    reference_key,
    reference_key_path,
)
from jurat.canonical import KEYED_DIGEST, keyed_digest, sha256_digest
from jurat.errors import CampaignError, ConfigError
from jurat.models._artifact import pair_digest
from jurat.runner import intake

EQUIVALENCE = """\
[campaign]
id = "{id}"
kind = "equivalence"
allowed_destinations = ["sim"]
{settings}
[[judges]]
id = "s"
provider = "sim"

[[artifacts]]
id = "p1"
a = "A: 1887"
b = "1889"
{pin}"""

CRITERIA = """\
[campaign]
id = "trivia"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
items = [{ id = "ok", text = "Correct?" }]

[[judges]]
id = "s"
provider = "sim"

[[artifacts]]
id = "q1"
input = "Capital of Australia?"
text = "Sydney"
target_path = "gold/q1.txt"

[[artifacts]]
id = "q2"
input = "Two plus two?"
text = "4"
"""


def _campaign(tmp: Path, text: str) -> Path:
    path = tmp / "c.toml"
    path.write_text(text)
    return path


def _equivalence(tmp: Path, *, id: str = "gold", settings: str = "", pin: str = "") -> Path:
    return _campaign(tmp, EQUIVALENCE.format(id=id, settings=settings, pin=pin))


def test_made_once_beside_the_campaign_private_and_announced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    campaign = load_campaign(_equivalence(tmp_path))
    path = tmp_path / ".jurat" / "gold.reference.key"
    assert reference_key_path(campaign) == path and not path.exists()
    first = reference_key(campaign)
    said = capsys.readouterr().err
    assert said == (f"created a reference key at {path} (keep it with the campaign's hidden "
                    "material; verification of reference digests needs it)\n")
    assert len(path.read_bytes()) == REFERENCE_KEY_BYTES
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    again = reference_key(load_campaign(_equivalence(tmp_path)))
    assert capsys.readouterr().err == ""  # read, not made again
    assert again.digest("1889") == first.digest("1889")
    assert first.digest("1889") == keyed_digest(path.read_bytes(), "1889")
    assert KEYED_DIGEST.fullmatch(first.digest("1889"))
    # Its bytes leave only as digests: not in its repr, nor in an error's words.
    assert repr(first) == f"ReferenceKey({str(path)!r})"
    assert path.read_bytes().hex() not in repr(first)


def test_without_create_an_absent_key_is_refused(tmp_path: Path) -> None:
    campaign = load_campaign(_equivalence(tmp_path))
    with pytest.raises(ConfigError, match="no reference key"):
        reference_key(campaign, create=False)
    assert not (tmp_path / ".jurat").exists()


@pytest.mark.parametrize("size", [0, 16, 31, 33, 5000])
def test_a_key_of_another_size_is_refused_naming_it(tmp_path: Path, size: int) -> None:
    campaign = load_campaign(_equivalence(tmp_path))
    path = reference_key_path(campaign)
    path.parent.mkdir()
    path.write_bytes(b"k" * size)
    with pytest.raises(ConfigError) as info:
        reference_key(campaign)
    assert not isinstance(info.value, CampaignError)  # about the key file, not a field
    assert str(path) in str(info.value) and "fix:" in str(info.value)
    assert path.read_bytes() == b"k" * size  # never replaced


def test_a_key_that_is_a_directory_or_leads_outside_is_refused(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    campaign = load_campaign(_equivalence(camp))
    path = reference_key_path(campaign)
    path.mkdir(parents=True)
    with pytest.raises(ConfigError, match="not a regular file"):
        reference_key(campaign)
    path.rmdir()
    (tmp_path / "elsewhere.key").write_bytes(b"k" * 32)
    os.symlink(tmp_path / "elsewhere.key", path)
    with pytest.raises(ConfigError, match=str(path)):
        reference_key(campaign)


def test_a_planted_symlink_for_the_directory_gets_no_key(tmp_path: Path) -> None:
    camp, outside = tmp_path / "camp", tmp_path / "outside"
    camp.mkdir()
    outside.mkdir()
    os.symlink(outside, camp / ".jurat")
    with pytest.raises(ConfigError, match="no reference key was written"):
        reference_key(load_campaign(_equivalence(camp)))
    assert list(outside.iterdir()) == []


def test_an_id_that_is_no_file_name_is_named_by_its_digest(tmp_path: Path) -> None:
    campaign = load_campaign(_equivalence(tmp_path, id="../x/y"))
    path = reference_key_path(campaign)
    assert path.parent == tmp_path / ".jurat"
    assert path.name == f"id-{sha256_digest('../x/y')[:32]}.reference.key"
    reference_key(campaign)
    assert path.is_file()


def _race(campaign_file: str, out: str) -> None:
    key = reference_key(load_campaign(campaign_file))
    Path(out).write_text(key.digest("x"))


def test_two_processes_making_it_at_once_share_one_key(tmp_path: Path) -> None:
    file = str(_equivalence(tmp_path))
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_race, args=(file, str(tmp_path / f"d{i}")))
               for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    digests = {(tmp_path / f"d{i}").read_text() for i in range(4)}
    assert len(digests) == 1
    assert [p.name for p in (tmp_path / ".jurat").iterdir()] == ["gold.reference.key"]


def test_a_verifier_reads_the_key_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "k").write_bytes(b"s" * 32)
    key = read_reference_key(tmp_path / "k")
    assert key.digest("C") == keyed_digest(b"s" * 32, "C") and key.path == tmp_path / "k"
    (tmp_path / "short").write_bytes(b"s" * 8)
    with pytest.raises(ConfigError, match="32 bytes, this file holds 8"):
        read_reference_key(tmp_path / "short")
    with pytest.raises(ConfigError, match="cannot read reference key"):
        read_reference_key(tmp_path / "missing")
    with pytest.raises(ConfigError):
        ReferenceKey(b"", tmp_path / "k")
    # A forked or Ray worker gets the key with the campaign's artifacts' digests.
    assert pickle.loads(pickle.dumps(key)).digest("C") == key.digest("C")


def test_intake_binds_a_gold_b_and_a_target_by_their_keyed_digests(tmp_path: Path) -> None:
    [pair] = intake(load_campaign(_equivalence(tmp_path)))
    key = reference_key(load_campaign(_equivalence(tmp_path)))
    assert pair.reference_hmac == key.digest("1889")
    assert pair.sha256 == pair_digest(sha256_digest("A: 1887"), key.digest("1889"))
    # Two candidates (reference = "none"): nothing is reference material, nothing keyed.
    none = tmp_path / "none"
    none.mkdir()
    [both] = intake(load_campaign(_equivalence(none, settings='\n[equivalence]\nreference = '
                                                              '"none"\n')))
    assert both.reference_hmac is None
    assert both.sha256 == pair_digest(sha256_digest("A: 1887"), sha256_digest("1889"))
    assert not (none / ".jurat").exists()
    # A criteria target, read from its file: keyed; an artifact without one: no key needed.
    crit = tmp_path / "crit"
    (crit / "gold").mkdir(parents=True)
    (crit / "gold" / "q1.txt").write_text("Canberra")
    q1, q2 = intake(load_campaign(_campaign(crit, CRITERIA)))
    key = read_reference_key(crit / ".jurat" / "trivia.reference.key")
    assert q1.reference_hmac == key.digest("Canberra") and q1.sha256 == sha256_digest("Sydney")
    assert q2.reference_hmac is None


def test_a_pinned_pair_digest_may_be_the_plain_one_or_the_keyed_one(tmp_path: Path) -> None:
    plain = pair_digest(sha256_digest("A: 1887"), sha256_digest("1889"))
    [pair] = intake(load_campaign(_equivalence(tmp_path, pin=f'sha256 = "{plain}"\n')))
    assert pair.sha256 != plain  # keyed, and the pin written before keys still holds
    [again] = intake(load_campaign(_equivalence(tmp_path, pin=f'sha256 = "{pair.sha256}"\n')))
    assert again.sha256 == pair.sha256
    other = pair_digest(sha256_digest("A: 1887"), sha256_digest("1890"))
    with pytest.raises(CampaignError, match="artifact content was altered"):
        intake(load_campaign(_equivalence(tmp_path, pin=f'sha256 = "{other}"\n')))
