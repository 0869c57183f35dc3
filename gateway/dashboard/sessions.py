"""Agent sessions for the dashboard, from the request records all replicas write (gateway/request_log.py):
every replica shows the same sessions, each opening to its requests in order."""

from __future__ import annotations

from typing import Any


def _input_tokens(record: dict[str, Any]) -> int:
    tokens = record["tokens"]
    return int(tokens["input"] + tokens["cache_read"] + tokens["cache_write"])


def _blocked(record: dict[str, Any]) -> bool:
    """The guard refused this request: it blocked the session (or stopped the agent with an error)."""
    return (record.get("guard") or "").split(";")[0] == "block" or record.get("error") == "agent_loop_stopped"


def sessions(records: list[dict[str, Any]], limit: int = 50) -> list[dict[str, Any]]:
    """The sessions among `records` (newest first), newest activity first, with their totals."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        if not record.get("session"):
            continue
        key = (record["tenant"], record["session"])
        view = found.setdefault(
            key,
            {"tenant": key[0], "session": key[1], "requests": 0, "cost_usd": 0.0, "last_seen": record["at"],
             "input_tokens": 0, "cache_read_tokens": 0, "blocked": False},
        )  # fmt: skip
        view["blocked"] = view["blocked"] or _blocked(record)
        view["requests"] += 1
        view["cost_usd"] += record["cost_usd"]
        view["input_tokens"] += _input_tokens(record)
        view["cache_read_tokens"] += record["tokens"]["cache_read"]
    shown = sorted(found.values(), key=lambda view: view["last_seen"], reverse=True)[:limit]
    for view in shown:
        inputs, read = view.pop("input_tokens"), view.pop("cache_read_tokens")
        view["hit_ratio"] = read / inputs if inputs else 0.0
        view["cost_usd"] = round(view["cost_usd"], 6)
    return shown


def session_view(tenant: str, session: str, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One session: its totals and its requests in order (`records`: that session's, newest first)."""
    listed = sessions(records, limit=1)
    if not listed:
        return None
    events = [
        {
            "id": r["id"],
            "t": r["at"],
            "model": r["route"] or r["model"],
            "status": r["status"],
            "source": r["source"] or "-",
            "cost_usd": r["cost_usd"],
            "guard": r["guard"],
            "prefix_break": r["prefix_break"],
            "cache": r["cache"],
            "compaction": r["compaction"],
        }
        for r in reversed(records)
    ]
    return {**listed[0], "tenant": tenant, "session": session, "events": events}
