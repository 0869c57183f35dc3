"""The ledger's tests run against both backends: SQLite in a file of the test's own and PostgreSQL on a
server of the suite's own (tests/postgres_target.py), a new database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_target import fresh_database, postgres_server


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    return fresh_database(request.getfixturevalue("postgres_url"))
