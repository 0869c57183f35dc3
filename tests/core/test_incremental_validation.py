"""A session's request validates only the messages its last validated history did not hold (issue 28:
gateway/history/validated.py, gateway/stages/parse.py). Through a real gateway with the optional stages
off (the parse stage is then the only one that takes the history's facts): what the session's history
repeats is known, every new message is still checked (shape, tool pairing, depth), and nothing that was
not validated in this wire, in this session, with these bytes is taken as known."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import httpx
import orjson

from bench.prompt_cache_replay import to_anthropic
from gateway.bounded import Caps
from gateway.errors import GatewayError
from gateway.history import memo
from gateway.history.validated import ValidatedHistories, validated
from gateway.traces import default_traces, read_sessions
from gateway.wire.anthropic import AnthropicMessages
from gateway.wire.openai import OpenAIChat
from tests.gateway_harness import TENANT_KEYS, RunningGateway

MODEL = "gpt-4o-mini"
START: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "list files"}]
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}},
]}  # fmt: skip
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "a.py"}
OPENAI, ANTHROPIC = OpenAIChat(), AnthropicMessages()
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses"}


def send(gw: RunningGateway, session: str, raw: bytes, wire: str = "openai") -> httpx.Response:
    key = TENANT_KEYS["acme"]
    headers = {"authorization": f"Bearer {key}", "x-api-key": key, "content-type": "application/json"}
    return httpx.post(gw.url + PATHS[wire], content=raw, headers={**headers, "x-session-id": session})


def body(messages: list[Any]) -> bytes:
    """Compact JSON, as the SDKs send it (the history's facts come from the bytes then)."""
    return orjson.dumps({"model": MODEL, "messages": messages, "max_tokens": 10})


def known(session: str, messages: list[Any], wire: str = "openai") -> int:
    facts = [memo.facts(orjson.dumps(message)) for message in messages]
    return validated.known("acme", session, wire, facts)


def test_a_session_request_takes_its_repeated_history_as_validated(gw: RunningGateway) -> None:
    session = uuid.uuid4().hex
    history = [*START, CALL, RESULT]
    assert send(gw, session, body(START)).status_code == 200
    assert known(session, history) == len(START)
    assert send(gw, session, body(history)).status_code == 200
    assert known(session, [*history, {"role": "user", "content": "next"}]) == len(history)


def test_every_new_message_is_still_checked(gw: RunningGateway) -> None:
    session = uuid.uuid4().hex
    history = [*START, CALL, RESULT]
    assert send(gw, session, body(START)).status_code == 200
    assert send(gw, session, body(history)).status_code == 200
    broken = {"role": "assistant", "content": None, "tool_calls": "not a list"}
    unanswered = {"role": "tool", "tool_call_id": "c9", "content": "x"}
    deep: Any = "x"
    for _ in range(70):
        deep = [deep]
    too_deep = {"role": "user", "content": [{"type": "text", "text": "x", "extra": deep}]}
    for new, words in [
        ([broken], "tool_calls"),
        ([unanswered], "c9"),
        ([{**CALL}, {"role": "user", "content": "skip"}], "Missing responses"),
        ([too_deep], "nests JSON"),
    ]:
        response = send(gw, session, body([*history, *new]))
        assert response.status_code == 400, (new, response.text)
        assert words in response.json()["error"]["message"]
    assert send(gw, session, body([*history, {"role": "user", "content": "fine"}])).status_code == 200


def test_a_session_body_too_deep_to_take_facts_of_is_a_400(gw: RunningGateway) -> None:
    """Hostile nesting in a session's later bodies: past the depth limit, past what orjson writes (the
    facts cannot be taken), past what it reads; in a new message and in one of the repeated messages'
    places. Each is the depth limit's 400, never a 5xx."""
    session = uuid.uuid4().hex
    assert send(gw, session, body(START)).status_code == 200
    start = orjson.dumps(START)[1:-1]
    for levels in (70, 300, 1_100):
        deep = b"[" * levels + b'"x"' + b"]" * levels
        part = b'{"role":"user","content":[{"type":"text","text":"x","extra":' + deep + b"}]}"
        for messages in (start + b"," + part, part + b"," + start):
            raw = b'{"model":"' + MODEL.encode() + b'","messages":[' + messages + b'],"max_tokens":10}'
            response = send(gw, session, raw)
            assert response.status_code == 400, (levels, response.text[:200])
            assert "nests JSON" in response.json()["error"]["message"]


def test_a_responses_session_checks_its_new_input_items(gw: RunningGateway) -> None:
    """The Responses API's `input` items, the same way: the repeated ones are known, each new one checked."""
    session = uuid.uuid4().hex
    items: list[Any] = [
        {"role": "user", "content": "list files"},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": '{"cmd": "ls"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    ]

    def sent(items: list[Any]) -> httpx.Response:
        return send(gw, session, orjson.dumps({"model": MODEL, "input": items}), "responses")

    assert sent(items).status_code == 200
    later = [*items, {"role": "user", "content": "and now?"}]
    assert known(session, later, "responses") == len(items)
    bad = {"type": "function_call", "call_id": 5, "name": "bash", "arguments": "{}"}
    response = sent([*later, bad])
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == f"input[{len(later)}].call_id"
    assert sent(later).status_code == 200


def test_an_edited_history_is_validated_whole(gw: RunningGateway) -> None:
    session = uuid.uuid4().hex
    assert send(gw, session, body([*START, CALL, RESULT])).status_code == 200
    edited = [START[0], {"role": "user", "content": 5}, CALL, RESULT, {"role": "user", "content": "go"}]
    response = send(gw, session, body(edited))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages[1]"


def test_a_duplicate_history_field_is_validated_as_parsed(gw: RunningGateway) -> None:
    """The bytes start like the session's last validated body, but a second `messages` key (the one the
    parser keeps) holds something else: it is that one that is validated."""
    session = uuid.uuid4().hex
    assert send(gw, session, body(START)).status_code == 200
    raw = body([*START, CALL, RESULT])[:-1] + b',"messages":[{"role":"nobody","content":"x"}]}'
    response = send(gw, session, raw)
    assert response.status_code == 400
    assert "role" in response.json()["error"]["message"]


def test_a_history_validated_in_another_wire_is_validated_again(gw: RunningGateway) -> None:
    """The same bytes, sent to the Messages API in the same session: OpenAI's tool message is not one of
    its roles. Taken as known from the OpenAI request, it would reach the stages unchecked."""
    session = uuid.uuid4().hex
    history = [{"role": "user", "content": "list files"}, CALL, RESULT]
    assert send(gw, session, body(history)).status_code == 200
    response = send(gw, session, body([*history, {"role": "user", "content": "go"}]), wire="anthropic")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("messages.1")  # in the part OpenAI's request held


def test_known_is_all_of_the_last_validated_history_or_nothing() -> None:
    passed = ValidatedHistories()
    facts = [memo.facts(orjson.dumps({"n": n})) for n in range(4)]
    passed.passed("t", "s", "openai", facts[:3])
    assert passed.known("t", "s", "openai", facts) == 3
    assert passed.known("t", "s", "openai", facts[:3]) == 3
    assert passed.known("t", "s", "openai", facts[:2]) == 0  # shorter: not an extension
    assert passed.known("t", "s", "openai", [facts[1], *facts[1:]]) == 0
    assert passed.known("t", "s", "anthropic", facts) == 0
    assert passed.known("t", "other", "openai", facts) == 0
    assert passed.known("u", "s", "openai", facts) == 0


def outcome(wire: Any, messages: list[Any], known: int) -> str | None:
    """The error the wire gives a body with these messages (None: valid)."""
    try:
        wire.validate({"model": MODEL, "max_tokens": 10, "messages": messages}, known)
    except GatewayError as error:
        return error.message
    return None


def test_resuming_after_a_validated_history_decides_as_validating_all() -> None:
    """Recorded agent histories, each cut after every message as the session's last validated request,
    then extended by each kind of new turn (valid, and wrong in shape or in tool pairing): validating only
    what follows the cut gives the same answer, word for word, as validating the whole history."""
    sessions = list(itertools.islice(read_sessions(default_traces()), 3))
    for session in sessions:
        openai_history = session["messages"][:24]
        anthropic_history = to_anthropic(openai_history)[1]
        for wire, history in [(OPENAI, openai_history), (ANTHROPIC, anthropic_history)]:
            assert outcome(wire, history, 0) is None
            turns = _new_turns(wire, history)
            for cut in range(len(history) + 1):
                for turn in turns:
                    messages = [*history[:cut], *turn]
                    assert outcome(wire, messages, cut) == outcome(wire, messages, 0), (wire.name, cut, turn)


def _new_turns(wire: Any, history: list[Any]) -> list[list[Any]]:
    """Valid and invalid continuations in the wire's own shapes."""
    if wire is OPENAI:
        call = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "n1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}  # fmt: skip
        answer = {"role": "tool", "tool_call_id": "n1", "content": "ok"}
        return [
            [], [{"role": "user", "content": "go on"}], [call], [call, answer],
            [call, {"role": "user", "content": "skipped"}], [{"role": "tool", "tool_call_id": "n9", "content": "x"}],
            [{"role": "assistant", "tool_calls": "x"}], [{"role": "nobody", "content": "x"}],
        ]  # fmt: skip
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "n1", "name": "bash", "input": {}}]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "n1", "content": "ok"}]}
    stray = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "n9", "content": "x"}]}
    return [
        [], [{"role": "user", "content": "go on"}], [use], [use, answer], [use, {"role": "assistant", "content": "no"}],
        [stray], [{"role": "user", "content": 5}], [{"role": "system", "content": "s"}, answer],
    ]  # fmt: skip


def test_the_record_is_bounded_per_tenant_and_in_all() -> None:
    """Session ids are the caller's: one tenant sending many keeps at most its share, and never evicts
    another tenant's record."""
    caps = Caps(max_entries=6, max_bytes=1 << 20, max_entries_per_tenant=4, max_bytes_per_tenant=1 << 20)
    passed = ValidatedHistories(caps)
    facts = [memo.facts(orjson.dumps({"bounded": n})) for n in range(3)]
    passed.passed("quiet", "s", "openai", facts)
    for number in range(50):
        passed.passed("noisy", f"s{number}", "openai", facts)
    assert len(passed) <= caps.max_entries
    assert passed.known("quiet", "s", "openai", facts) == 3
    assert sum(passed.known("noisy", f"s{number}", "openai", facts) > 0 for number in range(50)) == 4
