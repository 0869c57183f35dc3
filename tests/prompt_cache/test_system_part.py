"""A system prompt that is one body field (Anthropic's `system`) is scanned for volatile content once per
content (issue 28): an agent CLI sends kilobytes of it, unchanged, on every request. The kinds found are
kept in its facts, so a session's later requests report them without a scan; a changed prompt is
scanned again."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import Settings
from gateway.prompt_cache import optimizer as optimizer_module
from gateway.prompt_cache.turns import Turns
from gateway.services import create_services
from gateway.stages.prompt_cache import PromptCacheStage
from tests.prompt_cache.test_turn_prefix import history, raw_body, request


def with_system(raw: bytes, system: str) -> bytes:
    return orjson.dumps({**orjson.loads(raw), "system": system})


def test_the_system_prompt_is_scanned_once_a_content(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[str] = []
    spans_steps = optimizer_module.spans_steps

    def counting_spans_steps(text: str) -> Any:
        scanned.append(text)
        return (yield from spans_steps(text))

    monkeypatch.setattr(optimizer_module, "spans_steps", counting_spans_steps)
    services = create_services(Settings())
    stage = PromptCacheStage(services, Turns())
    prompts = ["You are a coding agent. Today is 2026-11-28.", "You are a coding agent. Today is 2026-11-29."]
    seen = []
    for turns, prompt in ((2, prompts[0]), (3, prompts[0]), (4, prompts[0]), (5, prompts[1]), (6, prompts[1])):
        raw = with_system(raw_body("anthropic", "anthropic", history("sys", turns)), prompt)
        _, headers, _ = request(services, stage, "anthropic", "anthropic", "s-system", raw)
        seen.append((len(scanned), headers.get("x-cachegate-volatile")))
    # Scanned on the first request of each content only; the kinds reported on every request.
    assert [count for count, _ in seen] == [1, 1, 1, 2, 2]
    assert scanned == prompts
    assert {header for _, header in seen} == {"date"}
