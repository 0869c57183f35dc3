"""A request that repeats a long history plus a new turn runs Python for the new turn only (issue 28):
the messages an earlier request already described (their shared facts, gateway/history/) are digested,
surveyed and checked for system roles by list operations in C. Counted as lines of Python run (the
same on every machine), a history four times longer costs a few lines a chunk of messages more (the
stage pauses between chunks: gateway/pacing.py), not lines per message."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest

from bench.prompt_cache_replay import anthropic_tools, to_anthropic
from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.pacing import Steps, finish
from gateway.prompt_cache.optimizer import Outcome, optimize_steps
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.shapes import SHAPES
from gateway.traces import read_sessions

ROUTES = {
    "openai": ModelConfig(name="gpt", provider="openai", model="gpt-4.1"),
    "anthropic": ModelConfig(name="claude", provider="anthropic", model="claude-sonnet-4-5"),
}


def lines_run(steps: Steps[Outcome]) -> int:
    """Lines of Python run while finishing `steps` (each line event of every frame)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return trace

    sys.settrace(trace)
    try:
        finish(steps)
    finally:
        sys.settrace(None)
    return count


def body(wire: str, session: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    if wire == "openai":
        return {"model": "gpt", "messages": messages, "tools": session["tools"]}
    system, converted = to_anthropic(messages)
    return {"model": "claude", "system": system, "messages": converted, "tools": anthropic_tools(session["tools"])}


def turn_lines(wire: str, turns: int) -> int:
    """Lines run by the request that adds one turn to a history of `turns` repeated agent turns."""
    session = next(iter(read_sessions()))
    messages = session["messages"]
    head, turn = messages[:2], messages[2:6]  # system + task, then assistant/tool turns
    history = head + turn * turns
    memo, config, route = FactMemo(), PromptCacheConfig(), ROUTES[wire]
    before = body(wire, session, history)
    first = HistoryView(memo)
    finish(first.facts_steps(SHAPES[wire].messages(before)))
    previous = finish(optimize_steps(before, wire, route, config, SessionState(), "s", 1.0, first)).state
    request = body(wire, session, history + messages[6:8])
    view = HistoryView(memo)
    finish(view.facts_steps(SHAPES[wire].messages(request)))  # the earlier stages' lookups
    return lines_run(optimize_steps(request, wire, route, config, previous, "s", 2.0, view))


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_new_turn_costs_the_same_python_after_a_long_history(wire: str) -> None:
    turn_lines(wire, 50)  # the process's memos (masks, token counts) hold the session's contents for both
    short, long = turn_lines(wire, 50), turn_lines(wire, 200)  # ~200 and ~800 messages
    # ~600 messages more: a few lines a chunk of them (the stage's pauses), not lines per message
    assert long - short < 150, (short, long)


def tools_lines(count: int) -> int:
    """Lines run by a request whose `count` tools the session's previous request sent too."""
    session = next(iter(read_sessions()))
    tool = session["tools"][0]
    tools = [{**tool, "function": {**tool["function"], "name": f"tool_{n}"}} for n in range(count)]
    request = {"model": "gpt", "messages": session["messages"][:4], "tools": tools}
    route, config = ROUTES["openai"], PromptCacheConfig()
    previous = finish(optimize_steps(request, "openai", route, config, SessionState(), "s", 1.0)).state
    return lines_run(optimize_steps(request, "openai", route, config, previous, "s", 2.0))


def test_tools_the_session_sent_before_cost_the_same_python_however_many() -> None:
    """Agent CLIs send tens of tools on every request: canonical form, hash and scan are derived once."""
    few, many = tools_lines(5), tools_lines(50)
    assert many - few < 20, (few, many)
