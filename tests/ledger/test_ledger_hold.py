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
