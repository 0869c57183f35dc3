"""Compaction's tool results from the messages' shared facts (issue 28): a turn derives its new messages'
calls and results only, and what it reads from the facts is what the messages hold."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from bench.prompt_cache_replay import to_anthropic
from gateway.compaction.layout import result_handle
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.results import Results, message_results, tool_results
from gateway.compaction.tokens import counter_for
from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.pacing import Pacer, finish
from gateway.traces import assistant_turns, read_sessions


def request(wire: str, turns: int) -> list[dict[str, Any]]:
    session = next(iter(read_sessions()))
    messages = session["messages"][: assistant_turns(session["messages"])[turns]]
    converted = messages if wire == "openai" else to_anthropic(messages)[1]
    return list(orjson.loads(orjson.dumps(converted)))  # fresh objects, as the gateway parses them


def results_of(wire: str, messages: list[dict[str, Any]], memo: FactMemo) -> Results:
    facts = finish(HistoryView(memo).facts_steps(messages))
    return asyncio.run(tool_results(LAYOUTS[wire], messages, facts, 0, Pacer()))


def test_a_turn_derives_only_its_new_messages() -> None:
    for wire in ("openai", "anthropic"):
        memo, layout = FactMemo(), LAYOUTS[wire]
        earlier, later = request(wire, 6), request(wire, 7)
        results_of(wire, earlier, memo)
        view = HistoryView(memo)
        before = [view.facts(m).compaction for m in later]
        assert sum(known is None for known in before) == len(later) - len(earlier) > 0
        results_of(wire, later, memo)
        after = [message_results(layout, m, view.facts(m)) for m in later]
        assert all(b is a for b, a in zip(before, after, strict=True) if b is not None)  # not derived again


def test_the_results_read_from_the_facts_are_the_messages_own() -> None:
    counter = counter_for("openai", "gpt-4o-mini")
    for wire in ("openai", "anthropic"):
        layout, messages = LAYOUTS[wire], request(wire, 8)
        results = results_of(wire, messages, FactMemo())
        expected = [(i, found) for i, m in enumerate(messages) for found in layout.results(m)]
        assert len(results.found) == len(expected) > 0
        names = {call_id: name for m in messages for call_id, name in layout.calls(m)}
        for (index, facts), (raw_index, found) in zip(results.found, expected, strict=True):
            result = results.result(index, facts)
            assert (index, result.block, result.call_id) == (raw_index, found.block, found.call_id)
            assert result.handle == result_handle(found.call_id, found.content)
            assert result.content == found.content and result.tool == names[found.call_id]
            if result.plain:
                assert asyncio.run(result.tokens(counter)) == counter.content_now(found.content)
                assert facts.encoding == counter.name  # counted once, kept with the message's facts
