"""create_react_agent: a tool-calling agent loop on any OpenAI-compatible endpoint, guard rails on.

Graph: START -> agent -> (tool calls? tools : END); tools -> agent. Messages are OpenAI chat dicts.
* Every tool call is reported with `record_action(name, args, result)`, so the loop detectors see real
  actions and results; a guard nudge is appended for the model before its next call.
* A built-in `terminate(status, message)` tool ends the run with a typed stop reason.
* In the guard's grace step the model is called without tools and must answer in text.
* LLM usage is reported with `report_usage`, so token budgets apply.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import operator
import types
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypedDict, Union, get_args, get_origin, get_type_hints

from agent_runtime.checkpoint.base import BaseCheckpointer
from agent_runtime.core.types import END, START, StopReason, Terminate
from agent_runtime.engine.context import in_grace_step, pending_nudge, record_action, report_usage
from agent_runtime.engine.guard_rails import GuardRails
from agent_runtime.graph.state import StateGraph
from agent_runtime.pregel.compiled import CompiledGraph

DEFAULT_BASE_URL = "http://127.0.0.1:4000/v1"
TERMINATE_TOOL = "terminate"
DEFAULT_GUARD_RAILS = GuardRails(max_steps=50, max_consecutive_errors=5, grace_step=True)
GRACE_NOTE = (
    "The step limit or the loop guard ended the tool phase. Do not call tools. Answer now with your best "
    "final answer, and say what is unfinished."
)

Message = dict[str, Any]


class AgentState(TypedDict):
    messages: Annotated[list[Message], operator.add]


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}


def _json_type(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    if origin is Literal:
        return {"type": "string", "enum": [str(a) for a in get_args(hint)]}
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        return _json_type(options[0]) if options else {}
    if origin in (list, tuple, set):
        return {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    return {"type": _JSON_TYPES[hint]} if hint in _JSON_TYPES else {}


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """OpenAI function-tool schema from a function's signature, type hints and docstring."""
    hints = get_type_hints(fn)
    properties: dict[str, Any] = {}
    required = []
    for name, param in inspect.signature(fn).parameters.items():
        properties[name] = _json_type(hints.get(name, str))
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": inspect.getdoc(fn) or fn.__name__,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def terminate(status: Literal["success", "failure"], message: str) -> str:
    """Finish the task: status "success" when it is done, "failure" when it cannot be done."""
    return message


async def _run_tool(fn: Callable[..., Any], args: dict[str, Any]) -> tuple[str, bool]:
    """(result text, is_error). Sync tools run in a thread so they do not block the loop."""
    try:
        result = await fn(**args) if inspect.iscoroutinefunction(fn) else await asyncio.to_thread(fn, **args)
    except Exception as exc:
        return f"Error: {type(exc).__name__}: {exc}", True
    return (result if isinstance(result, str) else json.dumps(result, default=str)), False


def _assistant_message(choice_message: Any) -> Message:
    message: Message = {"role": "assistant", "content": choice_message.content or ""}
    if choice_message.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in choice_message.tool_calls
        ]
    return message


def create_react_agent(
    model: str,
    tools: Sequence[Callable[..., Any]],
    *,
    base_url: str = DEFAULT_BASE_URL,
    api_key: str = "sk-agent-runtime",
    system_prompt: str | None = None,
    checkpointer: BaseCheckpointer | None = None,
    guard_rails: GuardRails | None = DEFAULT_GUARD_RAILS,
    client: Any = None,
    **completion_kwargs: Any,
) -> CompiledGraph:
    """Compile the agent. `client` may be an `openai.AsyncOpenAI`; by default one is made for `base_url`."""
    if client is None:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=base_url, api_key=api_key)
    by_name = {fn.__name__: fn for fn in tools}
    by_name[TERMINATE_TOOL] = terminate
    schemas = [tool_schema(fn) for fn in by_name.values()]

    async def agent(state: AgentState) -> dict[str, Any]:
        nudge = pending_nudge()
        grace = in_grace_step()
        note = GRACE_NOTE if grace else nudge
        extra: list[Message] = [{"role": "user", "content": note}] if note else []
        system: list[Message] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        messages = [*system, *state["messages"], *extra]
        kwargs = dict(completion_kwargs)
        if not grace:
            kwargs["tools"] = schemas
        response = await client.chat.completions.create(model=model, messages=messages, **kwargs)
        if response.usage is not None:
            report_usage(tokens=response.usage.total_tokens)
        reply = _assistant_message(response.choices[0].message)
        if grace:
            reply.pop("tool_calls", None)
        return {"messages": [*extra, reply]}

    async def run_tools(state: AgentState) -> Any:
        calls = state["messages"][-1].get("tool_calls", [])
        results: list[Message] = []
        finish: Terminate | None = None
        for call in calls:
            name, raw_args = call["function"]["name"], call["function"]["arguments"]
            try:
                args = json.loads(raw_args or "{}")
            except json.JSONDecodeError:
                text, error = f"Error: arguments are not valid JSON: {raw_args}", True
            else:
                fn = by_name.get(name)
                if fn is None:
                    text, error = f"Error: unknown tool {name!r}; available: {sorted(by_name)}", True
                else:
                    text, error = await _run_tool(fn, args)
                    if name == TERMINATE_TOOL and not error:
                        status = StopReason.GOAL if args.get("status") == "success" else StopReason.ERROR
                        finish = Terminate(status, message=text)
            record_action(name, raw_args, text, error=error)
            results.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        if finish is not None:
            return Terminate(finish.status, update={"messages": results}, message=finish.message)
        return {"messages": results}

    def route(state: AgentState) -> str:
        return "tools" if state["messages"][-1].get("tool_calls") else END

    graph = StateGraph(AgentState)
    graph.add_node("agent", agent)
    graph.add_node("tools", run_tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer, guard_rails=guard_rails, name="react_agent")
