"""The tools' part remembered by their content (issue 28) is what deriving it again gives: the tools as
sent (canonical when configured), their prefix hash and their volatile kinds, with objects of the
request's own."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.prompt_cache_replay import anthropic_tools
from gateway.history import HistoryView
from gateway.pacing import finish
from gateway.prompt_cache import tools_part
from gateway.prompt_cache.canonical import canonical_tools_steps
from gateway.prompt_cache.prefix import PartHash, serialize
from gateway.prompt_cache.tools_part import tools_part_steps
from gateway.prompt_cache.volatile import find_spans
from gateway.traces import read_sessions


def tool_lists() -> list[Any]:
    tools = next(iter(read_sessions()))["tools"]
    stamped = [{**tools[0], "description": "Runs a command. Updated 2026-11-22T10:00:00Z."}]
    marked = [{**tool, "cache_control": {"type": "ephemeral"}} for tool in anthropic_tools(tools)]
    reordered = [{"function": tools[0]["function"], "type": "function"}, {"name": "b"}, {"name": "a", "x": 1.0}]
    return [tools, anthropic_tools(tools), stamped, marked, reordered, [], None, {"not": "a list"}]


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
    tools_part._known.clear()
    for tools in tool_lists():
        for _ in range(2):  # derived, then remembered
            copy = orjson.loads(orjson.dumps(tools))
            sent, part = remembered(copy, canonical)
            assert (orjson.dumps(sent), part.hash, part.kinds) == derived(tools, canonical)
    assert len(tools_part._known) == len(tool_lists())


def test_each_request_gets_tools_of_its_own() -> None:
    tools = anthropic_tools(next(iter(read_sessions()))["tools"])
    first, _ = remembered(orjson.loads(orjson.dumps(tools)), True)
    first[0]["cache_control"] = {"type": "ephemeral"}  # a mark placed on this request's tools
    second, _ = remembered(orjson.loads(orjson.dumps(tools)), True)
    assert "cache_control" not in second[0]


@pytest.mark.parametrize("canonical", [True, False])
def test_the_callers_tools_are_never_the_ones_sent(canonical: bool) -> None:
    """The optimizer leaves the caller's tools uncopied (work.py `replaced`): whether derived, remembered
    or too large to remember, the tools it marks are new objects, and the caller's stay as they came."""
    tools = anthropic_tools(next(iter(read_sessions()))["tools"])
    large = [{**tools[0], "description": "x" * (tools_part.KNOWN_MAX_BYTES + 1)}]
    for given in (tools, tools, large):  # derived, remembered, never remembered
        before = orjson.dumps(given)
        sent, _ = remembered(given, canonical)
        sent[0]["cache_control"] = {"type": "ephemeral"}
        assert sent is not given and sent[0] is not given[0]
        assert orjson.dumps(given) == before
