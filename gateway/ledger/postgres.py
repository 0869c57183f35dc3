"""The production ledger: PostgreSQL through psycopg 3's async connection. One connection, used by one
statement at a time (the writer's batches and the admin's rare queries); a failed one is dropped and the
next call connects again. Migrations run under an advisory lock, so replicas starting together take turns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg

from gateway.ledger.backend import APPLIED, INSERT, NOTE_APPLIED, LedgerBackend, LedgerUnavailable
from gateway.ledger.migrations import TABLE, pending

T = TypeVar("T")
MIGRATION_LOCK = 0x63676C6564676572  # any fixed number: this ledger's migrations, across replicas


def _pg(sql: str) -> str:
    """psycopg's parameter marker; our statements hold no other `?` and no `%`."""
    return sql.replace("?", "%s")


class PostgresLedger(LedgerBackend):
    name = "postgres"

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url, self.timeout_s = url, timeout_s
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = await psycopg.AsyncConnection.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, round(self.timeout_s)),
                options=f"-c statement_timeout={round(self.timeout_s * 1000)}",
            )
        return self._conn

    async def _run(self, call: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        async with self._lock:
            try:
                return await call(await self._connection())
            except psycopg.Error as exc:  # its text may name the server and user: only the type goes on
                if self._conn is not None:
                    await self._conn.close()
                self._conn = None
                raise LedgerUnavailable(type(exc).__name__) from exc

    async def open(self) -> None:
        async def migrate(conn: psycopg.AsyncConnection[Any]) -> None:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                await conn.execute(TABLE)
                applied = {version for (version,) in await (await conn.execute(APPLIED)).fetchall()}
                for migration in pending("postgres", applied):
                    for statement in migration.statements():
                        await conn.execute(statement)
                    stamp = datetime.now(UTC).isoformat()
                    await conn.execute(_pg(NOTE_APPLIED), (migration.version, migration.name, stamp))

        await self._run(migrate)

    async def insert(self, rows: Sequence[tuple[Any, ...]]) -> None:
        async def write(conn: psycopg.AsyncConnection[Any]) -> None:
            async with conn.transaction(), conn.cursor() as cursor:
                await cursor.executemany(_pg(INSERT), rows)

        await self._run(write)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async def read(conn: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            return await (await conn.execute(_pg(sql), params)).fetchall()

        return await self._run(read)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        async def change(conn: psycopg.AsyncConnection[Any]) -> int:
            return (await conn.execute(_pg(sql), params)).rowcount

        return await self._run(change)

    async def close(self) -> None:
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
