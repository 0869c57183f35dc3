"""A session's request that appends a turn digests and masks the new messages only (issue 28): the
line's previous request left its messages' digests in this process (gateway/prompt_cache/turns.py), so
the 100 messages it repeats are not looked at one by one. Counted as work (facts read, messages
serialized and masked), never timed. And the shortcut changes nothing: the same bodies, headers and
states as a stage that starts from nothing on every request, edits and truncations included."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import orjson
import pytest

from gateway.config import ModelConfig, PolicyConfig, Settings, TenantConfig
from gateway.context import RequestContext
from gateway.history import MessageFacts
from gateway.history import facts as facts_module
from gateway.history.view import RawHistory
from gateway.prompt_cache import prefix as prefix_module
from gateway.prompt_cache.accounting import CacheTotals
from gateway.prompt_cache.survey import Survey
from gateway.prompt_cache.turns import Turns
from gateway.services import Services, create_services
from gateway.stages.prompt_cache import PromptCacheStage
from gateway.wire import ANTHROPIC, OPENAI

Message = dict[str, Any]
ROUTES = {
    "openai": ModelConfig(name="gpt", provider="openai", model="gpt-4.1"),
    "anthropic": ModelConfig(name="claude", provider="anthropic", model="claude-sonnet-4-5"),
}
# The slots' descriptors, read through the counting properties below.
_DIGESTS: Any = MessageFacts.__dict__["prompt_cache"]
_BLOCKS: Any = MessageFacts.__dict__["prompt_blocks"]


class CountingFacts(MessageFacts):
    """Facts that count the reads of their prompt-cache digests and block facts (one read: one message
    looked at)."""

    __slots__ = ()
    reads = 0
    block_reads = 0

    @property  # type: ignore[override]
    def prompt_cache(self) -> tuple[bytes, bytes] | None:
        CountingFacts.reads += 1
        value: tuple[bytes, bytes] | None = _DIGESTS.__get__(self)
        return value

    @prompt_cache.setter
    def prompt_cache(self, value: tuple[bytes, bytes] | None) -> None:
        _DIGESTS.__set__(self, value)

    @property  # type: ignore[override]
    def prompt_blocks(self) -> Any:
        CountingFacts.block_reads += 1
        return _BLOCKS.__get__(self)

    @prompt_blocks.setter
    def prompt_blocks(self, value: Any) -> None:
        _BLOCKS.__set__(self, value)


def history(tag: str, turns: int) -> list[Message]:
    """A system prompt, a task, then agent turns (a command and its output), 2 messages a turn."""
    messages: list[Message] = [
        {"role": "system", "content": f"You are a coding agent. {tag} " + "Follow the rules. " * 200},
        {"role": "user", "content": f"Fix the failing test in module {tag}."},
    ]
    for i in range(turns):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": f'{{"cmd": "ls {i}"}}'}}
        messages += [
            {"role": "assistant", "content": f"Looking at part {i}.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"file-{i}.py " + "output line " * 40},
        ]
    return messages


def to_anthropic(messages: list[Message]) -> dict[str, Any]:
    converted: list[Message] = []
    for m in messages[1:]:
        if m["role"] == "assistant":
            call = m["tool_calls"][0]
            blocks = [
                {"type": "text", "text": m["content"]},
                {"type": "tool_use", "id": call["id"], "name": "bash", "input": {"cmd": call["function"]["name"]}},
            ]
            converted.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            result = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            converted.append({"role": "user", "content": [result]})
        else:
            converted.append({"role": "user", "content": m["content"]})
    return {"system": messages[0]["content"], "messages": converted}


TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]


def raw_body(wire: str, route: str, messages: list[Message]) -> bytes:
    if wire == "openai":
        return orjson.dumps({"model": route, "messages": messages, "tools": TOOLS})
    tools = [{"name": "bash", "input_schema": {"type": "object"}}]
    return orjson.dumps({"model": route, "max_tokens": 100, "tools": tools, **to_anthropic(messages)})


def request(services: Services, stage: PromptCacheStage, wire: str, route: str, session: str, raw: bytes) -> Any:
    """One request through the stage as the pipeline runs it: (body sent, headers, state written)."""
    body = orjson.loads(raw)
    shape = OPENAI if wire == "openai" else ANTHROPIC
    ctx = RequestContext(
        wire=shape,
        body=body,
        headers={},
        services=services,
        tenant=TenantConfig(name="acme"),
        session_id=session,
        route=ROUTES[route],
        policy=PolicyConfig(),
    )
    ctx.raw_history = RawHistory.of(raw, body, shape.history_field)
    ctx.state.expect(stage.reads_ahead(ctx))
    asyncio.run(stage.on_request(ctx))
    asyncio.run(ctx.state.flush())
    stored = asyncio.run(services.store.get(f"prompt_cache:session:acme:{session}:{route}"))
    return ctx.body, ctx.response_headers, stored


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Counts of the messages serialized and masked by the prompt cache, and facts read."""
    counts = {"serialized": 0, "masked": 0, "surveyed": 0}
    serialize, mask = prefix_module.serialize, prefix_module.mask
    add_known_run = Survey.add_known_run

    def counting_add_known_run(survey: Survey, units: list[int], *args: Any) -> None:
        counts["surveyed"] += len(units)
        add_known_run(survey, units, *args)

    def counting_serialize(part: Any) -> bytes:
        counts["serialized"] += 1
        return serialize(part)

    def counting_mask(text: str) -> str:
        counts["masked"] += 1
        return mask(text)

    monkeypatch.setattr(facts_module, "MessageFacts", CountingFacts)  # the memo's new entries count
    monkeypatch.setattr(prefix_module, "serialize", counting_serialize)
    monkeypatch.setattr(prefix_module, "mask", counting_mask)
    monkeypatch.setattr(Survey, "add_known_run", counting_add_known_run)
    yield counts


