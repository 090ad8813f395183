"""Two `jurat serve` replicas under load while the PostgreSQL server itself restarts
(issue 30). Not collected by pytest: it restarts the machine's PostgreSQL, which every
other PostgreSQL test running beside it would feel; `tests/service/test_replicas.py` cuts
the replicas' sessions instead (what a restart does to its clients). Run it alone, as
root on a machine with Debian's cluster tools:

    .venv/bin/python tests/service/restart_postgres.py /tmp/jurat-pg-restart

Eight clients submit 120 artifacts to two replicas; after client 0's fifth submission
the server restarts (``pg_ctlcluster 15 main restart -m fast``). It ends with every
accepted job decided once, exactly the planned samples, `jurat replay` clean, and both
replicas listing every job; a submission the ledger could not record was answered 503
(and sent again), never 202 and never 500.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.service import test_replicas as t  # noqa: E402
from tests.service._support import make_env  # noqa: E402
from tests.support.postgres import fresh_database  # noqa: E402


def main(root: Path, cluster: tuple[str, str] = ("15", "main")) -> int:
    root.mkdir(parents=True, exist_ok=False)
    with fresh_database() as url:
        env = make_env(root, samples=t.SAMPLES, latency=100)
        env.ledger_url = url
        took: list[float] = []

        def restart() -> None:
            start = time.monotonic()
            subprocess.run(["pg_ctlcluster", *cluster, "restart", "-m", "fast"], check=True)
            took.append(time.monotonic() - start)

        with t.two_replicas(env) as (_procs, replicas, _restart):
            clients = t.load(env, replicas, restart, at=t.PER_CLIENT // 3)
            lists = [t.listed(base, env.auth("operator", "text")) for base in replicas.urls]
        accepted = t.settled(clients)
        refused = sum((c.refused for c in clients), start=Counter[int]())
        t.check_ledger(env, accepted)
        for jobs in lists:
            assert jobs == dict.fromkeys(accepted, "decided"), len(jobs)
        assert set(refused) <= {503}, refused
        print(f"restart took {took[0]:.1f} s; {len(accepted)} accepted, all decided once; "
              f"answered meanwhile: {dict(refused)}; replay clean; both replicas list all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
