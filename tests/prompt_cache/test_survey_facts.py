"""The block survey from the messages' shared facts (issue 28) says what the blocks themselves say, on
recorded agent sessions, for every kind of prefix break; a turn derives its new messages' blocks only."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest

from bench.prompt_cache_replay import anthropic_tools, to_anthropic
from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.pacing import finish
from gateway.prompt_cache import survey as survey_module
from gateway.prompt_cache.prefix import PrefixBreak
from gateway.prompt_cache.shapes import SHAPES
from gateway.prompt_cache.survey import Survey, survey_steps
from gateway.prompt_cache.work import copy_of
from gateway.traces import assistant_turns, read_sessions

BREAKS = [
    PrefixBreak("none"),
    PrefixBreak("first_request"),
    PrefixBreak("tools_changed", "tools", 0),
    PrefixBreak("system_changed", "system", 0),
    PrefixBreak("message_edited", "messages.5", 5),
    PrefixBreak("history_truncated", "messages.9", 9),
]


def request(wire: str, turns: int) -> dict[str, Any]:
    session = next(iter(read_sessions()))
    messages = session["messages"][: assistant_turns(session["messages"])[turns]]
    messages[3] = {**messages[3], "cache_control": {"type": "ephemeral"}}  # a client's mark on a message
    if wire == "openai":
        return {
            "messages": [*messages, {"role": "developer", "content": "mid-conversation"}],
            "tools": session["tools"],
        }
    system, converted = to_anthropic(messages)
    system = [{"type": "text", "text": "You are an agent."}, {"type": "text", "text": system}]
    system[0]["cache_control"] = {"type": "ephemeral"}  # a client's mark on the system prompt
    marked = next(m for m in converted[2:] if isinstance(m["content"], list))  # a client's mark on a block
    marked["content"] = [{**marked["content"][0], "cache_control": {"type": "ephemeral"}}, *marked["content"][1:]]
    return {"system": system, "messages": converted, "tools": anthropic_tools(session["tools"])}


def survey(
    wire: str, body: dict[str, Any], found: PrefixBreak, min_tokens: int, view: HistoryView | None, static: bool = False
) -> Survey:
    facts = finish(view.facts_steps(body["messages"])) if view is not None else None
    work = copy_of(body, SHAPES[wire])
    if wire == "openai":
        work.own(0)  # an owned (maybe changed) message is read from its blocks
    # The units before the history, by content (the optimizer's is the caller's tools and system's facts).
    key = hashlib.sha256(orjson.dumps([body.get("tools"), body.get("system")])).digest() if static else None
    return finish(survey_steps(work, wire, found, min_tokens, facts, static=key))


def fields(found: Survey) -> tuple[Any, ...]:
    return (
        found.count,
        list(found.client.items()),
        found.markable,
        found.static_end,
        found.common,
        found.tokens.ends,
        found.units,
        found.starts,
    )


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_survey_from_facts_is_the_survey_of_the_blocks(wire: str) -> None:
    memo = FactMemo()
    for turns in (4, 9):
        body = orjson.loads(orjson.dumps(request(wire, turns)))
        for found in BREAKS:
            for min_tokens in (0, 1024, 4096, 10**9):
                alone = survey(wire, body, found, min_tokens, None)
                assert fields(survey(wire, body, found, min_tokens, HistoryView(memo))) == fields(alone)
                assert fields(survey(wire, body, found, min_tokens, HistoryView(memo))) == fields(alone)
        assert alone.client  # the client's mark was seen


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_units_before_the_history_from_a_known_content_are_as_built(wire: str) -> None:
    """The tools (and Anthropic's system prompt) added as an earlier request with the same content added
    them: the same survey for every prefix break and minimum (the bound ending in the tools, the system,
    the history or never), the first time (built) and after (from what was kept)."""
    body = orjson.loads(orjson.dumps(request(wire, 6)))
    body["tools"][0] = {**body["tools"][0], "cache_control": {"type": "ephemeral"}}  # a client's mark on a tool
    for found in BREAKS:
        for min_tokens in (0, 60, 400, 1024, 10**9):
            alone = survey(wire, body, found, min_tokens, None)
            for view in (None, HistoryView(FactMemo())):
                for _ in range(2):
                    assert fields(survey(wire, body, found, min_tokens, view, static=True)) == fields(alone)
    assert sum(position < alone.starts[1 if wire == "openai" else 2] for position in alone.client) == 2 - (
        wire == "openai"
    )


def test_a_turn_derives_only_its_new_messages_blocks() -> None:
    memo = FactMemo()
    earlier, later = request("anthropic", 6), request("anthropic", 7)
    survey("anthropic", earlier, BREAKS[0], 0, HistoryView(memo))
    view = HistoryView(memo)
    before = [view.facts(m).prompt_blocks for m in later["messages"]]
    assert sum(known is None for known in before) == len(later["messages"]) - len(earlier["messages"])
    survey("anthropic", later, BREAKS[0], 0, view)
    after = [view.facts(m).prompt_blocks for m in later["messages"]]
    assert all(b is a for b, a in zip(before, after, strict=True) if b is not None)


def test_what_is_kept_of_the_units_before_the_history_is_bounded() -> None:
    """Callers choose the tools: a list of more blocks than an entry may hold is built on every request,
    never kept (and its survey is the same)."""
    body = orjson.loads(orjson.dumps(request("anthropic", 4)))
    body["tools"] = [
        {"name": f"t{n}", "input_schema": {"type": "object"}} for n in range(survey_module.STATIC_MAX_BLOCKS)
    ]
    kept = len(survey_module._static)
    alone = survey("anthropic", body, BREAKS[0], 1024, None)
    assert fields(survey("anthropic", body, BREAKS[0], 1024, None, static=True)) == fields(alone)
    assert len(survey_module._static) == kept  # over the bound with the system's blocks: not kept
    body["tools"] = body["tools"][:10]
    survey("anthropic", body, BREAKS[0], 1024, None, static=True)
    assert len(survey_module._static) == kept + 1
