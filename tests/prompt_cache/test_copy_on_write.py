"""The optimizer's working copy is copied on write (issue 28): the caller's body never changes, the
messages it changes (system text, the last turn, marked blocks) are copies, the others are the caller's
own objects (a long history is not deep-copied on every request)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.prompt_cache_replay import anthropic_tools, to_anthropic
from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.prompt_cache import survey
from gateway.prompt_cache.optimizer import optimize
from gateway.prompt_cache.session import SessionState
from gateway.traces import assistant_turns, read_sessions

TIMESTAMP = "Current time: 2026-11-27T07:10:00Z"


def request(wire: str, turns: int) -> dict[str, Any]:
    session = next(iter(read_sessions()))
    messages = session["messages"][: assistant_turns(session["messages"])[turns]]
    if wire == "openai":
        system = {"role": "system", "content": f"{messages[0]['content']}\n{TIMESTAMP}"}
        return {"model": "m", "messages": [system, *messages[1:]], "tools": session["tools"]}
    prompt, converted = to_anthropic(messages)
    return {
        "model": "m",
        "system": f"{prompt}\n{TIMESTAMP}",
        "messages": converted,
        "tools": anthropic_tools(session["tools"]),
    }


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_changes_land_on_copies_of_the_messages_they_touch(wire: str) -> None:
    route = ModelConfig(name="m", provider="anthropic", model="claude-sonnet-4-5", api_base="http://127.0.0.1:9")
    body = request(wire, 8)
    sent = orjson.dumps(body)
    outcome = optimize(body, wire, route, PromptCacheConfig(relocate_volatile=True), SessionState(), "s", 1.0)
    assert orjson.dumps(body) == sent  # the caller's body as it came
    assert outcome.relocated and outcome.placements  # the timestamp moved, marks were placed
    out = outcome.body["messages"]
    assert len(out) == len(body["messages"]) + (1 if wire == "openai" else 0)  # OpenAI: the note is a message
    marked = {i for i, m in enumerate(out) if b'"cache_control"' in orjson.dumps(m)}
    changed = {i for i, m in enumerate(body["messages"]) if orjson.dumps(m) != orjson.dumps(out[i])}
    assert marked and changed >= marked
    for index, message in enumerate(body["messages"]):
        assert (out[index] is message) == (index not in changed)
    assert sum(out[i] is m for i, m in enumerate(body["messages"])) >= len(out) - 5


def blocks_system(client_mark: bool) -> dict[str, Any]:
    """An Anthropic request whose system prompt is a list of text blocks (as agent CLIs send it), past the
    cache minimum (so that the static prefix gets a mark of its own)."""
    body = request("anthropic", 8)
    rules = " ".join(f"Rule {n}: keep the change small and test it." for n in range(400))
    body["system"] = [{"type": "text", "text": rules}, {"type": "text", "text": body["system"]}]
    if client_mark:
        body["system"][-1]["cache_control"] = {"type": "ephemeral"}
    return body


@pytest.mark.parametrize("relocate", [False, True])
def test_the_system_prompt_is_copied_only_when_a_change_lands_on_it(relocate: bool) -> None:
    """The body's fields other than the history stay the caller's objects unless changed: a mark placed on
    the system prompt's last block, or its volatile text moved, lands on a copy."""
    route = ModelConfig(name="m", provider="anthropic", model="claude-sonnet-4-5", api_base="http://127.0.0.1:9")
    config = PromptCacheConfig(relocate_volatile=relocate)
    ours = []
    for client_mark in (False, True):
        body = blocks_system(client_mark)
        sent = orjson.dumps(body)
        outcome = optimize(body, "anthropic", route, config, SessionState(), "s", 1.0)
        assert orjson.dumps(body) == sent  # the caller's body as it came
        system = outcome.body["system"]
        marked_by_us = not client_mark and b'"cache_control"' in orjson.dumps(system)
        changed = relocate or marked_by_us
        assert (system is body["system"]) == (not changed)
        ours.append(marked_by_us)
    assert ours == [True, False]  # the unmarked system got the static prefix's mark: a change


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_what_is_kept_of_the_tools_and_system_follows_their_content(wire: str) -> None:
    """The survey's units before the history are kept by their content (survey.py `StaticHead`): requests
    whose tools or system prompt differ (a client's mark, a word) each get their own, as if none was kept."""
    route = ModelConfig(name="m", provider="anthropic", model="claude-sonnet-4-5", api_base="http://127.0.0.1:9")
    bodies = [blocks_system(False), blocks_system(True)] if wire == "anthropic" else [request(wire, 8)]
    edited = orjson.loads(orjson.dumps(bodies[-1]))
    edited["tools"][0]["cache_control"] = {"type": "ephemeral"}
    bodies.append(edited)
    if wire == "anthropic":
        reworded = orjson.loads(orjson.dumps(bodies[0]))
        reworded["system"][0]["text"] = reworded["system"][0]["text"][:200]
        bodies.append(reworded)

    def outcomes() -> list[tuple[Any, ...]]:
        found = []
        for body in bodies:
            done = optimize(body, wire, route, PromptCacheConfig(min_tokens=1024), SessionState(), "s", 1.0)
            found.append((done.placements, done.client_marks, orjson.dumps(done.body)))
        return found

    kept = outcomes()  # each after the others' were kept
    for body in bodies:
        for key in [key for key, _ in survey._static.oldest()]:
            survey._static.pop(key)
        assert outcomes()[bodies.index(body)] == kept[bodies.index(body)]  # each built from its blocks
    assert len({repr((placements, marks)) for placements, marks, _ in kept}) == len(bodies)  # they do differ
