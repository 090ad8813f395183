"""The worlds of ``tests/test_covert_channels.py`` (issue 36): one campaign whose hidden tests
hold a secret, a candidate that reads it and tries to send it out through every channel it
can reach, and a flattening of every public output so two worlds can be compared.

The rule under test is non-interference: whatever the candidate does, a contributor-visible
or public output is a function of what the contributor already knows (its own candidate,
the public policy) and of the accept / reject outcome, never of the hidden tests' secret.
So the same campaign runs in worlds that differ only in the secret, with a candidate whose
outcome is the same in each, and every output is compared field by field. A field may
differ between two worlds only if it is *noise*: it also differs between two worlds with
the same secret (a signature, a salted commitment, a clock), and then it must be on the
list below of fields that are random by construction.

The candidate (``spy``) computes every answer right, and meanwhile encodes the secret it
was called with into: its stdout and stderr, files it writes, its memory, CPU and wall time,
the coverage its own process reports (it patches its harness), an exception message, the
arguments the tests passed it (mutated in place), which mutants survive (a mutant lacks its
comment, so it knows), and, in its failing variant, which tests fail. The judge answers
with a digest of the prompt it was shown (delimiters' random tokens folded), so evidence
shown to a judge that depends on the secret changes the receipt.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeRequest, Reply, arcv_decision, completion

SPY = r'''"""A solution that computes every answer right and leaks what it sees."""
# spy-original: mutants are unparsed from the tree and lose this comment.
import os
import sys
import time

MODE = "@@MODE@@"
_SEEN = []
_HOLD = []


def _secret():
    big = [v for v in _SEEN if isinstance(v, int) and v > 1000]
    return big[0] if big else 0


def _is_mutant():
    try:
        with open(__file__) as handle:
            return "# spy-original" not in handle.read()
    except OSError:
        return True


def _spread():
    s = _secret()
    print("spy", s)
    print("spy", s, file=sys.stderr)
    for where in ("/work", "/tmp"):
        try:
            with open(os.path.join(where, "spy%d" % s), "w") as handle:
                handle.write(str(s))
        except OSError:
            pass
    _HOLD.append(bytearray((s & 7) * 4 * 1024 * 1024))
    end = time.process_time() + ((s >> 3) & 3) * 0.1
    while time.process_time() < end:
        pass
    time.sleep(((s >> 5) & 3) * 0.1)
    bits = [i + 1 for i in range(24) if (s >> i) & 1]
    harness = sys.modules.get("_sandbox_candidate") or sys.modules.get("__main__")
    report = {"statements": 40, "covered_lines": len(bits), "missing_lines": bits,
              "branches": 0, "covered_branches": 0, "partial_branches": 0,
              "percent": float(len(bits))}
    try:
        harness._coverage_summary = lambda cov: report
    except Exception:
        pass


def twice(x):
    _SEEN.append(x)
    _spread()
    s = _secret()
    if _is_mutant() and (s >> (x % 7)) & 1:
        raise RuntimeError("spy mutant %d" % s)
    if MODE == "fail" and (x == 7 or (0 <= x < 6 and (s >> x) & 1)):
        return 2 * x + 1
    return 2 * x


def shout(word):
    _SEEN.append(word)
    print("spy", word)
    return word.upper()


def boom(x):
    _SEEN.append(x)
    raise ValueError("spy %d %d" % (x, _secret()))


def collect(acc, x):
    _SEEN.append(x)
    acc.append(["spy", _secret()])
    return 1
'''

HIDDEN = '''import pytest

from solution import boom, collect, shout, twice

SECRET = @@SECRET@@
WORD = "w@@HEX@@"


def test_a_secret():
    assert twice(SECRET) == 2 * SECRET


def test_b_word():
    assert shout(WORD) == WORD.upper()


def test_c_boom():
    with pytest.raises(ValueError):
        boom(SECRET)


def test_d_collect():
    acc = []
    assert collect(acc, SECRET) == 1


@pytest.mark.parametrize("i", range(6), ids=["case%d" % n for n in range(6)])
def test_e_bit(i):
    assert twice(i) == 2 * i


def test_zz_last():
    assert twice(7) == 14
'''


def spy_source(mode: str) -> str:
    assert mode in ("pass", "fail")
    return SPY.replace("@@MODE@@", mode)


def hidden_tests(secret: int) -> str:
    return HIDDEN.replace("@@SECRET@@", str(secret)).replace("@@HEX@@", f"{secret:x}")


def campaign_toml(url: str, *, with_artifacts: bool) -> str:
    text = f"""\
