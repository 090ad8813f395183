"""One writer per campaign and ledger (issue 27): a run holds its campaign exclusively, the
servers of a campaign share it; both backends (ledger/_hold.py)."""

from __future__ import annotations

import pytest

from jurat.errors import ConfigError
from tests.ledger.conftest import Target


def test_a_second_writer_is_refused_naming_the_holder(target: Target) -> None:
    with target.open() as one, target.open() as two:
        with one.hold_campaign("c", holder="jurat run pid 1 on host-a"):
            with pytest.raises(ConfigError) as refused:
                with two.hold_campaign("c", holder="jurat run pid 2 on host-b"):
                    pass  # pragma: no cover - refused above
            assert "held on this ledger by jurat run pid 1 on host-a" in str(refused.value)
            with pytest.raises(ConfigError):
                with two.hold_campaign("c", holder="jurat serve", shared=True):
                    pass  # pragma: no cover
            # Another campaign of the same ledger is free.
            with two.hold_campaign("other", holder="jurat run pid 2"):
                pass
        # Released with the block: the next run takes it.
        with two.hold_campaign("c", holder="jurat run pid 2"):
            pass


def test_servers_share_a_campaign_and_keep_a_run_out(target: Target) -> None:
    with target.open() as one, target.open() as two, target.open() as three:
        with one.hold_campaign("c", holder="jurat serve a", shared=True), \
                two.hold_campaign("c", holder="jurat serve b", shared=True):
            with pytest.raises(ConfigError) as refused:
                with three.hold_campaign("c", holder="jurat run"):
                    pass  # pragma: no cover
            assert "jurat serve" in str(refused.value)


def _cut_sessions(application_name: str) -> int:
    """End the PostgreSQL sessions named so, as a restarted server or an administrator
    would: their session advisory locks go with them."""
    import sqlalchemy as sa

    from tests.support.postgres import pg_engine

    engine = pg_engine().execution_options(isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = :n"), {"n": application_name}).scalar() or 0)
    finally:
        engine.dispose()


@pytest.fixture
def check_every_write(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each write checks the hold's session, not only a second after the last check.
    from jurat.ledger._hold import _AdvisoryHold

    monkeypatch.setattr(_AdvisoryHold, "CHECK_S", 0.0)


@pytest.mark.postgres
@pytest.mark.usefixtures("check_every_write")
def test_a_cut_session_takes_its_hold_again_before_the_next_write(pg_target: Target) -> None:
    with pg_target.open() as one, pg_target.open() as two:
        with one.hold_campaign("c", holder="jurat run pid 1 on host-a"):
            assert _cut_sessions("jurat jurat run pid 1 on host-a") == 1
            one.append("job_received", "j1", {"n": 1}, campaign_id="c", artifact_id="a")
            # Held again: a second run is still refused.
            with pytest.raises(ConfigError, match="held on this ledger by jurat run pid 1"):
                with two.hold_campaign("c", holder="jurat run pid 2"):
                    pass  # pragma: no cover
        # Released at the block's end, although its first session was cut.
        with two.hold_campaign("c", holder="jurat run pid 2"):
            pass


@pytest.mark.postgres
@pytest.mark.usefixtures("check_every_write")
def test_a_hold_lost_to_another_writer_refuses_the_next_write(pg_target: Target) -> None:
    from jurat.errors import LedgerError

    with pg_target.open() as one, pg_target.open() as two:
        with one.hold_campaign("c", holder="jurat run pid 1 on host-a"):
            one.append("job_received", "j1", {"n": 1}, campaign_id="c", artifact_id="a")
            assert _cut_sessions("jurat jurat run pid 1 on host-a") == 1
            # In the gap another run takes the campaign: the first may not write again.
            with two.hold_campaign("c", holder="jurat run pid 2 on host-b"):
                with pytest.raises(LedgerError) as lost:
                    one.append("job_received", "j2", {"n": 2}, campaign_id="c",
                               artifact_id="b")
                assert "was cut, and meanwhile" in str(lost.value)
                assert "jurat run pid 2 on host-b" in str(lost.value)
            # Nothing the refused write carried was recorded.
            assert [e.job_id for e in one.entries(campaign_id="c")] == ["j1"]
