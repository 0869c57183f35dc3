"""The embedded ledger: SQLite from the standard library, in one worker thread of its own (its calls
block), so the event loop never waits on the disk. WAL mode: readers do not wait for the writer."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

from gateway.ledger.backend import APPLIED, INSERT, NOTE_APPLIED, LedgerBackend, LedgerUnavailable
from gateway.ledger.migrations import TABLE, pending

T = TypeVar("T")
MEMORY = ":memory:"


def sqlite_path(url: str) -> str:
    """sqlite:///relative, sqlite:////absolute; sqlite:// alone: in memory."""
    path = url.removeprefix("sqlite://")
    return path[1:] if path.startswith("/") else path or MEMORY


class SqliteLedger(LedgerBackend):
    name = "sqlite"

    def __init__(self, url: str, timeout_s: float) -> None:
        self.path, self.timeout_s = sqlite_path(url), timeout_s
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-sqlite")
        self._db: sqlite3.Connection | None = None

    async def _run(self, call: Callable[[sqlite3.Connection], T]) -> T:
        def in_thread() -> T:
            if self._db is None:
                raise LedgerUnavailable("the ledger is not open")
            return call(self._db)

        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, in_thread)
        except sqlite3.Error as exc:
            raise LedgerUnavailable(type(exc).__name__) from exc

    async def open(self) -> None:
        def connect() -> None:
            db = sqlite3.connect(self.path, timeout=self.timeout_s, check_same_thread=False, isolation_level=None)
            if self.path != MEMORY:
                _wal(db, time.monotonic() + self.timeout_s)
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last commits, never the file
            _migrate(db)
            self._db = db

        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, connect)
        except sqlite3.Error as exc:
            raise LedgerUnavailable(type(exc).__name__) from exc

    async def insert(self, rows: Sequence[tuple[Any, ...]]) -> None:
        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.executemany(INSERT, rows)

        await self._run(write)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._run(lambda db: db.execute(sql, params).fetchall())

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return await self._run(lambda db: db.execute(sql, params).rowcount)

    async def close(self) -> None:
        def shut() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        await asyncio.get_running_loop().run_in_executor(self._thread, shut)
        self._thread.shutdown(wait=False)


class _transaction:
    """BEGIN IMMEDIATE .. COMMIT (ROLLBACK on an error): the write lock from the start, so two processes
    migrating at once take turns."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _migrate(db: sqlite3.Connection) -> None:
    db.execute(TABLE)
    with _transaction(db):
        applied = {version for (version,) in db.execute(APPLIED)}
        for migration in pending("sqlite", applied):
            for statement in migration.statements():
                db.execute(statement)
            db.execute(NOTE_APPLIED, (migration.version, migration.name, datetime.now(UTC).isoformat()))


def _wal(db: sqlite3.Connection, deadline: float) -> None:
    """Switch to WAL. Replicas opening a new file together race for it, and SQLite answers the losers "database
    is locked" at once (its busy timeout does not cover a journal-mode change): try again until `deadline`."""
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
