"""The optimizer on the OpenAI Responses and Gemini wires, through the official SDKs: a timestamp in
`instructions` / `systemInstruction` is relocated after the newest turn so the provider's cached prefix
keeps growing (the simulator reports cached tokens), prefix breaks are reported per session, and
Responses requests get the session's prompt_cache_key."""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from gateway.prompt_cache import session_cache_key
from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import KEYS, last_sim_body, long_text, new_session, openai_client

TOOLS: list[Any] = [{"type": "function", "name": "bash", "parameters": {"type": "object", "properties": {}}}]
CLIENTS: list[genai.Client] = []  # a Client closes its connection pool when collected


def _instructions(minute: int) -> str:
    return f"You are a coding agent. Current time: 2026-11-22T10:{minute:02d}:00Z. " + long_text("rule", 1400)


def _turns(count: int) -> list[list[dict[str, Any]]]:
    """The input of each turn: the previous turns, the model's answer, a new user message."""
    items: list[dict[str, Any]] = []
    inputs = []
    for turn in range(count):
        if items:
            items = [*items, {"role": "assistant", "content": "ok"}]
        items = [*items, {"role": "user", "content": f"[[sim:text ok]] step {turn} " + long_text(f"s{turn}x", 150)}]
        inputs.append(items)
    return inputs


def _responses_session(gw: RunningGateway, tenant: str, turns: int = 3) -> list[tuple[dict[str, str], int]]:
    """(headers, cached tokens) of each turn of one session, the time in the instructions moving on."""
    client, session, seen = openai_client(gw, tenant), new_session(), []
    for turn, items in enumerate(_turns(turns)):
        raw = client.responses.with_raw_response.create(
            model="gpt-4o-mini",
            instructions=_instructions(turn),
            input=items,  # type: ignore[arg-type]
            tools=TOOLS,
            extra_headers={"x-session-id": session},
        )
        response = raw.parse()
        assert response.usage is not None  # (the simulator echoes a relocation note: it is the last user item)
        seen.append((dict(raw.headers), response.usage.input_tokens_details.cached_tokens))
    return seen


def test_responses_timestamp_is_relocated_and_cache_reads_grow(gw: RunningGateway) -> None:
    turns = _responses_session(gw, "reloc")
    headers = [h for h, _ in turns]
    cached = [c for _, c in turns]
    assert all(h["x-cachegate-volatile"] == "timestamp; relocated" for h in headers)
    assert [h["x-cachegate-prefix-break"] for h in headers] == ["first_request", "none", "none"]
    assert 0 == cached[0] < cached[1] < cached[2]  # the whole previous turn is read back
    body = last_sim_body(gw)
    assert "[volatile-1]" in body["instructions"] and "10:02" not in body["instructions"]
    assert body["input"][-1] == {
        "role": "user",
        "content": "(Current values of the placeholders in the system prompt: [volatile-1] = 2026-11-22T10:02:00Z)",
    }
    assert float(headers[2]["x-cachegate-session-cache-hit-ratio"]) > 0.3


def test_responses_without_relocation_report_the_volatile_break(gw: RunningGateway) -> None:
    turns = _responses_session(gw, "acme")
    assert turns[0][0]["x-cachegate-volatile"] == "timestamp"  # found, not moved (relocation is opt-in)
    assert turns[1][0]["x-cachegate-prefix-break"] == "volatile_content; at=system"
    assert [c for _, c in turns] == [0, 0, 0]  # the changing instructions open the prefix: nothing is read


def test_responses_breaks_and_prompt_cache_key(gw: RunningGateway) -> None:
    client, session = openai_client(gw), new_session()

    def send(items: list[dict[str, Any]], tools: list[Any]) -> str:
        raw = client.responses.with_raw_response.create(
            model="gpt-4o-mini",
            instructions="Be brief.",
            input=items,  # type: ignore[arg-type]
            tools=tools,
            extra_headers={"x-session-id": session},
        )
        return raw.headers["x-cachegate-prefix-break"]

    first, second = _turns(2)
    assert send(first, TOOLS) == "first_request"
    assert last_sim_body(gw)["prompt_cache_key"] == session_cache_key(f"acme:{session}")
    assert send(second, TOOLS) == "none"
    assert send(second, [*TOOLS, {**TOOLS[0], "name": "ls"}]) == "tools_changed; at=tools"
    edited = [{"role": "user", "content": "[[sim:text ok]] another task"}, *second[1:]]
    assert send(edited, [*TOOLS, {**TOOLS[0], "name": "ls"}]) == "message_edited; at=messages.0"


