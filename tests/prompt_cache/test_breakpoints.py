"""Breakpoint placement through a real gateway (official Anthropic/OpenAI SDKs), checked against the
simulator's prompt-cache accounting, which applies Anthropic's rules (4 marks -> 400, 20-block lookback,
model minimum, 1h-before-5m -> 400)."""

from __future__ import annotations

import time
from typing import Any

from gateway.prompt_cache.session import SessionState, line_key, save_state
from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import anthropic_client, last_sim_body, long_text, marks_in, new_session, openai_client

MODEL = "claude-sonnet-4-5"


def total_input(usage: Any) -> int:
    return int(usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens)


def send(
    gw: RunningGateway,
    messages: list[Any],
    *,
    system: Any,
    session: str | None = None,
    tenant: str = "acme",
    model: str = MODEL,
) -> tuple[Any, dict[str, str]]:
    headers = {"x-session-id": session} if session else {}
    raw = anthropic_client(gw, tenant).messages.with_raw_response.create(
        model=model, max_tokens=50, system=system, messages=messages, extra_headers=headers
    )
    return raw.parse(), dict(raw.headers)


def test_each_agent_turn_reads_everything_the_previous_turn_sent(gw: RunningGateway) -> None:
    session, system = new_session(), long_text("rules", 1500)
    messages: list[Any] = [{"role": "user", "content": "[[sim:text step]] " + long_text("task", 200)}]
    previous_total = 0
    for turn in range(3):
        message, headers = send(gw, messages, system=system, session=session)
        assert message.usage.cache_read_input_tokens == previous_total
        assert headers["x-cachegate-cache-breakpoints"].startswith("static:5m@0,moving:5m@")
        previous_total = total_input(message.usage)
        messages += [
            {"role": "assistant", "content": message.content[0].text},
            {"role": "user", "content": f"[[sim:text step]] result {turn}"},
        ]
    assert [where for where, _ in marks_in(last_sim_body(gw))] == ["system.0", "messages.4.0"]


def test_client_marks_count_toward_the_limit_and_are_never_duplicated(gw: RunningGateway) -> None:
    mark = {"type": "ephemeral"}
    system = [{"type": "text", "text": long_text("limit", 1500), "cache_control": mark}]
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": mark}]},
        {"role": "assistant", "content": [{"type": "text", "text": "two", "cache_control": mark}]},
        {"role": "user", "content": [{"type": "text", "text": "[[sim:text fine]] three"}]},
    ]
    message, headers = send(gw, messages, system=system, session=new_session())
    assert message.content[0].text == "fine"  # a 5th mark would have been a 400
    assert headers["x-cachegate-cache-breakpoints"].endswith("client=3")
    assert len(marks_in(last_sim_body(gw))) == 4

    messages[2]["content"][0]["cache_control"] = mark  # 4 client marks: nothing added
    message, headers = send(gw, messages, system=system, session=new_session())
    assert message.content[0].text == "fine"
    assert headers["x-cachegate-cache-breakpoints"] == "none; client=4"


def test_malformed_client_mark_passes_through_unchanged_and_counts(gw: RunningGateway) -> None:
    odd = {"type": "persistent", "ttl": "forever"}
    system = [{"type": "text", "text": long_text("odd", 1500)}]
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "[[sim:text ok]] go", "cache_control": odd}]}
    ]
    _, headers = send(gw, messages, system=system, session=new_session())
    assert headers["x-cachegate-cache-breakpoints"] == "static:5m@0; client=1"
    assert marks_in(last_sim_body(gw)) == [("system.0", {"type": "ephemeral"}), ("messages.0.0", odd)]


def _long_turn(label: str) -> list[Any]:
    """An agent turn that appends 30 blocks: past a breakpoint's 20-block lookback."""
    blocks = [{"type": "text", "text": long_text(f"{label}{i}-", 40)} for i in range(30)]
    blocks[-1]["text"] += " [[sim:text done]]"
    return blocks


def _long_turn_session(gw: RunningGateway, label: str, tenant: str) -> tuple[int, int]:
    """(tokens the first request sent, tokens the second one read)."""
    system: Any = long_text(f"{label}-sys", 1500)
    first: list[Any] = [{"role": "user", "content": "[[sim:text ack]] " + long_text(f"{label}-task", 300)}]
    if tenant == "plain":  # LiteLLM-style fixed marks, set by the client: system + last message
        system = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        first[0]["content"] = [{"type": "text", "text": first[0]["content"], "cache_control": {"type": "ephemeral"}}]
    session = new_session()
    message, _ = send(gw, first, system=system, session=session, tenant=tenant)
    turn = _long_turn(label)
    if tenant == "plain":
        turn[-1]["cache_control"] = {"type": "ephemeral"}
        first[0]["content"] = [{"type": "text", "text": first[0]["content"][0]["text"]}]
    second, headers = send(
        gw,
        [*first, {"role": "assistant", "content": "ack"}, {"role": "user", "content": turn}],
        system=system,
        session=session,
        tenant=tenant,
    )
    if tenant == "acme":
        assert "intermediate:5m@" in headers["x-cachegate-cache-breakpoints"]
    return total_input(message.usage), second.usage.cache_read_input_tokens


def test_intermediate_mark_keeps_a_long_turn_within_the_lookback(gw: RunningGateway) -> None:
    sent, read = _long_turn_session(gw, "ours", "acme")
    assert read == sent  # the intermediate mark found the previous entry 15 blocks back
    fixed_sent, fixed_read = _long_turn_session(gw, "fixed", "plain")
    assert fixed_read < fixed_sent  # only the system entry was within reach: the task is paid again


