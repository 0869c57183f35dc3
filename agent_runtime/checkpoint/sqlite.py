"""SQLite checkpointer (stdlib sqlite3). One row per checkpoint, one per changed channel version,
one per pending write."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import (
    BaseCheckpointer,
    Checkpoint,
    CheckpointTuple,
    NewCheckpoint,
    thread_key,
    write_slots,
)
from agent_runtime.checkpoint.serde import dumps, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL, ns TEXT NOT NULL, id TEXT NOT NULL, parent_id TEXT,
    ts REAL NOT NULL, body BLOB NOT NULL, metadata BLOB NOT NULL,
    PRIMARY KEY (thread_id, ns, id)
);
CREATE TABLE IF NOT EXISTS blobs (
    thread_id TEXT NOT NULL, ns TEXT NOT NULL, channel TEXT NOT NULL, version INTEGER NOT NULL,
    value BLOB,
    PRIMARY KEY (thread_id, ns, channel, version)
);
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL, ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,
    idx INTEGER NOT NULL, channel TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (thread_id, ns, checkpoint_id, task_id, idx)
);
"""


class SqliteCheckpointer(BaseCheckpointer):
    def __init__(self, path: str = ":memory:") -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _save(self, new: NewCheckpoint) -> None:
        (thread_id, ns), checkpoint = new.thread, new.checkpoint
        blob_rows = [
            (thread_id, ns, chan, version, None if value is MISSING else dumps(value))
            for chan, version, value in new.blobs
        ]
        body = dumps((checkpoint.channel_versions, checkpoint.versions_seen, checkpoint.updated_channels))
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?, ?)", blob_rows)
            self._conn.execute(
                "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, ns, checkpoint.id, new.parent_id, checkpoint.ts, body, dumps(new.metadata)),
            )

    def put_writes(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        thread_id, ns = thread_key(config)
        checkpoint_id = config["configurable"]["checkpoint_id"]
        rows = [
            (thread_id, ns, checkpoint_id, task_id, slot, chan, dumps(value))
            for slot, chan, value in write_slots(writes)
        ]
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany("INSERT OR REPLACE INTO writes VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def _tuple(self, thread_id: str, ns: str, row: tuple[Any, ...]) -> CheckpointTuple:
        checkpoint_id, parent_id, ts, body, metadata = row
        versions, seen, updated = loads(body)
        values: dict[str, Any] = {}
        for chan, version in versions.items():
            found = self._conn.execute(
                "SELECT value FROM blobs WHERE thread_id=? AND ns=? AND channel=? AND version=?",
                (thread_id, ns, chan, version),
            ).fetchone()
            if found is not None and found[0] is not None:
                values[chan] = loads(found[0])
        writes = self._conn.execute(
            "SELECT task_id, channel, value FROM writes WHERE thread_id=? AND ns=? AND checkpoint_id=? "
            "ORDER BY task_id, idx",
            (thread_id, ns, checkpoint_id),
        ).fetchall()
        checkpoint = Checkpoint(checkpoint_id, ts, values, versions, seen, updated)
        pending = [(t, c, loads(v)) for t, c, v in writes]
        return CheckpointTuple.saved((thread_id, ns), checkpoint, loads(metadata), parent_id, pending)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        thread_id, ns = thread_key(config)
        checkpoint_id = config["configurable"].get("checkpoint_id")
        columns = "SELECT id, parent_id, ts, body, metadata FROM checkpoints WHERE thread_id=? AND ns=?"
        with self._lock:
            if checkpoint_id:
                row = self._conn.execute(columns + " AND id=?", (thread_id, ns, checkpoint_id)).fetchone()
            else:
                row = self._conn.execute(columns + " ORDER BY id DESC LIMIT 1", (thread_id, ns)).fetchone()
            return None if row is None else self._tuple(thread_id, ns, row)

    def _namespaces(self, thread_id: str) -> set[str]:
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT ns FROM checkpoints WHERE thread_id=?", (thread_id,))
            return {ns for (ns,) in rows.fetchall()}

    def _list(self, thread_id: str, ns: str, bound: str | None, limit: int | None) -> Iterator[CheckpointTuple]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, parent_id, ts, body, metadata FROM checkpoints WHERE thread_id=? AND ns=? "
                + ("" if bound is None else "AND id<? ")
                + "ORDER BY id DESC LIMIT ?",
                (thread_id, ns, *(() if bound is None else (bound,)), -1 if limit is None else limit),
            ).fetchall()
            tuples = [self._tuple(thread_id, ns, row) for row in rows]
        yield from tuples

    def delete_thread(self, thread_id: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            for table in ("checkpoints", "blobs", "writes"):
                self._conn.execute(f"DELETE FROM {table} WHERE thread_id=?", (thread_id,))
