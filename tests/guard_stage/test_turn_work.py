"""The guard's parsing work on a session request follows the request's new turn, not its history: a turn
that appends 2 messages to a 100-message session parses those 2 and compares no message of the history
(the request's bytes repeat the session's previous body, so the facts of the messages they repeat vouch
for them: gateway/history/prefix.py). Counted as operations, never timed."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

import orjson
import pytest

import gateway.history.steps as history_steps
from agent_runtime.guard import steps_from_openai_messages
from gateway.config import PolicyConfig, Settings, TenantConfig
from gateway.context import Reply, RequestContext
from gateway.history.view import RawHistory
from gateway.services import Services, create_services
from gateway.stages.guard import GuardNote, GuardStage
from gateway.wire import OPENAI

Message = dict[str, Any]
work: Counter[str] = Counter()


class Counted(dict[str, Any]):
    """A message as the body parser gives it, counting the deep comparisons it takes part in."""

    def __eq__(self, other: object) -> bool:
        work["compared"] += 1
        return dict.__eq__(self, other) is True

    __hash__ = None  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def count_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count the messages whose parts are computed (the costly half of parsing one)."""
    real = history_steps.message_parts

    def parts(fmt: str, message: Message) -> Any:
        work["parsed"] += 1
        return real(fmt, message)

    monkeypatch.setattr(history_steps, "message_parts", parts)


def history(messages: int, tag: str) -> list[Message]:
    """A task, then turns of a new command and its output (no two alike: nothing for the guard to act on).
    ``tag`` makes the contents new to the process (its facts memo)."""
    out: list[Message] = [{"role": "user", "content": f"Fix the bug ({tag})."}]
    for i in range((messages - 1) // 2):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": f'{{"cmd": "ls {i}"}}'}}
        out += [
            {"role": "assistant", "content": f"Looking at {i} ({tag}).", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"file-{i}.py ({tag})"},
        ]
    return out[:messages]


POLICY, TENANT = PolicyConfig(), TenantConfig(name="acme")


async def request(services: Services, stage: GuardStage, session: str, messages: list[Message]) -> RequestContext:
    """One request as the gateway reads it (raw bytes, then the parsed body) and its answer."""
    raw = orjson.dumps({"model": "gpt-4.1-mini", "messages": messages})
    body = orjson.loads(raw)
    body["messages"] = [Counted(message) for message in body["messages"]]
    ctx = RequestContext(
        wire=OPENAI, body=body, headers={}, services=services, tenant=TENANT, session_id=session, policy=POLICY
    )
    ctx.raw_history = RawHistory.of(raw, body, "messages")
    await stage.on_request(ctx)
    assert ctx.reply is None
    answer = {"id": "r", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "ok"}}]}
    ctx.reply, ctx.response_body = Reply(body=answer), answer
    await stage.on_response(ctx)
    await ctx.state.flush()
    return ctx


def turn_work(length: int) -> tuple[Counter[str], RequestContext, str]:
    """The work of the request that appends 2 messages to a session grown turn by turn to ``length``."""
    services = create_services(Settings.model_validate({}))
    stage = GuardStage(services)
    tag = uuid.uuid4().hex
    for size in range(1, length + 1, 2):
        asyncio.run(request(services, stage, "s", history(size, tag)))
    work.clear()
    ctx = asyncio.run(request(services, stage, "s", history(length + 2, tag)))
    return Counter(work), ctx, tag


def test_a_turn_of_two_messages_parses_two_and_compares_none_of_the_history() -> None:
    done, ctx, tag = turn_work(101)
    assert done["parsed"] == 2 and done["compared"] == 0, done
    note = ctx.notes["guard"]
    assert isinstance(note, GuardNote)
    assert note.steps[-10:] == steps_from_openai_messages(history(103, tag))[-10:]
    assert note.tool_calls == 51


def test_the_work_is_the_same_after_10_messages_and_after_100() -> None:
    assert turn_work(11)[0] == turn_work(101)[0]


def test_an_edited_history_is_parsed_again_and_decides_as_a_fresh_one() -> None:
    services = create_services(Settings.model_validate({}))
    stage = GuardStage(services)
    tag = uuid.uuid4().hex
    messages = history(61, tag)
    for size in range(1, 62, 2):
        asyncio.run(request(services, stage, "e", messages[:size]))
    edited = [*messages[:40], {**messages[40], "content": "another output"}, *history(63, tag)[41:]]
    ctx = asyncio.run(request(services, stage, "e", edited))
    assert ctx.notes["guard"].steps[-20:] == steps_from_openai_messages(edited)[-20:]
