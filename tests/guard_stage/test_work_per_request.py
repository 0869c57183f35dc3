"""The guard stage's work on a session request grows with the request's new turn, not with its history:
the Python calls it makes (request and response path) are the same after 6 turns and after 60."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from types import FrameType
from typing import Any

import orjson

from agent_runtime.guard import steps_from_openai_messages
from gateway.config import PolicyConfig, Settings, TenantConfig
from gateway.context import Reply, RequestContext
from gateway.guard.state import STEPS_SHOWN, session_prefix
from gateway.services import Services, create_services
from gateway.stages.guard import GuardStage
from gateway.wire import OPENAI

Message = dict[str, Any]


def turn(i: int) -> list[Message]:
    """An agent turn: a new command and its output (no two alike: the guard has nothing to act on)."""
    call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "ls {i}"}}'}}
    return [
        {"role": "assistant", "content": f"Looking at {i}.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"file-{i}.py"},
    ]


def history(turns: int) -> list[Message]:
    return [{"role": "user", "content": "Fix the bug."}, *(m for i in range(turns) for m in turn(i))]


async def request(services: Services, stage: GuardStage, session: str, messages: list[Message]) -> RequestContext:
    """One request and its answer (the next turn's call) through the stage, its history parsed afresh."""
    ctx = RequestContext(
        wire=OPENAI,
        body={"model": "gpt-4.1-mini", "messages": orjson.loads(orjson.dumps(messages))},
        headers={},
        services=services,
        tenant=TenantConfig(name="acme"),
        session_id=session,
        policy=PolicyConfig(),
    )
    await stage.on_request(ctx)
    assert ctx.reply is None
    answer = turn(len(messages))[0]
    body = {"id": "r", "object": "chat.completion", "choices": [{"index": 0, "message": answer}]}
    ctx.reply, ctx.response_body = Reply(body=body), body
    await stage.on_response(ctx)
    await ctx.state.flush()  # as the pipeline does: the stage's deferred writes
    return ctx


def calls_made(turns: int) -> Counter[str]:
    """The Python calls of the stage on a session's request after ``turns`` turns (the session's parser
    and store warm from its previous request)."""
    services = create_services(Settings.model_validate({}))
    stage = GuardStage(services)
    session = f"s{turns}"
    for done in range(1, turns + 1):
        asyncio.run(request(services, stage, session, history(done)))
    made: Counter[str] = Counter()

    def count(frame: FrameType, event: str, _: object) -> None:
        if event == "call":
            made[f"{frame.f_code.co_filename}:{frame.f_code.co_name}"] += 1

    sys.setprofile(count)
    try:
        asyncio.run(request(services, stage, session, history(turns + 1)))
    finally:
        sys.setprofile(None)
    return Counter({name: n for name, n in made.items() if "/gateway/" in name or "/agent_runtime/" in name})


def test_a_request_costs_the_same_after_6_turns_and_after_60() -> None:
    short, long = calls_made(6), calls_made(60)
    assert short == long, {name: (short[name], long[name]) for name in short | long if short[name] != long[name]}


def test_the_admin_view_shows_the_last_steps_of_the_history() -> None:
    services = create_services(Settings.model_validate({}))
    stage = GuardStage(services)
    messages = history(45)
    asyncio.run(request(services, stage, "view", messages[:41]))
    asyncio.run(request(services, stage, "view", messages))
    view = orjson.loads(asyncio.run(services.store.get(session_prefix("acme", "view") + "steps")) or b"{}")
    expected = steps_from_openai_messages(messages)[-STEPS_SHOWN:]
    assert view["position"] == 2 and view["tool_calls"] == 46  # the history's 45 calls and the answer's
    assert [(s["tool"], s["args"], s["result"], s["summary"]) for s in view["steps"]] == [
        (s.tool, s.args_hash, s.result_hash, s.summary) for s in expected
    ]
