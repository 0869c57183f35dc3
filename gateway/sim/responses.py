"""Deterministic replies: directives first, then replay, then a text answer to a tool result, else echo."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from typing import Any

from gateway.sim.conversation import Turn
from gateway.sim.directives import Directives
from gateway.sim.json_mode import JsonSchema, json_reply
from gateway.sim.replay import ReplayIndex
from gateway.sim.tokens import decode, encode

CHANT_SENTENCE = "I will run the same command again to be sure."
_FILLER_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as both APIs' streams carry it


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    output_tokens: int | None = None  # forced count ([[sim:tokens N]]); None: count the text
    truncated: bool = False  # cut at the request's max_tokens


def new_tool_call_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def filler_text(tokens: int) -> str:
    """About `tokens` tokens of text (each filler word is one token in both encodings)."""
    return " ".join(_FILLER_WORDS[i % len(_FILLER_WORDS)] for i in range(tokens))


def _call(requested: tuple[str, dict[str, Any]], tool_id_prefix: str, text: str = "") -> Reply:
    name, args = requested
    return Reply(text, (ToolCall(new_tool_call_id(tool_id_prefix), name, json.dumps(args)),))


def _spoken(directives: Directives) -> str:
    """The text a `text` or `chant` directive asks for ('' if none): said before a directed tool call."""
    if directives.text is not None:
        return directives.text
    return " ".join([CHANT_SENTENCE] * directives.chant) if directives.chant is not None else ""


def plan_reply(
    turns: list[Turn],
    directives: Directives,
    replay: ReplayIndex | None,
    *,
    tool_id_prefix: str,
    forced_tool: str | None = None,
    json_schema: JsonSchema | None = None,
    tools_offered: bool = True,
) -> Reply:
    """The answer to a request whose flattened turns are `turns` (newest last).

    Precedence: directives (a tool directive with a text or chant one: that text, then the call), then the
    replayed trace, then a tool forced by tool_choice, then JSON output
    the request asked for (a minimal instance of its schema), then a text answer to a tool result, else an
    echo of the last user text. A JSON-mode request that offers no tools gets its JSON even under a tool
    or loop directive: clients make such side calls with the user's prompt in them (Gemini CLI's model
    router), and a model cannot call a tool it was not given.
    """
    last = turns[-1] if turns else Turn("user", "")
    calls_allowed = tools_offered or json_schema is None
    if directives.tool is not None and calls_allowed:
        return _call(directives.tool, tool_id_prefix, _spoken(directives))
    if directives.text is not None or directives.chant is not None:
        return Reply(_spoken(directives))
    if directives.tokens is not None:
        return Reply(filler_text(directives.tokens), output_tokens=directives.tokens)
    if directives.loop is not None and calls_allowed:
        return _call(directives.loop, tool_id_prefix)
    recorded = replay.lookup(turns) if replay is not None else None
    if recorded is not None:
        calls = tuple(ToolCall(*call) for call in recorded.tool_calls)
        return Reply(recorded.text, calls)
    if forced_tool is not None:  # tool_choice demands a call: the model obliges with empty arguments
        return Reply("", (ToolCall(new_tool_call_id(tool_id_prefix), forced_tool, "{}"),))
    if json_schema is not None:
        return Reply(json_reply(json_schema))
    if last.kind == "tool":
        return Reply(f"The tool returned: {last.text[:200]}")
    return Reply(last.text)


def output_tokens(reply: Reply, encoding: str) -> int:
    if reply.output_tokens is not None:
        return reply.output_tokens
    spoken = reply.text + "".join(call.name + call.arguments for call in reply.tool_calls)
    return len(encode(spoken, encoding))


def limit_reply(reply: Reply, max_tokens: int | None, encoding: str) -> Reply:
    """Cut the reply at `max_tokens` like a provider does (a cut tool call is dropped, the text kept)."""
    if max_tokens is None or output_tokens(reply, encoding) <= max_tokens:
        return reply
    if reply.output_tokens is not None:
        return Reply(filler_text(max_tokens), output_tokens=max_tokens, truncated=True)
    text = decode(encode(reply.text, encoding)[:max_tokens], encoding)
    return replace(reply, text=text, tool_calls=(), truncated=True)
