"""Cuts never separate a tool call from its result; histories through a real gateway stay valid."""

from __future__ import annotations

import json
from typing import Any

from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.pairs import safe_cuts
from gateway.compaction.summarizer import fit
from gateway.compaction.tokens import counter_for
from tests.compaction.conftest import sent_bodies
from tests.compaction.sessions import (
    TOOLS_ANTHROPIC,
    TOOLS_OPENAI,
    anthropic_history,
    gemini_contents,
    openai_history,
)
from tests.gateway_harness import RunningGateway


def test_openai_cuts_only_before_a_complete_pair() -> None:
    messages = openai_history(3)
    # system, user, (assistant, tool) x 3: cuts before each assistant but the first kept after start.
    assert safe_cuts(LAYOUTS["openai"], messages, 2) == [4, 6]
    parallel = [
        *messages[:2],
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "assistant", "content": "done"},
    ]
    assert safe_cuts(LAYOUTS["openai"], parallel, 1) == [2, 5]


def test_dangling_call_closes_every_later_cut() -> None:
    messages = openai_history(2)
    dangling = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }
    broken = [*messages, dangling, {"role": "user", "content": "never mind"}, *openai_history(2)[2:]]
    assert all(cut <= 6 for cut in safe_cuts(LAYOUTS["openai"], broken, 2))


def test_cut_before_a_plain_user_message_never_before_a_result() -> None:
    messages = [
        *openai_history(1),
        {"role": "assistant", "content": "x " * 5000},
        {"role": "user", "content": "Please provide exactly one action."},
    ]
    assert safe_cuts(LAYOUTS["openai"], messages, 2) == [4, 5]  # the huge assistant message can go


def test_summarizer_input_fits_its_window() -> None:
    counter = counter_for("openai", "gpt-4o-mini")
    prefix = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "word " * 6000},
        {"role": "user", "content": "short"},
    ]
    fitted = fit(prefix, counter, 2000, 500)
    assert counter.messages(fitted) <= 2000 and fitted[0] == prefix[0] and fitted[2] == prefix[2]
    assert fit(prefix[:1], counter, 2000, 500) == prefix[:1]


def test_anthropic_cuts() -> None:
    messages = anthropic_history(3)
    assert safe_cuts(LAYOUTS["anthropic"], messages, 1) == [3, 5]


def test_responses_parallel_calls_and_reasoning_stay_with_their_outputs() -> None:
    def call(call_id: str) -> dict[str, Any]:
        return {"type": "function_call", "call_id": call_id, "name": "bash", "arguments": "{}"}

    def result(call_id: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": "ok"}

    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    items = [
        {"role": "user", "content": "task"},
        *[reasoning, call("c1"), call("c2"), result("c1"), result("c2")],  # parallel calls: not dangling
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "next"},
        *[reasoning, call("c3"), result("c3")],  # no cut between a reasoning item and its call
    ]
    assert safe_cuts(LAYOUTS["responses"], items, 1) == [6, 7, 8]


def test_gemini_cuts() -> None:
    contents = gemini_contents(3)
    assert safe_cuts(LAYOUTS["gemini"], contents, 1) == [3, 5]


def _check_openai_pairs(messages: list[dict[str, Any]]) -> None:
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            pending.remove(message["tool_call_id"])
            continue
        assert not pending
        pending = {c["id"] for c in message.get("tool_calls") or []}


def test_openai_session_through_gateway_stays_valid(gw: RunningGateway) -> None:
    client = gw.openai()
    actions = set()
    for steps in range(1, 26):
        raw = client.chat.completions.with_raw_response.create(
            model="small",
            messages=openai_history(steps),
            tools=TOOLS_OPENAI,  # type: ignore[arg-type]
            extra_headers={"x-session-id": "pairs-openai"},
        )
        assert raw.http_response.status_code == 200  # the simulator rejects broken pairing with a 400
        actions.add(raw.headers["x-cachegate-compaction"])
        _check_openai_pairs(sent_bodies(gw, 1)[0]["messages"])
    assert {"compacted", "summarized"} <= actions


def test_anthropic_session_with_thinking_and_images_stays_valid(gw: RunningGateway) -> None:
    client = gw.anthropic()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    thinking = {"type": "thinking", "thinking": "The parser looks suspicious.", "signature": "sig-abc"}
    actions = set()
    for steps in range(1, 26):
        messages = anthropic_history(steps)
        messages[0] = {"role": "user", "content": [{"type": "text", "text": messages[0]["content"]}, image]}
        messages[1] = {**messages[1], "content": [thinking, *messages[1]["content"]]}
        last_assistant = json.dumps(messages[-2])
        raw = client.messages.with_raw_response.create(
            model="small-claude",
            max_tokens=200,
            system="You are careful.",
            messages=messages,  # type: ignore[arg-type]
            tools=TOOLS_ANTHROPIC,
            extra_headers={"x-session-id": "pairs-anthropic"},  # type: ignore[arg-type]
        )
        assert raw.http_response.status_code == 200
        actions.add(raw.headers["x-cachegate-compaction"])
        sent = sent_bodies(gw, 1)[0]["messages"]
        assert sent[0] == messages[0]  # the task with its image is pinned, untouched
        assert json.dumps(sent[-2]) == last_assistant  # newest turn verbatim
        if raw.headers["x-cachegate-compaction"] == "none":
            assert sent == messages
    assert {"compacted", "summarized"} <= actions