[campaign]
id = "covert"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}"]
judge_after_veto = true

[rubric]
version = "covert/1"
threshold = 0.5
hard_gates = ["python.parse", "tests.pass"]
criteria = [{{ id = "correctness", weight = 1.0 }}]

[checks.python]
tests = "tests/test_hidden.py"
coverage = true
mutation = true
max_mutants = 2
limits = {{ wall_s = 40, cpu_s = 20, memory_mb = 384, procs = 32 }}

[intake]
max_artifact_bytes = 262144

[[judges]]
id = "witness"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
samples = 1
retries = 0
timeout_s = 30
"""
    if with_artifacts:
        for mode in ("pass", "fail"):
            text += f'\n[[artifacts]]\nid = "spy-{mode}"\npath = "spy_{mode}.py"\n'
    return text


_NONCE = re.compile(r"<<<([A-Z][A-Z0-9 ]*?) [0-9a-f]{8,64}>>>")
_END = re.compile(r"<<<END ([A-Z][A-Z0-9 ]*?) [0-9a-f]{8,64}>>>")


def fold_delimiters(prompt: str) -> str:
    """The prompt with each data block's per-call random token removed."""
    return _END.sub(r"<<<END \1>>>", _NONCE.sub(r"<<<\1>>>", prompt))


def witness_judge(request: FakeRequest) -> Reply:
    """An accepting judge whose explanation is a digest of what it was shown: any evidence
    that depends on the secret changes its answer, and so the receipt."""
    prompt = fold_delimiters(request.prompt)
    seen = hashlib.sha256(prompt.encode()).hexdigest()[:32]
    answer = arcv_decision(request.digest, explanation=f"I was shown prompt {seen}.")
    return completion(json.dumps(answer))


# --------------------------------------------------------------------------- flattening


def flatten(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """(path, leaf) of a JSON value; list items of dicts named by their id/gate/kind when
    they have one, so a reordering is not mistaken for a change; base64 payloads of
    receipts decoded and flattened too."""
    if isinstance(value, dict):
        for key in sorted(value):
            yield from flatten(value[key], f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            name = None
            if isinstance(item, dict):
                for key in ("id", "gate", "judge", "kind"):
                    if isinstance(item.get(key), str):
                        name = f"{key}={item[key]}"
                        break
            yield from flatten(item, f"{path}[{name or index}]")
    elif isinstance(value, str) and path.endswith(".payload") and len(value) > 40:
        try:
            decoded = json.loads(base64.b64decode(value))
        except ValueError:
            yield path, value
        else:
            yield from flatten(decoded, f"{path}<decoded>")
    else:
        yield path, value


def flatten_text(text: str, label: str) -> Iterator[tuple[str, Any]]:
    """A text output, line by line (JSON lines and JSON documents as JSON)."""
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict | list):
        yield from flatten(document, label)
        return
    for number, line in enumerate(text.splitlines()):
        try:
            row = json.loads(line)
        except ValueError:
            yield f"{label}:{number}", line
        else:
            yield from flatten(row, f"{label}:{number}")


def flatten_xml(text: str, label: str) -> Iterator[tuple[str, Any]]:
    root = ET.fromstring(text)
    for index, element in enumerate(root.iter()):
        yield f"{label}<{index}:{element.tag}>", (element.text or "").strip()
        for key in sorted(element.attrib):
            yield f"{label}<{index}:{element.tag}>@{key}", element.attrib[key]


@dataclass
class Outputs:
    """Every public output of one world, flattened: output name -> {path: leaf}."""

    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    operator_record: list[dict[str, Any]] = field(default_factory=list)
    """The operator's ``checks_recorded`` entries (not public): proof the spy ran."""

    def add(self, output: str, items: Iterator[tuple[str, Any]]) -> None:
        self.fields[output] = dict(items)

    def add_tree(self, root: Path, label: str) -> None:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            name = f"{label}/{path.relative_to(root)}"
            text = path.read_text(errors="replace")
            if path.suffix == ".xml":
                self.add(name, flatten_xml(text, name))
            else:
                self.add(name, flatten_text(text, name))
