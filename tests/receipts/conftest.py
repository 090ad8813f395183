"""Fixtures: one rubric campaign (3 sim judges), its signed receipt and a key pair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurat.receipts import PrivateKey, keygen, load_private_key, sign_statement
from jurat.receipts._statement import parse_statement
from tests.support.builders import rubric_case, statement_for


@pytest.fixture(scope="session")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("keys")
    keygen(out)
    return out


@pytest.fixture(scope="session")
def private_key(key_dir: Path) -> PrivateKey:
    return load_private_key(key_dir / "jurat.key")


@pytest.fixture(scope="session")
def pub_path(key_dir: Path) -> Path:
    return key_dir / "jurat.pub"


@pytest.fixture()
def statement() -> dict[str, Any]:
    return statement_for(
        *rubric_case(),
        inputs={
            "assignment": "asg-7",
            "upstream_receipts": [{"name": "stage1", "sha256": "2" * 64}],
        },
        judges_meta=[{"id": "A", "schema_id": "arcv.judge-decision/v1"}],
    )


@pytest.fixture()
def receipt(statement: dict[str, Any], private_key: PrivateKey) -> bytes:
    return sign_statement(parse_statement(statement), private_key)


@pytest.fixture()
def receipt_file(receipt: bytes, tmp_path: Path) -> Path:
    path = tmp_path / "c1.sigstore.json"
    path.write_bytes(receipt)
    return path
