"""The exact key from per-message digests (issue 28): a request's key costs its new messages' work, and
it still names exactly one request (the same requests share it, any difference changes it)."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.response_cache.keys import canonical_request, exact_key, semantic_scope
from gateway.traces import assistant_turns, read_sessions


def key(body: dict[str, Any], view: HistoryView | None = None, wire: str = "openai") -> str:
    return exact_key(wire, canonical_request(wire, body, None, view))


def agent_request(turns: int) -> dict[str, Any]:
    session = next(iter(read_sessions()))
    k = assistant_turns(session["messages"])[turns]
    return {"model": "m", "messages": session["messages"][:k], "tools": session["tools"], "temperature": 0}


def test_the_key_does_not_depend_on_what_the_process_remembers() -> None:
    body = agent_request(6)
    fresh = key(body, HistoryView(FactMemo()))
    shared = HistoryView(FactMemo())
    assert key(body, shared) == fresh
    assert key(orjson.loads(orjson.dumps(body)), shared) == fresh  # now from remembered digests
    assert key(body) == fresh  # the process-wide memo


def test_a_turn_digests_only_its_new_messages() -> None:
    memo = FactMemo()
    earlier, later = agent_request(5), agent_request(6)
    key(earlier, HistoryView(memo))
    view = HistoryView(memo)
    new = [m for m in later["messages"] if view.facts(m).response_cache is None]
    assert len(new) == len(later["messages"]) - len(earlier["messages"]) > 0
    key(later, view)
    assert all(view.facts(m).response_cache is not None for m in later["messages"])


def test_requests_the_provider_reads_alike_share_a_key() -> None:
    body = agent_request(4)
    same = copy.deepcopy(body)
    first = same["messages"][1]
    same["messages"][1] = dict(reversed(list(first.items())))  # key order
    if isinstance(first.get("content"), str):  # a string content is one text block
        same["messages"][1]["content"] = [{"type": "text", "text": first["content"]}]
    same["messages"][-1] = {**same["messages"][-1], "cache_control": {"type": "ephemeral"}}
    same |= {"stream": True, "user": "someone", "temperature": 0.0}
    assert key(same) == key(body)


def test_any_difference_in_the_history_changes_the_key() -> None:
    body = agent_request(6)
    base = key(body)
    messages = body["messages"]
    tool_index = next(i for i, m in enumerate(messages) if m.get("role") == "tool")
    edited = copy.deepcopy(body)
    edited["messages"][tool_index]["content"] += " "
    swapped = copy.deepcopy(body)
    swapped["messages"][1], swapped["messages"][2] = swapped["messages"][2], swapped["messages"][1]
    shorter = {**body, "messages": messages[:-1]}
    doubled = {**body, "messages": [*messages, messages[-1]]}
    system = {**body, "messages": [{**messages[0], "role": "developer"}, *messages[1:]]}
    other_tools = {**body, "tools": []}
    keys = [key(variant) for variant in (edited, swapped, shorter, doubled, system, other_tools)]
    assert len({base, *keys}) == len(keys) + 1
    assert key(body, wire="openai") != key(body, wire="anthropic")


def test_the_semantic_scope_still_splits_settings_from_history() -> None:
    def scope(messages: list[dict[str, Any]]) -> Any:
        return semantic_scope("openai", canonical_request("openai", {"model": "m", "messages": messages}))

    user = {"role": "user", "content": "what is a cache?"}
    system = {"role": "system", "content": "be brief"}
    earlier = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    plain, with_system, with_history = scope([user]), scope([system, user]), scope([*earlier, user])
    assert plain.prompt == with_system.prompt == with_history.prompt == "what is a cache?"
    assert with_system.settings_hash != plain.settings_hash and with_system.history_hash == plain.history_hash
    assert with_history.history_hash != plain.history_hash and with_history.settings_hash == plain.settings_hash
    assert scope([{"role": ["user"], "content": "odd role"}, user]).history_hash != plain.history_hash