def test_no_marks_below_the_model_minimum(gw: RunningGateway) -> None:
    short: list[Any] = [{"role": "user", "content": "[[sim:text ok]] hi"}]
    _, headers = send(gw, short, system="Be brief.", session=new_session())
    assert headers["x-cachegate-cache-breakpoints"] == "none; client=0"  # sonnet's minimum: 1024 tokens
    assert marks_in(last_sim_body(gw)) == []
    medium = [{"role": "user", "content": "[[sim:text ok]] " + long_text("medium", 800)}]
    _, headers = send(gw, medium, system="Be brief.", session=new_session())
    assert headers["x-cachegate-cache-breakpoints"].startswith("moving:5m@")
    _, headers = send(gw, medium, system="Be brief.", session=new_session(), model="claude-min-3000")
    assert headers["x-cachegate-cache-breakpoints"] == "none; client=0"  # per-model override


def test_ttl_order_follows_the_clients_marks(gw: RunningGateway) -> None:
    # The model's policy asks for 1h, but the client's 5m mark comes first: ours after it must be 5m.
    system = [{"type": "text", "text": long_text("order", 1500), "cache_control": {"type": "ephemeral"}}]
    messages: list[Any] = [{"role": "user", "content": "[[sim:text ok]] " + long_text("q", 200)}]
    message, headers = send(gw, messages, system=system, session=new_session(), model="claude-1h")
    assert message.content[0].text == "ok"  # 1h after 5m would have been a 400
    assert headers["x-cachegate-cache-breakpoints"] == "moving:5m@1; client=1"
    # A client 1h mark late in the prompt: our static mark before it must be 1h, the moving one may be 5m.
    system2: Any = long_text("order2", 1500)
    messages2: list[Any] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        },
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "[[sim:text ok]] c"},
    ]
    message, headers = send(gw, messages2, system=system2, session=new_session())
    assert message.content[0].text == "ok"
    assert headers["x-cachegate-cache-breakpoints"] == "static:1h@0,moving:5m@3; client=1"


async def test_ttl_follows_the_gap_between_a_sessions_requests(gw: RunningGateway) -> None:
    session = new_session()
    # The session's previous request was 20 minutes ago: 5m entries would have expired.
    await save_state(
        gw.services.store, line_key(f"acme:{session}", MODEL), SessionState(last_seen=time.time() - 1200), 600
    )
    messages: list[Any] = [{"role": "user", "content": "[[sim:text ok]] " + long_text("gap", 300)}]
    message, headers = send(gw, messages, system=long_text("gap-sys", 1500), session=session)
    assert headers["x-cachegate-cache-breakpoints"] == "static:1h@0,moving:1h@1; client=0"
    assert message.usage.cache_creation.ephemeral_1h_input_tokens == total_input(message.usage)


def test_openai_shaped_requests_to_anthropic_get_marks_through_litellm(gw: RunningGateway) -> None:
    client, session = openai_client(gw), new_session()
    messages: list[Any] = [
        {"role": "system", "content": long_text("oa-sys", 1500)},
        {"role": "user", "content": "[[sim:text first]] " + long_text("oa-task", 200)},
    ]
    first = client.chat.completions.create(model=MODEL, messages=messages, extra_headers={"x-session-id": session})
    sim_body = last_sim_body(gw)
    assert [where for where, _ in marks_in(sim_body)] == ["system.0", "messages.0.0"]
    messages += [{"role": "assistant", "content": "first"}, {"role": "user", "content": "[[sim:text second]] more"}]
    second = client.chat.completions.create(model=MODEL, messages=messages, extra_headers={"x-session-id": session})
    assert first.usage is not None and second.usage is not None
    details = second.usage.prompt_tokens_details
    assert details is not None and details.cached_tokens == first.usage.prompt_tokens


def test_streamed_turns_are_marked_the_same_way(gw: RunningGateway) -> None:
    client, session = anthropic_client(gw), new_session()
    messages: list[Any] = [{"role": "user", "content": "[[sim:text streamed reply]] " + long_text("stream", 1500)}]
    with client.messages.stream(
        model=MODEL, max_tokens=50, messages=messages, extra_headers={"x-session-id": session}
    ) as stream:
        first = stream.get_final_message()
    messages += [
        {"role": "assistant", "content": "streamed reply"},
        {"role": "user", "content": "[[sim:text ok]] more"},
    ]
    with client.messages.stream(
        model=MODEL, max_tokens=50, messages=messages, extra_headers={"x-session-id": session}
    ) as stream:
        second = stream.get_final_message()
    assert second.usage.cache_read_input_tokens == total_input(first.usage)


def test_no_marks_while_the_system_prompt_changes_on_every_request(gw: RunningGateway) -> None:
    session = new_session()
    messages: list[Any] = [{"role": "user", "content": "[[sim:text ok]] " + long_text("unstable", 300)}]
    found = []
    for second in range(3):
        system = f"Agent. Request {second} at 2026-11-22T10:00:0{second}Z. " + long_text("unstable-sys", 1500)
        _, headers = send(gw, messages, system=system, session=session)
        found.append(headers["x-cachegate-cache-breakpoints"])
    assert found[0].startswith("static:5m@0,moving") and found[1].startswith("static:5m@0,moving")
    assert found[2] == "skipped=unstable_prefix; client=0"  # its writes would never be read
