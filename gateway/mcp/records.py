"""A tool call's request record: the shape of a model request's (gateway/request_log.py), so the request
views, the dashboard and the ledger read it as they are; the tool's arguments and result are not in it."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from gateway.mcp.caller import McpCaller

API = "mcp"


@dataclass(eq=False)
class ToolCall:
    """What one tool call did, filled in as it goes."""

    caller: McpCaller
    name: str  # the public name the caller asked for (capped in the record)
    server: str = "unknown"  # a configured server's name, once the name resolved to one
    outcome: str = "failed"  # until the call completes (a cancelled or crashed call stays "failed")
    guard: str | None = None  # the x-cachegate-guard value of the decision, if the guard acted
    error_code: str | None = None
    result_bytes: int = 0
    upstream_tool: str = ""  # the tool's own name at its server
    upstream_start: float | None = None  # perf_counter when the call went upstream, if it did
    upstream_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def record(self) -> dict[str, Any]:
        failed = self.outcome not in ("ok", "tool_error")
        return {
            "id": self.id,
            "at": time.time(),
            "tenant": self.caller.tenant,
            "key": self.caller.identity.id,
            "session": self.caller.session_id,
            "model": self.name[:200],
            "route": self.server,
            "provider": self.server,
            "api": API,
            "stream": False,
            "status": 403 if self.outcome in ("denied", "guard_stopped") else 502 if failed else 200,
            "error": self.outcome if failed else None,
            "error_code": self.error_code,
            "source": "mcp",
            "tokens": {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0},  # tools bill no tokens
            "cost_usd": 0.0,
            "cost_basis": "list",
            "side_cost_usd": 0.0,
            "saved_usd": 0.0,
            "cache": None,
            "prefix_break": None,
            "guard": self.guard,
            "compaction": None,
            "stages_ms": {},
            "upstream_ms": round(self.upstream_s * 1000, 2),
            "ttft_ms": None,
            "total_ms": round((time.perf_counter() - self.started) * 1000, 2),
            "mcp": {"server": self.server, "outcome": self.outcome, "result_bytes": self.result_bytes},
        }
