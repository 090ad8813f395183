"""Two `jurat serve` replicas on one PostgreSQL ledger, under load and faults: one replica
SIGKILLed and started again, and the replicas' database connections cut. Every job a
client was told was accepted (202) ends decided, with one receipt and exactly the planned
samples in the ledger, and `jurat replay` finds the ledger clean."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from jurat.ledger import open_ledger
from tests.service._support import Env, artifact, make_env, subprocess_server
from tests.support.cli import invoke
from tests.support.postgres import fresh_database

pytestmark = pytest.mark.slow

SAMPLES = 2
CLIENTS = 8
PER_CLIENT = 15  # 120 submissions
LEASE = ("--lease-s", "3")


class Replicas:
    """The live replicas' URLs; a client tries its own first, then the others."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.lock = threading.Lock()

    def order(self, home: int) -> list[str]:
        with self.lock:
            urls = list(self.urls)
        return urls[home % len(urls):] + urls[:home % len(urls)]

    def replace(self, old: str, new: str) -> None:
        with self.lock:
            self.urls = [new if u == old else u for u in self.urls]


class Client:
    """One client: submits its artifacts, each to its replica or, when that fails, to the
    next; then long-polls (``?wait=``) every accepted job until it is decided."""

    def __init__(self, n: int, replicas: Replicas, headers: dict[str, str]) -> None:
        self.n, self.replicas, self.headers = n, replicas, headers
        self.accepted: list[str] = []
        self.refused: Counter[int] = Counter()  # statuses other than 202
        self.decided: dict[str, str] = {}

    def _call(self, method: str, path: str, **kw: object) -> httpx.Response:
        last: Exception | None = None
        for _ in range(200):
            for url in self.replicas.order(self.n):
                try:
                    return httpx.request(method, url + path, headers=self.headers,
                                         timeout=30, **kw)  # type: ignore[arg-type]
                except httpx.TransportError as exc:
                    last = exc
            time.sleep(0.1)
        raise AssertionError(f"no replica answered: {last}")

    def submit(self, k: int) -> None:
        body = artifact(f"e{self.n}-{k}", f"Essay {self.n}-{k}.")
        for _ in range(100):
            r = self._call("POST", "/v1/campaigns/text/jobs", json=body)
            if r.status_code == 202:
                self.accepted.append(r.json()["job_id"])
                return
            self.refused[r.status_code] += 1
            assert r.status_code >= 500 or r.status_code == 409, r.text
            time.sleep(0.1)  # the same body again: the same job
        raise AssertionError("never accepted")

    def settle(self) -> None:
        deadline = time.monotonic() + 45
        for job in self.accepted:
            while time.monotonic() < deadline:
                r = self._call("GET", f"/v1/jobs/{job}", params={"wait": 5})
                status = r.json().get("status") if r.status_code == 200 else None
                if status in ("decided", "failed"):
                    self.decided[job] = status
                    break
                time.sleep(0.05)

    def run(self, between: Callable[[int], None]) -> None:
        for k in range(PER_CLIENT):
            self.submit(k)
            between(k)
        self.settle()


@contextlib.contextmanager
def two_replicas(env: Env) -> Iterator[tuple[list[object], Replicas, Callable[[int], None]]]:
    """Two replicas; ``restart(i)`` SIGKILLs replica i and starts another in its place."""
    stack = contextlib.ExitStack()
    with stack:
        procs: list[object] = []
        urls = []
        for _ in range(2):
            proc, url = stack.enter_context(subprocess_server(env, ("text",), *LEASE))
            procs.append(proc)
            urls.append(url)
        replicas = Replicas(urls)

        def restart(i: int) -> None:
            proc = procs[i]
            proc.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]
            proc.wait(timeout=30)  # type: ignore[attr-defined]
            new, url = stack.enter_context(subprocess_server(env, ("text",), *LEASE))
            procs[i] = new
            replicas.replace(urls[i], url)
            urls[i] = url

        yield procs, replicas, restart


