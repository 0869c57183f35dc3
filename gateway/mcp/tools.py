"""tools/list and tools/call across the upstreams: listings aggregated under per-server prefixes and cut
to what the caller's key may use; calls checked (access, then the guard's block), forwarded, bounded,
judged by the guard, recorded.

A tool the key may not use answers like a tool that does not exist (INVALID_PARAMS, the same text), so a
refusal does not tell which tools exist. The guard's stop and block are an MCP error with its own code,
which clients show to the model as the tool call's error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import Tracer

from agent_runtime.guard import Action, Decision, make_tool_step
from gateway.guard.reply import header_value
from gateway.logs import log_failure
from gateway.mcp import spans
from gateway.mcp.caller import CURRENT_CALLER, McpCaller, caller_of
from gateway.mcp.errors import AGENT_STOPPED, not_available, upstream_failed
from gateway.mcp.guard import ToolGuard, ToolSession
from gateway.mcp.limits import CallLimits
from gateway.mcp.metrics import McpMetrics
from gateway.mcp.naming import public_name, split_name
from gateway.mcp.records import ToolCall
from gateway.mcp.upstream import Upstream, UpstreamError, Upstreams
from gateway.request_log import RequestLog

log = logging.getLogger("cachegate.mcp")


def _stopped(decision: Decision) -> MCPError:
    assert decision.detection is not None and decision.message is not None
    data = {"type": "agent_loop_stopped", "reason": decision.detection.reason.name, "retry": False}
    return MCPError(AGENT_STOPPED, decision.message, data)


class Tools:
    def __init__(
        self,
        upstreams: Upstreams,
        guard: ToolGuard,
        metrics: McpMetrics,
        requests: RequestLog,
        tracer: Tracer | None,
        max_bytes: int,
        limits: CallLimits | None = None,
    ) -> None:
        self.upstreams, self.guard, self.metrics, self.requests = upstreams, guard, metrics, requests
        self.tracer, self.max_bytes, self.limits = tracer, max_bytes, limits
        # Each server's input schemas by upstream tool name, as last listed: the SDK's check of a call's
        # Mcp-Param headers reads them here instead of running a whole listing (every upstream) per call.
        self._schemas: dict[str, dict[str, dict[str, Any]]] = {}

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = caller_of(ctx)
        access = caller.policy.mcp
        servers = [u for u in self.upstreams.by_name.values() if access.server_allowed(u.name)]
        listings = await asyncio.gather(
            *(u.list_tools(access.credentials.get(u.name)) for u in servers), return_exceptions=True
        )
        tools: list[types.Tool] = []
        for upstream, listed in zip(servers, listings, strict=True):
            if isinstance(listed, BaseException):  # one server down hides its tools only
                self.metrics.errors.labels("list").inc()
                continue
            self._schemas[upstream.name] = {tool.name: tool.input_schema for tool in listed}
            for tool in listed:
                name = public_name(upstream.name, tool.name)
                if access.tool_allowed(upstream.name, name):
                    tools.append(tool.model_copy(update={"name": name}))
        return types.ListToolsResult(tools=tools)

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's input schema by public name, from its server's last listing. None: not listed yet, or
        not a tool of this caller's (the SDK then skips the header check, as when its listing misses the
        tool, and the call answers "Unknown tool": a refusal tells no more than before)."""
        target, caller = split_name(name), CURRENT_CALLER.get()
        if target is None or caller is None or not caller.policy.mcp.tool_allowed(target[0], name):
            return None
        return self._schemas.get(target[0], {}).get(target[1])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await self.call(caller_of(ctx), params.name, params.arguments)

    async def call(self, caller: McpCaller, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """One tool call of an authenticated caller, from start to record (MCPError: the call's refusal)."""
        call = ToolCall(caller, name)
        try:
            return await self._call(call, arguments)
        finally:
            self.metrics.tool_calls.labels(call.server, call.outcome).inc()
            self.metrics.tool_seconds.labels(call.server).observe(time.perf_counter() - call.started)
            record = call.record()
            self.requests.add(record)
            spans.export(self.tracer, call, record)

    def _resolve(self, call: ToolCall) -> tuple[Upstream, str]:
        target = split_name(call.name)
        upstream = self.upstreams.get(target[0]) if target is not None else None
        if target is None or upstream is None or not call.caller.policy.mcp.tool_allowed(upstream.name, call.name):
            call.outcome, call.error_code = "denied", "tool_not_available"
            raise not_available("tool", call.name)
        call.server = upstream.name
        return upstream, target[1]

    async def _call(self, call: ToolCall, arguments: dict[str, Any] | None) -> types.CallToolResult:
        upstream, tool = self._resolve(call)
        if self.limits is not None:
            await self.limits.admit(call)
        session = await self._session(call)
        if session is not None and (refusal := ToolGuard.refusal(session)) is not None:
            await self._acted(call, session, refusal)
            raise _stopped(refusal)
        call.upstream_tool, call.upstream_start = tool, time.perf_counter()
        try:
            credential = call.caller.policy.mcp.credentials.get(upstream.name)
            result, call.upstream_client = await upstream.call_tool(tool, arguments, credential)
            self.metrics.upstream_calls.labels(upstream.name, call.upstream_client).inc()
        except UpstreamError as exc:
            call.outcome, call.error_code = "upstream_error", "upstream_unavailable"
            raise upstream_failed(str(exc)) from None
        except MCPError:
            call.outcome, call.error_code = "upstream_error", "upstream_error"
            raise
        finally:
            call.upstream_s = time.perf_counter() - call.upstream_start
        call.result_bytes = len(result.model_dump_json(by_alias=True, exclude_none=True))
        if call.result_bytes > self.max_bytes:
            call.outcome, call.error_code = "too_large", "result_too_large"
            raise upstream_failed(f"The tool's result is larger than {self.max_bytes} bytes.")
        call.outcome = "tool_error" if result.is_error else "ok"
        if session is None:
            return result
        return await self._judged(call, session, arguments, result)

    async def _session(self, call: ToolCall) -> ToolSession | None:
        caller = call.caller
        try:
            return await self.guard.open(caller.tenant, caller.session_id, caller.policy.guard)
        except Exception:  # the store failed: the call goes on unguarded (counted), as on the model side
            self.metrics.errors.labels("guard_state").inc()
            log_failure(log, "mcp: guard state unavailable")
            return None

    async def _judged(
        self, call: ToolCall, session: ToolSession, arguments: dict[str, Any] | None, result: types.CallToolResult
    ) -> types.CallToolResult:
        content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
        step = make_tool_step(call.name, arguments or {}, content, is_error=bool(result.is_error))
        try:
            decision = await self.guard.judge(session, step)
        except Exception:
            self.metrics.errors.labels("guard_state").inc()
            log_failure(log, "mcp: guard state unavailable")
            return result
        if decision.action is Action.CONTINUE or decision.detection is None:
            return result
        self._count(call, decision)
        if decision.action in (Action.STOP, Action.BLOCK):
            call.outcome, call.error_code = "guard_stopped", decision.detection.reason.name
            raise _stopped(decision)
        if decision.action is Action.NUDGE and decision.message is not None:
            note = types.TextContent(text=decision.message)
            return result.model_copy(update={"content": [*result.content, note]})
        return result

    async def _acted(self, call: ToolCall, session: ToolSession, decision: Decision) -> None:
        """A refused call of a blocked session: counted and kept in the session's decisions."""
        assert decision.detection is not None
        self._count(call, decision)
        call.outcome, call.error_code = "guard_stopped", decision.detection.reason.name
        try:
            await self.guard.remember(session, decision)
        except Exception:
            self.metrics.errors.labels("guard_state").inc()

    def _count(self, call: ToolCall, decision: Decision) -> None:
        assert decision.detection is not None
        d = decision.detection
        call.guard = header_value(decision.action.value, d.reason, d.detector)
        self.metrics.guard_decisions.labels(decision.action.value, d.reason.value, d.detector).inc()
