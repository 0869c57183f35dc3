"""A compacted session sends the same references on every request (issue 28): each compacted result's
message is rendered and counted once per result and form, kept with its reference, and copied for each
request; the later stages take the copy's facts without serializing it, and the facts of the history
sent as a whole. So the request that compacts one more result renders one message, however many it sends
compacted, and a later stage looking at the body serializes none of them. Operations are counted, never time."""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Any

import pytest

from gateway.compaction.layouts import LAYOUTS
from gateway.history.facts import FactMemo
from gateway.history.view import HistoryView
from gateway.pacing import finish
from tests.compaction.test_reference_tokens import tool_turns
from tests.compaction.test_work_per_turn import Message, context, stage_with

# Over the trigger from the fourth turn on, never under the target: each turn compacts one more result
# (the one that just became older than the newest kept whole) and sends the older ones compacted again.
ONE_MORE_EACH_TURN = {
    "compact_trigger": 4_000,
    "compact_target": 1_500,
    "clear_at_least": 500,
    "summarize_trigger": 10_000_000,
    "summarize_keep": 1_000_000,
    "shrink_tool_result_at": 10_000_000,
}
COMPACTED = "[cachegate: output of"


class Counts:
    """Messages rendered with replaced contents, messages serialized to look up their facts, and messages
    whose facts were asked for one by one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.renders = self.lookups = self.asked = 0
        layout = type(LAYOUTS["openai"])
        render, lookup, ask = layout.with_contents, FactMemo.facts, HistoryView.facts

        def with_contents(owner: Any, message: Message, contents: dict[int | None, Any]) -> Message:
            self.renders += 1
            return render(owner, message, contents)

        def facts(memo: FactMemo, data: bytes) -> Any:
            self.lookups += 1
            return lookup(memo, data)

        def asked(view: HistoryView, message: Message) -> Any:
            self.asked += 1
            return ask(view, message)

        monkeypatch.setattr(layout, "with_contents", with_contents)
        monkeypatch.setattr(HistoryView, "facts", asked)
        monkeypatch.setattr(FactMemo, "facts", facts)


def compacted(messages: list[Message]) -> list[int]:
    return [i for i, m in enumerate(messages) if str(m.get("content")).startswith(COMPACTED)]


def test_each_turn_renders_the_result_it_compacts_and_no_stage_serializes_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services, stage, policy = stage_with(ONE_MORE_EACH_TURN)
    full, session = tool_turns(20, uuid.uuid4().hex), uuid.uuid4().hex
    counts = Counts(monkeypatch)
    texts: dict[int, str] = {}  # the previous request's compacted messages' contents, by index
    objects: list[Message] = []  # the previous request's messages as sent
    checked = 0
    for k in range(3, len(full) + 1, 2):
        counts.renders = 0
        ctx = context(services, policy, full[:k], session)
        asyncio.run(stage.on_request(ctx))
        sent: list[Message] = ctx.body["messages"]
        renders, lookups, asked = counts.renders, counts.lookups, counts.asked
        found = finish(ctx.history.facts_steps(sent))  # a later stage's look at the body sent
        later, one_by_one = counts.lookups - lookups, counts.asked - asked
        # The facts of the messages sent, as serializing each would find them.
        assert all(map(operator.is_, found, finish(HistoryView().facts_steps(sent))))
        now = {index: sent[index]["content"] for index in compacted(sent)}
        if ctx.response_headers["x-cachegate-compaction"] == "compacted" and texts:
            assert len(now) == len(texts) + 1
            assert renders == 1, (k, renders)  # was one a compacted result sent: 12 on the last turn
            assert later == one_by_one == 0, (k, later, one_by_one)  # not even message by message
            for index, text in texts.items():  # the same bytes as before, in another object...
                assert now[index] == text and sent[index] is not objects[index]
            checked += 1
        for index in now:  # ...though a stage changed the previous request's in place
            sent[index]["content"] = "changed by a stage"
        texts, objects = now, sent
    assert checked >= 10 and len(texts) >= 12
