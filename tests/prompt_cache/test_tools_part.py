"""The tools' part remembered by their content (issue 28) is what deriving it again gives: the tools as
sent (canonical when configured), their prefix hash and their volatile kinds; the tools are shared by
the requests that send them, and marks land on copies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.prompt_cache_replay import anthropic_tools
from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.history import HistoryView
from gateway.pacing import finish
from gateway.prompt_cache import tools_part
from gateway.prompt_cache.canonical import canonical_tools_steps
from gateway.prompt_cache.optimizer import optimize
from gateway.prompt_cache.prefix import PartHash, serialize
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.tools_part import tools_part_steps
from gateway.prompt_cache.volatile import find_spans
from gateway.traces import read_sessions
from gateway.upstream.litellm_path import LiteLLMUpstream


def tool_lists() -> list[Any]:
    tools = next(iter(read_sessions()))["tools"]
    stamped = [{**tools[0], "description": "Runs a command. Updated 2026-11-22T10:00:00Z."}]
    marked = [{**tool, "cache_control": {"type": "ephemeral"}} for tool in anthropic_tools(tools)]
    reordered = [{"function": tools[0]["function"], "type": "function"}, {"name": "b"}, {"name": "a", "x": 1.0}]
    return [tools, anthropic_tools(tools), stamped, marked, reordered, [], None, {"not": "a list"}]


def forget_known() -> None:
    for key in [key for key, _ in tools_part._known.oldest()]:
        tools_part._known.pop(key)


def remembered(tools: Any, canonical: bool) -> tuple[Any, tools_part.ToolsPart]:
    """As the optimizer asks: the tools with their facts, in a request's view."""
    return finish(tools_part_steps(tools, canonical, HistoryView().part_facts("tools", tools)))


def derived(tools: Any, canonical: bool) -> tuple[bytes, PartHash, frozenset[str]]:
    if canonical and isinstance(tools, list):
        tools = finish(canonical_tools_steps(tools))
    kinds = frozenset(span.kind for span in find_spans(serialize(tools).decode())) if tools else frozenset()
    return orjson.dumps(tools), finish(PartHash.of_steps(tools)), kinds


@pytest.mark.parametrize("canonical", [True, False])
def test_a_remembered_part_is_the_part_derived_again(canonical: bool) -> None:
    forget_known()
    for tools in tool_lists():
        for _ in range(2):  # derived, then remembered
            copy = orjson.loads(orjson.dumps(tools))
            sent, part = remembered(copy, canonical)
            assert (orjson.dumps(sent), part.hash, part.kinds) == derived(tools, canonical)
    assert len(tools_part._known) == len(tool_lists())


@pytest.mark.parametrize("canonical", [True, False])
def test_the_callers_tools_are_never_the_ones_sent(canonical: bool) -> None:
    """The optimizer leaves the caller's tools uncopied (work.py `replaced`): whether derived, remembered
    or too large to remember, the tools sent are other objects, and the caller's stay as they came."""
    tools = anthropic_tools(next(iter(read_sessions()))["tools"])
    large = [{**tools[0], "description": "x" * (tools_part.KNOWN_MAX_BYTES + 1)}]
    for given in (tools, tools, large):  # derived, remembered, never remembered
        before = orjson.dumps(given)
        sent, part = remembered(given, canonical)
        assert sent is not given and not {id(tool) for tool in sent} & {id(tool) for tool in given}
        assert sent is not part.tools or given is large  # a list of the request's own, when shared
        assert orjson.dumps(given) == before


ROUTES = {
    "anthropic": ModelConfig(name="m", provider="anthropic", model="claude-sonnet-4-5", api_base="http://127.0.0.1:9"),
    "gemini": ModelConfig(name="m", provider="gemini", model="gemini-2.5-pro", api_base="http://127.0.0.1:9"),
}


def large_tools(wire: str) -> list[Any]:
    """Tools past the cache minimum, so that a mark lands on the last one; the first marked by the client."""
    tools = [
        {"type": "function", "function": {"name": f"tool_{n}", "description": f"Tool {n}. " + "word " * 600}}
        for n in range(4)
    ]
    if wire == "anthropic":
        tools = anthropic_tools(tools)
    return [{**tools[0], "cache_control": {"type": "ephemeral"}}, *tools[1:]]


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_marks_land_on_copies_of_the_remembered_tools(provider: str) -> None:
    """Remembered tools are shared by the requests that send them: the optimizer's marks (Anthropic: one
    placed on the tools' end) and its removal of the client's (Gemini: marks would buy an explicit cache)
    land on copies, so each request sends what deriving its tools anew would, and none sees another's."""
    forget_known()
    wire = "anthropic" if provider == "anthropic" else "openai"
    user = [{"role": "user", "content": "Fix the failing test."}]
    sent = []
    for _ in range(3):
        body = {"model": "m", "messages": user, "tools": large_tools(wire)}
        given = orjson.dumps(body)
        outcome = optimize(body, wire, ROUTES[provider], PromptCacheConfig(), SessionState(), "s", 1.0)
        assert orjson.dumps(body) == given  # the caller's body as it came
        sent.append(orjson.dumps(outcome.body["tools"]))
    ((_, part),) = tools_part._known.oldest()
    canonical = finish(canonical_tools_steps(large_tools(wire)))
    assert orjson.dumps(part.tools) == orjson.dumps(canonical)  # as derived: no request's marks
    assert sent[0] == sent[1] == sent[2]
    marks = [b'"cache_control"' in orjson.dumps(tool) for tool in orjson.loads(sent[0])]
    assert marks == ([True, False, False, True] if provider == "anthropic" else [False] * 4)


def test_litellm_gets_tools_of_its_own() -> None:
    """LiteLLM's adapters may change the tools they are given: the remembered ones it would be handed
    through the body are copied for it, to the last nested object."""
    route = ModelConfig(name="m", provider="gemini", model="gemini-2.5-pro", api_base="http://127.0.0.1:9")
    tools = large_tools("openai")
    kwargs = LiteLLMUpstream()._kwargs("openai", route, "http://127.0.0.1:9", {"model": "m", "tools": tools})
    assert orjson.dumps(kwargs["tools"]) == orjson.dumps(tools)

    def objects(value: Any) -> set[int]:
        if isinstance(value, dict):
            return {id(value), *(i for item in value.values() for i in objects(item))}
        if isinstance(value, list):
            return {id(value), *(i for item in value for i in objects(item))}
        return set()

    assert not objects(kwargs["tools"]) & objects(tools)


def test_the_remembered_tools_are_bounded_by_bytes() -> None:
    """Callers choose the tools: lists of a large size each are held only up to KNOWN_BYTES in all, the
    least recently used out first, whatever their count."""
    forget_known()
    size = tools_part.KNOWN_MAX_BYTES // 2
    lists = [[{"name": f"t{n}", "description": "x" * size}] for n in range(3 * tools_part.KNOWN_BYTES // size)]
    for tools in lists:
        remembered(tools, False)
    assert tools_part._known.bytes <= tools_part.KNOWN_BYTES < sum(len(orjson.dumps(t)) for t in lists)
    assert len(tools_part._known) < len(lists)
    newest = orjson.dumps(lists[-1])
    assert any(orjson.dumps(part.tools) == newest for _, part in tools_part._known.oldest())
    forget_known()
