"""One pass over the history per request (issue 28): every message's facts are taken once per content and
shared by the stages, so a turn that appends two messages costs two messages of work."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.compaction.tokens import counter_for
from gateway.history import HistoryView, content_digest, memo
from gateway.history.facts import FactMemo
from gateway.pacing import finish
from gateway.prompt_cache.prefix import record_prefix_steps
from gateway.traces import assistant_turns, read_sessions
from tests.gateway_harness import running_gateway

# Compaction counts a request's tokens once their bound (known counts, else bytes) could pass a threshold:
# a small window makes these requests counted (~3,500 tokens, ~9 KB, of an 8,000 window: compacted from
# 4,000, summarized from 6,400: nothing to compact, nothing rewritten).
WINDOW = 8_000
ROUTE = {"name": "counted", "provider": "openai", "model": "gpt-4o-mini", "api_base": "embedded-sim"}


def turn(number: int) -> list[dict[str, Any]]:
    question = f"Step {number}: " + " ".join(f"look at module{number}_{i}.py" for i in range(60))
    return [{"role": "user", "content": question}, {"role": "assistant", "content": f"Looked at step {number}."}]


def history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for number in range(turns):
        messages += turn(number)
    return [*messages, turn(turns)[0]]  # ends with the new user turn


def test_a_turn_costs_only_its_new_messages_and_the_stages_share_their_facts() -> None:
    route = {**ROUTE, "context_window": WINDOW}
    # The memo is the process's: earlier tests may have filled it, and a full one evicts as it adds.
    bound, memo.max_entries = memo.max_entries, len(memo) + 1_000
    try:
        requests_share_facts(route)
    finally:
        memo.max_entries = bound


def requests_share_facts(route: dict[str, Any]) -> None:
    with running_gateway(models=[route]) as gw:
        client = gw.openai(default_headers={"x-session-id": "facts-session"})
        first, second = history(6), history(7)  # the second: the first's history plus two messages
        client.chat.completions.create(model="counted", messages=first)  # type: ignore[arg-type]
        before = len(memo)
        client.chat.completions.create(model="counted", messages=second)  # type: ignore[arg-type]
        # The reply and the new user turn: nothing else was serialized and remembered again.
        new = {content_digest(orjson.dumps(m)) for m in second} - {content_digest(orjson.dumps(m)) for m in first}
        assert len(new) == 2
        assert len(memo) - before == len(new)
        encoding = counter_for("openai", "gpt-4o-mini").name
        for message in second:
            facts = memo.facts(orjson.dumps(message))
            # One entry holds what compaction (token count) and the prompt cache (digests) took from it.
            assert facts.tokens.get(encoding) is not None, message["role"]
            assert facts.prompt_cache is not None, message["role"]


def test_the_shared_facts_give_the_prompt_cache_the_same_record_on_recorded_sessions() -> None:
    session = next(iter(read_sessions()))
    messages = session["messages"]
    for k in assistant_turns(messages)[:12]:
        request = orjson.loads(orjson.dumps(messages[:k]))  # as the gateway parses it, fresh objects
        alone = finish(record_prefix_steps("m", session["tools"], None, request))
        view = HistoryView(FactMemo())
        facts = finish(view.facts_steps(request))
        shared = finish(record_prefix_steps("m", session["tools"], None, request, None, facts))
        again = finish(
            record_prefix_steps("m", session["tools"], None, request, None, finish(view.facts_steps(request)))
        )
        assert shared.to_json() == alone.to_json() == again.to_json()


def test_the_memo_is_bounded_and_keyed_by_content() -> None:
    facts = FactMemo(max_entries=3)
    view = HistoryView(facts)
    one = {"role": "user", "content": "one"}
    assert view.facts(one) is view.facts(dict(one))  # equal content, one entry
    for number in range(5):
        view.facts({"role": "user", "content": str(number)})
    assert len(facts) == 3
