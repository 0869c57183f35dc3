"""A tool call's request record: the shape of a model request's (gateway/request_log.py), so the request
views, the dashboard and the ledger read it as they are; the tool's arguments and result are not in it.

A refused or failed call carries the status and error kind a model request refused for the same reason
gets, so its error class (gateway/error_classes.py) is the same on both sides: a guard stop is
``agent_loop_stopped`` (class guard), a rate limit ``rate_limit`` with ``rate_limit_exceeded`` (class
rate_limit), a tool-call budget ``budget_exceeded`` (class budget), an upstream's failure ``upstream``
(class provider). The call's own outcome is kept in ``mcp.outcome``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import STATUS_BY_KIND, ErrorKind
from gateway.mcp.caller import McpCaller

API = "mcp"
ERROR_BY_OUTCOME = {
    "denied": ErrorKind.PERMISSION,
    "guard_stopped": ErrorKind.AGENT_STOPPED,
    "rate_limited": ErrorKind.RATE_LIMIT,
    "budget_exceeded": ErrorKind.BUDGET,
    "upstream_error": ErrorKind.UPSTREAM,
    "too_large": ErrorKind.UPSTREAM,
    "failed": ErrorKind.INTERNAL,  # cancelled or crashed
}


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
    upstream_client: str = ""  # which client made the upstream call: direct or sdk (gateway/mcp/direct.py)
    started: float = field(default_factory=time.perf_counter)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def record(self) -> dict[str, Any]:
        error = ERROR_BY_OUTCOME.get(self.outcome)
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
            "status": STATUS_BY_KIND[error] if error is not None else 200,
            "error": error.value if error is not None else None,
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
            "mcp": {
                "server": self.server,
                "outcome": self.outcome,
                "result_bytes": self.result_bytes,
                "upstream_client": self.upstream_client or None,
            },
        }
