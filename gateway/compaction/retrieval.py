"""The opt-in `retrieve_context` tool: offered next to the client's tools, answered by the gateway.

When a (non-streaming) reply calls only this tool, the gateway appends the originals as tool results
and calls upstream again, at most `max_retrievals` times (the last round with tool use disabled).
Calls of it mixed with the client's own tools are removed from the reply: the client cannot answer
them. Usage of every round is added up in the reply the client gets.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.compaction.layout import TEXT_PARTS, Layout
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.originals import Originals
from gateway.compaction.reference import RETRIEVAL_TOOL
from gateway.context import RequestContext

HANDLE = re.compile(r"^ctx_[0-9a-f]{16,64}$")
DESCRIPTION = (
    "Fetch the full original text of a tool result (or of earlier history) that the gateway compacted "
    "into a reference. Pass the handle shown in the reference, e.g. ctx_0123abcd..."
)
PARAMETERS = {
    "type": "object",
    "properties": {"handle": {"type": "string", "description": "The handle from the compacted reference"}},
    "required": ["handle"],
}


def with_tool(body: dict[str, Any], layout: Layout) -> dict[str, Any]:
    """The body with the retrieval tool appended last (after the client's tools: their prefix holds)."""
    tools = body.get("tools") or []
    if RETRIEVAL_TOOL in layout.tool_names(tools):
        return body
    return {**body, "tools": [*tools, layout.tool_definition(RETRIEVAL_TOOL, DESCRIPTION, PARAMETERS)]}


def as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") in TEXT_PARTS for p in content):
        return "\n".join(str(p.get("text", "")) for p in content)
    return orjson.dumps(content).decode()


async def fetch(originals: Originals, tenant: str, handle: Any) -> dict[str, Any] | None:
    """An original of this tenant, or None (unknown, expired, malformed, or another tenant's handle)."""
    if not isinstance(handle, str) or not HANDLE.match(handle):
        return None
    return await originals.get(tenant, handle)


async def answer_retrievals(ctx: RequestContext, originals: Originals, max_rounds: int, counted: Any) -> dict[str, Any]:
    """The final reply once the gateway has answered the model's retrieve_context calls."""
    assert ctx.route is not None and ctx.response_body is not None
    layout, reply, body = LAYOUTS[ctx.wire.name], ctx.response_body, ctx.body
    headers = {k: v for k, v in ctx.headers.items() if k.startswith(("anthropic-", "openai-"))}
    for round_number in range(max_rounds):
        calls = layout.reply_calls(reply)
        ours = [call for call in calls if call[1] == RETRIEVAL_TOOL]
        if not ours or len(ours) < len(calls):
            break
        answers = []
        for call_id, _, arguments in ours:
            found = await fetch(originals, ctx.tenant_label, arguments.get("handle"))
            counted("tool", found is not None)
            text = as_text(found["content"]) if found else "No stored original under this handle."
            answers.append((call_id, text))
        messages = [*layout.messages(body), *layout.reply_messages(reply), *layout.tool_answers(answers)]
        body = layout.with_messages(body, messages)
        if round_number == max_rounds - 1:
            body.update(layout.no_tool_use())
        result = await ctx.services.router.call(layout.name, ctx.route, body, headers, stream=False)
        assert result.body is not None
        field = layout.usage_field
        reply = {**result.body, field: add_usage(reply.get(field), result.body.get(field))}
    return layout.without_tool(reply, RETRIEVAL_TOOL)


def add_usage(total: Any, more: Any) -> Any:
    """Field-by-field sum of two usage objects (nested dicts of counts), for multi-call answers."""
    if isinstance(total, dict) and isinstance(more, dict):
        return {key: add_usage(total.get(key), more.get(key)) for key in {**total, **more}}
    if isinstance(total, int | float) and isinstance(more, int | float) and not isinstance(total, bool):
        return total + more
    return total if total is not None else more
