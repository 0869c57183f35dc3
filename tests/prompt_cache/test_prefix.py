"""Prefix-break diagnosis: each cause, reported in x-cachegate-prefix-break and counted in a metric."""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import long_text, new_session, openai_client

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    },
]


def conversation(system: str = "You are an agent. " + long_text("p", 300)) -> list[Any]:
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": "[[sim:text ok]] go on"},
    ]


def diagnose(
    gw: RunningGateway, session: str, messages: list[Any], tools: list[Any] = TOOLS, model: str = "gpt-4o-mini"
) -> str:
    raw = openai_client(gw).chat.completions.with_raw_response.create(
        model=model, messages=messages, tools=tools, extra_headers={"x-session-id": session}
    )
    return raw.headers["x-cachegate-prefix-break"]


def breaks_metric(gw: RunningGateway, cause: str) -> float:
    pattern = rf'cachegate_prompt_cache_prefix_breaks_total\{{cause="{cause}",tenant="acme"\}} (\S+)'
    found = re.search(pattern, gw.metrics())
    return float(found.group(1)) if found else 0.0


def test_appending_turns_is_no_break(gw: RunningGateway) -> None:
    session, messages = new_session(), conversation()
    assert diagnose(gw, session, messages) == "first_request"
    messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "[[sim:text ok]] next"}]
    assert diagnose(gw, session, messages) == "none"


def test_tool_changes_and_key_order(gw: RunningGateway) -> None:
    session, messages = new_session(), conversation()
    diagnose(gw, session, messages)
    reordered = [TOOLS[1], {"function": dict(reversed(TOOLS[0]["function"].items())), "type": "function"}]
    assert diagnose(gw, session, messages, reordered) == "none"  # canonical JSON absorbs order
    before = breaks_metric(gw, "tools_changed")
    edited = copy.deepcopy(TOOLS)
    edited[1]["function"]["description"] = "Run one shell command"
    assert diagnose(gw, session, messages, edited) == "tools_changed; at=tools"
    assert breaks_metric(gw, "tools_changed") == before + 1


def test_system_change(gw: RunningGateway) -> None:
    session = new_session()
    diagnose(gw, session, conversation())
    assert diagnose(gw, session, conversation("You are a different agent.")) == "system_changed; at=system"


def test_earlier_message_edited(gw: RunningGateway) -> None:
    session, messages = new_session(), conversation()
    diagnose(gw, session, messages)
    edited = [*messages[:1], {"role": "user", "content": "Fix the bug, quickly."}, *messages[2:]]
    assert diagnose(gw, session, edited) == "message_edited; at=messages.1"


def test_volatile_content_in_the_system_prompt(gw: RunningGateway) -> None:
    session = new_session()
    diagnose(gw, session, conversation("Agent. Now: 2026-11-22T10:00:01Z. " + long_text("v", 300)))
    found = diagnose(gw, session, conversation("Agent. Now: 2026-11-22T10:00:09Z. " + long_text("v", 300)))
    assert found == "volatile_content; at=system"


def test_volatile_content_in_an_earlier_message(gw: RunningGateway) -> None:
    session, messages = new_session(), conversation()
    messages[1] = {"role": "user", "content": "Fix the bug. request_id=ab12cd34ef"}
    diagnose(gw, session, messages)
    messages[1] = {"role": "user", "content": "Fix the bug. request_id=99zz88yy77"}
    assert diagnose(gw, session, messages) == "volatile_content; at=messages.1"


def test_side_calls_to_another_model_are_a_line_of_their_own(gw: RunningGateway) -> None:
    """Claude Code's Haiku calls within a session are not breaks of the main line (per-model records)."""
    session, messages = new_session(), conversation()
    diagnose(gw, session, messages)
    side = [{"role": "user", "content": "[[sim:text title]] Write a 5-word title for this conversation."}]
    assert diagnose(gw, session, side, model="gpt-4o-mini-24h") == "first_request"
    assert diagnose(gw, session, side, model="gpt-4o-mini-24h") == "none"
    grown = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "[[sim:text ok]] more"}]
    assert diagnose(gw, session, grown) == "none"  # the main line goes on from its own last request


def test_truncated_history(gw: RunningGateway) -> None:
    session, messages = new_session(), conversation()
    diagnose(gw, session, messages)
    # The client dropped the newest turns (a rewind): what is left still matches the previous request.
    assert diagnose(gw, session, messages[:2]) == "history_truncated; at=messages.2"


def test_sessionless_requests_are_not_compared(gw: RunningGateway) -> None:
    raw = openai_client(gw).chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=conversation())
    assert raw.headers["x-cachegate-prefix-break"] == "no_session"
