"""How a whole `jurat run` scales with campaign size: sim campaigns from a JSON Lines dataset.

    .venv/bin/python bench/run_scale.py [--sizes 1000,10000,100000] [--backends sqlite,pg]
                                        [--no-write]

For each size and ledger backend, one `jurat run` command (with its default worker
processes: one per core) evaluates a campaign whose
artifacts are the rows of a JSON Lines dataset, judged by 3 `sim` judges x 5 samples
(seeded, no latency): 15 judge calls per artifact, each a ledger entry. Reported: wall
time per artifact and its ratio to the smallest size measured in the same run (the
baseline: linear scaling keeps it near 1), the process's CPU time and peak RSS (from
``wait4``), and a check that every artifact ended with exactly one receipt, in the ledger
and in the output directory. PostgreSQL runs get a fresh database each, dropped after.

100,000 artifacts is 1.5 million judge samples and about 1.8 million ledger entries: it
takes a while on two shared cores. Results go to bench/README.md between the
``run_scale`` markers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from _readme import write_section  # noqa: E402  (bench/ is on sys.path when a script runs)
from run_e2e import _env, _pg_database, timed  # noqa: E402

CAMPAIGN = """\
[campaign]
id = "bench-scale"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "bench/1"
threshold = 0.5
criteria = [
  { id = "correctness", weight = 0.5 },
  { id = "reasoning", weight = 0.5 },
]
""" + "".join(f"""
[[judges]]
id = "sim-{j}"
provider = "sim"
reliability = 0.9
seed = {j}
samples = 5
""" for j in range(3)) + """
[[datasets]]
path = "items.jsonl"
"""


def write_dataset(path: Path, n: int) -> None:
    """``n`` short answers as JSON Lines; half should be accepted, half rejected."""
    with path.open("w") as out:
        for i in range(n):
            out.write(json.dumps({
                "id": f"a{i:07d}", "task": f"t{i % 100}", "contributor": f"c{i % 7}",
                "text": f"Answer {i}: the result is {i * 3}, since {i} x 3 = {i * 3}.",
                "truth": "accept" if i % 2 else "reject",
            }) + "\n")


def receipts_per_artifact(url: str) -> Counter[str]:
    """How many receipts each artifact has in the ledger at ``url``."""
    from jurat.ledger import open_ledger

    ledger = open_ledger(url, create=False, checkpoint_path=os.devnull)
    try:
        return Counter(e.artifact_id or "" for e in ledger.entries(kind="receipt"))
    finally:
        ledger.close()


def run_once(n: int, backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        camp = work / "camp"
        camp.mkdir()
        (camp / "campaign.toml").write_text(CAMPAIGN)
        write_dataset(camp / "items.jsonl", n)
        env = _env(work)
        keys = work / "keys"
        subprocess.run([sys.executable, "-m", "jurat", "keygen", "--out", str(keys)], env=env,
                       check=True, capture_output=True)
        drop = None
        if backend == "pg":
            url, drop = _pg_database()
        else:
            url = f"sqlite:///{work / 'ledger.db'}"
        try:
            result = timed([sys.executable, "-m", "jurat", "run", str(camp / "campaign.toml"),
                            "--out", str(work / "out"), "--ledger", url, "--key",
                            str(keys / "jurat.key"), "--quiet"], cwd=work, env=env)
            if result["code"] not in (0, 1, 2):
                raise RuntimeError(f"jurat run exited {result['code']}:\n"
                                   f"{result['output'][-3000:]}")
            counts = receipts_per_artifact(url)
            files = sum(1 for _ in (work / "out").glob("*.sigstore.json"))
        finally:
            if drop is not None:
                drop()
    expected = {f"a{i:07d}" for i in range(n)}
    result["one_receipt_each"] = (set(counts) == expected and set(counts.values()) == {1}
                                  and files == n)
    result["n"] = n
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated artifact counts; the first is the baseline")
    parser.add_argument("--backends", default="sqlite,pg")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = args.backends.split(",")
    names = {"sqlite": "SQLite", "pg": "PostgreSQL"}
    lines = ["| ledger | artifacts | judge calls | wall s | ms per artifact | vs "
             f"{sizes[0]:,} | CPU s | peak RSS MiB | one receipt each |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    load = os.getloadavg()
    for backend in backends:
        base: float | None = None
        for n in sizes:
            print(f"{names[backend]}: {n:,} artifacts …", flush=True)
            r = run_once(n, backend)
            per = 1000 * r["wall"] / n
            base = per if base is None else base
            print(f"  {r['wall']:.1f} s, {per:.2f} ms/artifact ({per / base:.2f}x), "
                  f"peak RSS {r['rss_mib']:.0f} MiB, one receipt each: {r['one_receipt_each']}",
                  flush=True)
            lines.append(f"| {names[backend]} | {n:,} | {15 * n:,} | {r['wall']:.1f} | "
                         f"{per:.2f} | {per / base:.2f}x | {r['cpu']:.1f} | "
                         f"{r['rss_mib']:.0f} | {'yes' if r['one_receipt_each'] else 'NO'} |")
            if not args.no_write:  # row by row: a long run stopped part-way keeps its rows
                write_section("run_scale", _text(load, lines))
    text = _text(load, lines)
    print()
    print(text)
    if not args.no_write:
        print("results written to bench/README.md")
    return 0


def _text(load: tuple[float, float, float], lines: list[str]) -> str:
    machine = f"{platform.python_implementation()} {platform.python_version()}, " \
              f"{os.cpu_count()} cores"
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = (f"Measured {stamp} on {machine}: one `jurat run` command per row (its default "
            "worker processes, one per core; CPU is all of them, peak RSS the largest), 3 sim "
            "judges x 5 samples per artifact, artifacts from a JSON Lines dataset; \"vs\" is the "
            "time per artifact against the smallest size of the same backend in this run. "
            f"Load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (the machine "
            "is shared).\n\n"
            + "\n".join(lines) + "\n")
    return text


if __name__ == "__main__":
    sys.exit(main())