@pytest.mark.parametrize(("wire", "route"), [("openai", "openai"), ("openai", "anthropic"), ("anthropic", "anthropic")])
def test_a_turn_appending_2_messages_to_100_looks_at_the_2(counted: dict[str, int], wire: str, route: str) -> None:
    services = create_services(Settings.model_validate({}))
    stage = PromptCacheStage(services, Turns())
    tag = uuid.uuid4().hex  # contents no earlier test met: every message's facts are new (and count)
    messages = history(tag, 50)
    before = messages[:100] if wire == "openai" else messages[:101]  # 100 history messages either way
    request(services, stage, wire, route, "s", raw_body(wire, route, before))
    CountingFacts.reads = CountingFacts.block_reads = 0
    counted.update(serialized=0, masked=0, surveyed=0)
    request(services, stage, wire, route, "s", raw_body(wire, route, before + messages[len(before) : len(before) + 2]))
    # Before, each of the 102 messages' digests was read; now the 2 new messages' (both serialized and
    # masked), and an Anthropic body's system prompt's (a body part: its digests are kept in its facts,
    # gateway/history/view.py `part_facts`; in a chat body it is a message, serialized, its mask remembered).
    assert CountingFacts.reads <= (3 if wire == "anthropic" else 2), CountingFacts.reads
    assert counted["serialized"] <= 2 and counted["masked"] <= 2, counted
    # Marks for Anthropic-style providers: the survey of blocks looks at the 2 new messages' only.
    assert CountingFacts.block_reads <= 4 and counted["surveyed"] <= 2, (CountingFacts.block_reads, counted)


def marked(wire: str, raw: bytes) -> bytes:
    """The body with a client's mark on its 6th message (the survey keeps the client's marks)."""
    body = orjson.loads(raw)
    message = body["messages"][5]
    if wire == "openai":
        message["cache_control"] = {"type": "ephemeral"}
    elif isinstance(message["content"], list):
        message["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return orjson.dumps(body)


def replay(stage: PromptCacheStage, services: Services, wire: str, route: str, session: str, tag: str) -> list[Any]:
    """A session with appended turns, an edited message, a truncation, a client's mark and a switch to a
    new system prompt."""
    messages = history(tag, 30)
    edited = [*messages[:20], {**messages[20], "content": "edited"}, *messages[21:40]]
    bodies = [raw_body(wire, route, messages[:k]) for k in range(10, 50, 6)]
    bodies += [raw_body(wire, route, m) for m in (edited, messages[:30], messages[:44])]
    bodies += [marked(wire, raw_body(wire, route, messages[:k])) for k in (46, 48, 50)]
    bodies.append(raw_body(wire, route, [{**messages[0], "content": "another system prompt"}, *messages[1:52]]))
    return [request(services, stage, wire, route, session, raw) for raw in bodies]


@pytest.mark.parametrize(("wire", "route"), [("openai", "openai"), ("openai", "anthropic"), ("anthropic", "anthropic")])
def test_what_the_line_left_changes_no_decision(wire: str, route: str) -> None:
    """Each request as a stage that keeps nothing between requests sends, says and records it."""
    tag = uuid.uuid4().hex
    services = create_services(Settings.model_validate({}))
    kept = replay(PromptCacheStage(services, Turns()), services, wire, route, "kept", tag)

    class Forgetful(Turns):
        def get(self, line: str) -> None:
            return None

    fresh_services = create_services(Settings.model_validate({}))
    fresh = replay(PromptCacheStage(fresh_services, Forgetful()), fresh_services, wire, route, "kept", tag)
    assert kept == fresh


def test_a_state_another_replica_wrote_is_read_from_the_store() -> None:
    """The decoded state is reused only for the very bytes this process wrote."""
    services = create_services(Settings.model_validate({}))
    turns = Turns()
    stage = PromptCacheStage(services, turns)
    messages = history(uuid.uuid4().hex, 10)
    request(services, stage, "anthropic", "anthropic", "r", raw_body("anthropic", "anthropic", messages[:9]))
    kept = turns.get("acme:r:claude")
    assert kept is not None
    other = orjson.loads(kept.raw)
    other["static_changes"] = 7  # another replica's request wrote after ours
    assert kept.state_for(orjson.dumps(other)) is None
    assert kept.state_for(kept.raw) is kept.state


def test_totals_to_json_holds_every_field() -> None:
    totals = CacheTotals(1, 2, 3, 4, 0.5, 0.75, 0.125)
    assert totals.to_json() == asdict(totals)
