"""A system prompt is scanned for volatile content, and hashed, once per content (issue 28): an agent CLI
sends kilobytes of it, unchanged, on every request. One that is a body field (Anthropic's `system`) keeps
its kinds in its facts; one held by messages (Chat's system message) is remembered by their facts
(gateway/prompt_cache/system_part.py). A session's later requests report the kinds without a scan, and
record the same hash; a changed prompt is scanned again."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest

from gateway.config import Settings
from gateway.prompt_cache import system_part as system_part_module
from gateway.prompt_cache.prefix import PartHash, PrefixRecord
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.turns import Turns
from gateway.services import create_services
from gateway.stages.prompt_cache import PromptCacheStage
from tests.prompt_cache.test_turn_prefix import ROUTES, history, raw_body, request


def with_system(wire: str, raw: bytes, system: str) -> bytes:
    body = orjson.loads(raw)
    if wire == "anthropic":
        body["system"] = system
    else:
        body["messages"][0] = {"role": "system", "content": system}
    return orjson.dumps(body)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_system_prompt_is_scanned_and_hashed_once_a_content(monkeypatch: pytest.MonkeyPatch, wire: str) -> None:
    scanned: list[str] = []
    spans_steps = system_part_module.spans_steps

    def counting_spans_steps(text: str) -> Any:
        scanned.append(text)
        return (yield from spans_steps(text))

    monkeypatch.setattr(system_part_module, "spans_steps", counting_spans_steps)
    services = create_services(Settings())
    stage = PromptCacheStage(services, Turns())
    tag = uuid.uuid4().hex  # prompts no earlier request met
    prompts = [f"You are a coding agent {tag}. Today is 2026-11-{day}." for day in (28, 29)]
    seen = []
    for turns, prompt in ((2, prompts[0]), (3, prompts[0]), (4, prompts[0]), (5, prompts[1]), (6, prompts[1])):
        raw = with_system(wire, raw_body(wire, wire, history("sys", turns)), prompt)
        _, headers, _ = request(services, stage, wire, wire, f"s-system-{tag}", raw)
        stored = asyncio.run(services.store.get(f"prompt_cache:session:acme:s-system-{tag}:{ROUTES[wire].name}"))
        assert stored is not None
        record = SessionState.from_bytes(stored).record
        assert isinstance(record, PrefixRecord)
        seen.append((len(scanned), headers.get("x-cachegate-volatile"), record.system))
    # Scanned on the first request of each content only; the kinds reported on every request.
    assert [count for count, _, _ in seen] == [1, 1, 1, 2, 2]
    assert scanned == prompts
    assert {header for _, header, _ in seen} == {"date"}
    # The hash recorded is the prompt's, as it was when every request hashed it (records of other
    # replicas and versions compare with it): a Chat prompt is the list of its messages' contents.
    for prompt, (_, _, system_hash) in zip([prompts[0]] * 3 + [prompts[1]] * 2, seen, strict=True):
        assert system_hash == PartHash.of(prompt if wire == "anthropic" else [prompt])
