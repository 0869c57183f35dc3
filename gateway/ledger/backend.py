"""What the ledger asks of a database: open (and migrate), insert a batch of rows, run a query. Statements
are written once, with `?` for each parameter; a backend whose driver spells it otherwise translates. Values
always travel as parameters, never inside the statement's text."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from gateway.ledger.rows import COLUMNS

INSERT = (
    f"INSERT INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)}) "
    "ON CONFLICT (id) DO NOTHING"  # a batch written again after a lost answer counts once
)
APPLIED = "SELECT version FROM schema_migrations"
NOTE_APPLIED = "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"


class LedgerUnavailable(Exception):
    """The database could not answer."""


class LedgerBackend(ABC):
    name: str

    @abstractmethod
    async def open(self) -> None:
        """Connect and bring the schema up to date."""

    @abstractmethod
    async def insert(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Write the rows in one transaction."""

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement that changes rows; how many it changed."""

    @abstractmethod
    async def close(self) -> None: ...