def _gemini(gw: RunningGateway, tenant: str, session: str) -> genai.Client:
    options = types.HttpOptions(
        base_url=gw.url, headers={"x-session-id": session}, retry_options=types.HttpRetryOptions(attempts=1)
    )
    CLIENTS.append(genai.Client(api_key=KEYS[tenant], http_options=options))
    return CLIENTS[-1]


def _gemini_session(gw: RunningGateway, tenant: str, model: str = "gpt-4o-mini") -> list[tuple[dict[str, str], int]]:
    client, seen = _gemini(gw, tenant, new_session()), []
    for turn, items in enumerate(_turns(3)):
        contents = [
            {"role": "model" if item["role"] == "assistant" else "user", "parts": [{"text": item["content"]}]}
            for item in items
        ]
        response = client.models.generate_content(
            model=model,
            contents=contents,  # type: ignore[arg-type]
            config=types.GenerateContentConfig(system_instruction=_instructions(turn)),
        )
        assert response.text == "ok" and response.usage_metadata is not None
        assert response.sdk_http_response is not None and response.sdk_http_response.headers is not None
        seen.append((response.sdk_http_response.headers, response.usage_metadata.cached_content_token_count or 0))
    return seen


def test_gemini_system_instruction_timestamp_is_relocated(gw: RunningGateway) -> None:
    turns = _gemini_session(gw, "reloc")
    assert [h["x-cachegate-prefix-break"] for h, _ in turns] == ["first_request", "none", "none"]
    assert turns[0][0]["x-cachegate-volatile"] == "timestamp; relocated"
    cached = [c for _, c in turns]
    assert 0 == cached[0] < cached[1] < cached[2]
    messages = last_sim_body(gw)["messages"]  # converted to Chat Completions on the way upstream
    assert "[volatile-1]" in messages[0]["content"] and "10:02" not in messages[0]["content"]
    note = messages[-1]["content"][-1]["text"]  # a text part of the newest user turn
    assert note.endswith("[volatile-1] = 2026-11-22T10:02:00Z)")


def test_gemini_route_relocates_in_its_own_shape(gw: RunningGateway) -> None:
    """A Gemini route gets the request as it is: the timestamp moves out of `systemInstruction` into a
    text part of the newest user turn, and the provider's implicit cache reads grow turn by turn."""
    turns = _gemini_session(gw, "reloc", model="gemini-2.5-flash")
    assert [h["x-cachegate-prefix-break"] for h, _ in turns] == ["first_request", "none", "none"]
    cached = [c for _, c in turns]
    assert 0 == cached[0] < cached[1] < cached[2]
    body = last_sim_body(gw)
    system = body["systemInstruction"]["parts"][0]["text"]
    assert "[volatile-1]" in system and "10:02" not in system
    assert body["contents"][-1]["parts"][-1]["text"].endswith("[volatile-1] = 2026-11-22T10:02:00Z)")


def test_gemini_without_relocation_reports_the_break(gw: RunningGateway) -> None:
    turns = _gemini_session(gw, "acme")
    assert turns[1][0]["x-cachegate-prefix-break"] == "volatile_content; at=system"
    assert [c for _, c in turns] == [0, 0, 0]


def test_responses_to_an_anthropic_route_report_no_breakpoints(gw: RunningGateway) -> None:
    raw = openai_client(gw).responses.with_raw_response.create(
        model="claude-sonnet-4-5", input="[[sim:text ok]] hi", extra_headers={"x-session-id": new_session()}
    )
    assert raw.parse().output_text == "ok"
    assert raw.headers["x-cachegate-cache-breakpoints"] == "skipped=responses_wire; client=0"
    assert "cache_control" not in str(last_sim_body(gw))
