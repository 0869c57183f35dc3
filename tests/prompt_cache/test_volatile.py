"""Volatile content: detection, and the opt-in policy that moves it out of the system prompt."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.prompt_cache import volatile
from gateway.prompt_cache.volatile import KNOWN_MAX_SPANS, KNOWN_TEXTS, find_spans, mask
from gateway.traces import default_traces, read_sessions
from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import anthropic_client, last_sim_body, long_text, new_session, openai_client


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Current time: 2026-11-22T18:58:44.123Z.", "timestamp"),
        ("Generated Sun Nov 22 18:58:44 UTC 2026", "timestamp"),
        ("at 18:58:44 today", "timestamp"),
        ("epoch 1763837924", "timestamp"),
        ("Today is 2026-11-22.", "date"),
        ("Today is November 22, 2026.", "date"),
        ("trace 123e4567-e89b-12d3-a456-426614174000", "uuid"),
        ("request_id: 7f3a9c21b", "request_id"),
        ("last call req_01HZX8K2M9", "request_id"),
    ],
)
def test_detects_each_kind(text: str, kind: str) -> None:
    assert [span.kind for span in find_spans(text)] == [kind]
    assert mask(text) == mask(text.replace("2", "3"))  # the masked form ignores the changing value


def test_a_text_seen_before_gets_its_spans_back_and_the_memory_stays_bounded() -> None:
    prompt = "You are an agent. Current time: 2026-11-22T18:58:44Z. Session 123e4567-e89b-12d3-a456-426614174000."
    first = find_spans(prompt)
    assert find_spans(prompt) == first and [s.kind for s in first] == ["timestamp", "uuid"]
    assert find_spans(prompt.replace("18:58", "18:59"))[0].value == "2026-11-22T18:59:44Z"  # not the old one
    crowded = " ".join(f"12:00:{n % 60:02d}" for n in range(KNOWN_MAX_SPANS + 1))
    assert len(find_spans(crowded)) == KNOWN_MAX_SPANS + 1
    for n in range(KNOWN_TEXTS + 10):
        find_spans(f"prompt {n} at 2026-11-22")
    assert len(volatile._known) == KNOWN_TEXTS
    assert all(len(spans) <= KNOWN_MAX_SPANS for spans in volatile._known.values())


@pytest.mark.parametrize("text", ["Use the run_pipeline tool.", "Python 3.11, version 2.4.1", "Line 42: x = 1"])
def test_stable_text_is_not_volatile(text: str) -> None:
    assert find_spans(text) == []


def test_real_agent_system_prompts_are_not_flagged() -> None:
    systems = {session["messages"][0]["content"] for session in read_sessions(default_traces())}
    assert all(find_spans(system) == [] for system in systems)


def _anthropic_turn(gw: RunningGateway, tenant: str, session: str, stamp: str, messages: list[Any]) -> Any:
    system = f"You are an agent. Current time: {stamp}. " + long_text("vol", 1500)
    raw = anthropic_client(gw, tenant).messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=50,
        system=system,
        messages=messages,
        extra_headers={"x-session-id": session},
    )
    return raw.parse(), raw.headers


def test_relocation_keeps_the_prefix_cacheable(gw: RunningGateway) -> None:
    messages: list[Any] = [{"role": "user", "content": "[[sim:text ok]] " + long_text("task", 200)}]
    results: dict[str, Any] = {}
    for tenant in ("acme", "reloc"):
        session = new_session()
        first, headers = _anthropic_turn(gw, tenant, session, f"2026-11-22T10:00:0{len(results)}Z", messages)
        later = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "[[sim:text ok]] more"}]
        second, second_headers = _anthropic_turn(gw, tenant, session, f"2026-11-22T10:05:0{len(results)}Z", later)
        results[tenant] = (first.usage, second.usage, headers, second_headers, last_sim_body(gw))
    usage1, usage2, headers, second_headers, _ = results["acme"]
    assert headers["x-cachegate-volatile"] == "timestamp"
    assert second_headers["x-cachegate-prefix-break"] == "volatile_content; at=system"
    assert usage2.cache_read_input_tokens == 0
    usage1, usage2, headers, second_headers, body = results["reloc"]
    assert headers["x-cachegate-volatile"] == "timestamp; relocated"
    assert second_headers["x-cachegate-prefix-break"] == "none"
    assert "[volatile-1]" in body["system"][0]["text"] and "10:05:01" not in body["system"][0]["text"]
    note = body["messages"][-1]["content"][-1]
    assert note["text"].endswith("[volatile-1] = 2026-11-22T10:05:01Z)") and "cache_control" not in note
    # Everything the first request sent but its note is read back.
    assert usage2.cache_read_input_tokens > 0.95 * (usage1.input_tokens + usage1.cache_creation_input_tokens)


def test_relocation_in_openai_shape_appends_a_user_note(gw: RunningGateway) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "Agent. Session 123e4567-e89b-12d3-a456-426614174000 started 2026-11-22."},
        {"role": "user", "content": "[[sim:text ok]] hello"},
    ]
    raw = openai_client(gw, "reloc").chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=messages, extra_headers={"x-session-id": new_session()}
    )
    assert raw.headers["x-cachegate-volatile"] == "date,uuid; relocated"
    body = last_sim_body(gw)
    assert body["messages"][0]["content"] == "Agent. Session [volatile-1] started [volatile-2]."
    assert body["messages"][-1]["role"] == "user" and "[volatile-2] = 2026-11-22" in body["messages"][-1]["content"]
    assert body["messages"][1] == messages[1]