def check_ledger(env: Env, accepted: set[str]) -> None:
    """One job_received and one receipt per accepted job, every planned sample once."""
    with open_ledger(env.ledger_url) as ledger:
        received = Counter(e.job_id for e in ledger.entries(kind="job_received"))
        receipts = Counter(e.job_id for e in ledger.entries(kind="receipt"))
        samples = Counter((e.job_id, e.payload["vote"]["judge"],
                           e.payload["vote"]["criterion"], e.payload["vote"]["sample"])
                          for e in ledger.entries(kind="sample_recorded"))
    assert set(received) == accepted and set(received.values()) == {1}
    assert set(receipts) == accepted and set(receipts.values()) == {1}
    assert set(samples.values()) == {1}, [k for k, v in samples.items() if v > 1][:5]
    assert len(samples) == len(accepted) * 3 * SAMPLES  # three judges
    replay = invoke("replay", env.ledger_url, "--key", str(env.pub))
    assert replay.exit_code == 0, replay.output


def load(env: Env, replicas: Replicas, fault: Callable[[], None], at: int) -> list[Client]:
    """CLIENTS clients; client 0 sets off ``fault`` after its ``at``-th submission."""
    headers = env.auth("contributor", "text", "alice")
    clients = [Client(n, replicas, headers) for n in range(CLIENTS)]

    def between(n: int) -> Callable[[int], None]:
        return (lambda k: fault() if k == at else None) if n == 0 else (lambda k: None)

    with ThreadPoolExecutor(CLIENTS) as pool:
        for done in [pool.submit(c.run, between(c.n)) for c in clients]:
            done.result()
    return clients


def settled(clients: list[Client]) -> set[str]:
    accepted = {j for c in clients for j in c.accepted}
    decided = {j: s for c in clients for j, s in c.decided.items()}
    assert len(accepted) == CLIENTS * PER_CLIENT
    assert set(decided) == accepted, f"{len(accepted) - len(decided)} accepted jobs undecided"
    assert set(decided.values()) == {"decided"}
    return accepted


def listed(base: str, headers: dict[str, str]) -> dict[str, str]:
    """Every job ``GET /v1/jobs`` lists to the token on the replica at ``base``, with its
    status, through every page."""
    jobs: dict[str, str] = {}
    cursor: str | None = None
    while True:
        params = {"limit": 50, **({"cursor": cursor} if cursor else {})}
        page = httpx.get(base + "/v1/jobs", headers=headers, params=params, timeout=30)
        assert page.status_code == 200, page.text
        body = page.json()
        jobs.update({j["job_id"]: j["status"] for j in body["jobs"]})
        cursor = body["next"]
        if cursor is None:
            return jobs


def test_one_of_two_replicas_sigkilled_under_load(tmp_path: Path) -> None:
    with fresh_database() as url:
        env = make_env(tmp_path, samples=SAMPLES, latency=100)
        env.ledger_url = url
        with two_replicas(env) as (_procs, replicas, restart):
            clients = load(env, replicas, lambda: restart(1), at=PER_CLIENT // 3)
            # Each replica lists every job, whichever replica accepted or ran it: the
            # restarted one read them at its start, the other reads what it missed.
            lists = [listed(base, env.auth(role, "text", "alice"))
                     for base in replicas.urls for role in ("contributor", "operator")]
        accepted = settled(clients)
        for jobs in lists:
            assert jobs == dict.fromkeys(accepted, "decided")
        check_ledger(env, accepted)
        admin = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with admin.connect() as conn:
                taken = conn.execute(sa.text("SELECT sum(takeovers), count(*) "
                                             "FROM jurat_leases")).one()
        finally:
            admin.dispose()
        # The killed replica left leased jobs, which a live replica took over and finished.
        assert taken[0] > 0 and taken[1] == len(accepted), taken


def test_database_connections_cut_under_load(tmp_path: Path) -> None:
    with fresh_database() as url:
        env = make_env(tmp_path, samples=SAMPLES, latency=100)
        env.ledger_url = url
        name = url.rsplit("/", 1)[1]
        admin = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1),
                                 isolation_level="AUTOCOMMIT")
        cut = []

        def terminate() -> None:
            # What a restarted PostgreSQL server does to its clients: every session of the
            # replicas ends at once (we may not restart the server itself here).
            for _ in range(3):
                with admin.connect() as conn:
                    cut.append(conn.execute(sa.text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = :d AND pid <> pg_backend_pid()"), {"d": name}).scalar())
                time.sleep(0.3)

        try:
            with two_replicas(env) as (_procs, replicas, _restart):
                clients = load(env, replicas, terminate, at=PER_CLIENT // 3)
                # The replicas still serve after their sessions were cut.
                for base in replicas.urls:
                    assert httpx.get(base + "/healthz").status_code == 200
        finally:
            admin.dispose()
        assert sum(cut) > 0  # sessions were cut
        accepted = settled(clients)
        check_ledger(env, accepted)
