"""A request record (gateway/request_log.py `build`) as a ledger row, and a row back as a record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

# The table's columns in insert order (gateway/ledger/migrations/*/0001_records.sql).
COLUMNS = (
    "id", "at", "day", "tenant", "key_id", "session_id", "model", "route", "provider", "api", "stream", "status",
    "error", "error_code", "source", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
    "cost_usd", "side_cost_usd", "cost_basis", "saved_usd", "cache", "prefix_break", "guard", "compaction",
    "upstream_ms", "ttft_ms", "total_ms", "stages_ms", "content",
)  # fmt: skip
TOKEN_COLUMNS = {"input": "input_tokens", "cache_read": "cache_read_tokens",
                 "cache_write": "cache_write_tokens", "output": "output_tokens"}  # fmt: skip
RENAMED = {"key_id": "key", "session_id": "session"}  # the record's names of columns named apart (SQL words)
PLAIN = [c for c in COLUMNS if c not in RENAMED and c not in TOKEN_COLUMNS.values() and c != "day"]


MAX_COUNT = 2**62  # tokens above any real count: kept in a BIGINT however odd a provider's usage


def text(value: Any) -> Any:
    """A string as every database stores it: no NUL (PostgreSQL's text refuses it), no lone surrogate
    (not UTF-8); callers chose some of these strings, and one bad value would lose its whole batch."""
    if not isinstance(value, str):
        return value
    return value.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")


def utc_day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def _json(value: Any) -> str | None:
    return orjson.dumps(value).decode() if value is not None else None


def to_row(record: dict[str, Any]) -> tuple[Any, ...]:
    """The row of a record; fields a record lacks are empty (a zero for amounts: there was none)."""
    tokens = record.get("tokens") or {}
    values = {
        **{column: text(record.get(column)) for column in PLAIN},
        "day": utc_day(record["at"]),
        "key_id": text(record.get("key")),
        "session_id": text(record.get("session")),
        **{column: min(int(tokens.get(kind) or 0), MAX_COUNT) for kind, column in TOKEN_COLUMNS.items()},
        "stream": bool(record.get("stream")),
        "cost_usd": float(record.get("cost_usd") or 0.0),
        "side_cost_usd": float(record.get("side_cost_usd") or 0.0),
        "saved_usd": float(record.get("saved_usd") or 0.0),
        "stages_ms": _json(record.get("stages_ms")),
        "content": _json(record.get("content")),
    }
    return tuple(values[column] for column in COLUMNS)


def to_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row in the record's own shape (for exports)."""
    values = dict(zip(COLUMNS, row, strict=True))
    record: dict[str, Any] = {RENAMED.get(c, c): values[c] for c in COLUMNS if c not in TOKEN_COLUMNS.values()}
    record["tokens"] = {kind: values[column] for kind, column in TOKEN_COLUMNS.items()}
    record["stream"] = bool(values["stream"])
    record["stages_ms"] = orjson.loads(values["stages_ms"]) if values["stages_ms"] else {}
    record["content"] = orjson.loads(values["content"]) if values["content"] else None
    return record
