"""The ledger's questions as SQL, one text for both backends (`?` parameters, gateway/ledger/backend.py):
spend grouped by tenant, key, model, session or day; totals and savings by source; records in (at, id)
order for exports; and each tenant's and key's spend since a time (budget windows). Filters and paging
values are parameters; a grouping is one of GROUPS (its column comes from this table, never from a caller)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.ledger.rows import COLUMNS, text

GROUPS = {"tenant": "tenant", "key": "key_id", "model": "model", "session": "session_id", "day": "day"}
SPEND_USD = "SUM(cost_usd + side_cost_usd)"  # what the requests cost: their answer and the calls made for them
TOKENS = "SUM(input_tokens + cache_read_tokens + cache_write_tokens + output_tokens)"
SPEND = (
    f"COUNT(*), {SPEND_USD}, SUM(saved_usd), SUM(input_tokens), SUM(cache_read_tokens), "
    "SUM(cache_write_tokens), SUM(output_tokens), SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END)"
)
SPEND_FIELDS = ("requests", "cost_usd", "saved_usd", "input_tokens", "cache_read_tokens", "cache_write_tokens",
                "output_tokens", "errors")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Filters:
    """Which records; None: any. `since` inclusive, `until` exclusive (UNIX seconds)."""

    tenant: str | None = None
    key: str | None = None
    model: str | None = None
    session: str | None = None
    status: int | None = None
    since: float | None = None
    until: float | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        equal = (("tenant", self.tenant), ("key_id", self.key), ("model", self.model),
                 ("session_id", self.session), ("status", self.status))  # fmt: skip
        for column, value in equal:
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(text(value))  # as the value was stored
        if self.since is not None:
            clauses.append("at >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("at < ?")
            params.append(self.until)
        return " AND ".join(clauses) or "1 = 1", params


def spend_row(values: tuple[Any, ...]) -> dict[str, Any]:
    """A SPEND tuple as named amounts (an empty sum is a zero: no records, no spend)."""
    named = dict(zip(SPEND_FIELDS, values, strict=True))
    return {name: (float(value or 0) if name.endswith("_usd") else int(value or 0)) for name, value in named.items()}


def spend_by(group: str, filters: Filters, limit: int, offset: int) -> tuple[str, list[Any]]:
    """Spend per value of `group`, most first (then by value, so pages do not overlap)."""
    column, (where, params) = GROUPS[group], filters.where()
    sql = (
        f"SELECT {column}, {SPEND} FROM records WHERE {where} GROUP BY {column} "
        f"ORDER BY {SPEND_USD} DESC, {column} LIMIT ? OFFSET ?"
    )
    return sql, [*params, limit, offset]


def summed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The spend of several groups together (the totals of a grouping that fits one page)."""
    return {name: sum((row[name] for row in rows), 0.0 if name.endswith("_usd") else 0) for name in SPEND_FIELDS}


def spend_by_source(filters: Filters) -> tuple[str, list[Any]]:
    """Spend per source (`upstream`, `response_cache` ...): summed, the totals; and savings by source."""
    where, params = filters.where()
    return f"SELECT source, {SPEND} FROM records WHERE {where} GROUP BY source", params


def records_after(filters: Filters, after: tuple[float, str] | None, limit: int) -> tuple[str, list[Any]]:
    """The next `limit` records in (at, id) order after `after` (keyset paging: each page costs the same)."""
    where, params = filters.where()
    if after is not None:
        where += " AND (at > ? OR (at = ? AND id > ?))"
        params += [after[0], after[0], after[1]]
    return f"SELECT {', '.join(COLUMNS)} FROM records WHERE {where} ORDER BY at, id LIMIT ?", [*params, limit]


def spend_by_key_since(tenant: str, since: float | None) -> tuple[str, list[Any]]:
    """A tenant's spend (USD, tokens) per key since `since` (None: all the ledger holds)."""
    where, params = Filters(tenant=tenant, since=since).where()
    return f"SELECT key_id, {SPEND_USD}, {TOKENS} FROM records WHERE {where} GROUP BY key_id", params


def purge_before(cutoff: float) -> tuple[str, list[Any]]:
    return "DELETE FROM records WHERE at < ?", [cutoff]
