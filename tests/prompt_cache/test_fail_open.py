"""A failing optimizer never changes the request: it goes upstream as the client sent it, counted."""

from __future__ import annotations

import re
from typing import Any

import orjson

from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import anthropic_client, last_sim_body, long_text, new_session


def failures(gw: RunningGateway) -> float:
    found = re.search(r'cachegate_prompt_cache_failures_total\{phase="request"\} (\S+)', gw.metrics())
    return float(found.group(1)) if found else 0.0


async def test_a_failure_mid_rewrite_sends_the_request_unmodified(gw: RunningGateway) -> None:
    session = new_session()
    # Corrupt session state (as a bad deploy or a foreign writer could leave it): the optimizer fails
    # only after it has already canonicalised the tools of its working copy.
    corrupt = {"last_seen": 1.0, "gaps": [], "record": None, "marks": ["x"], "static_changes": 0}
    await gw.services.store.set(f"prompt_cache:session:acme:{session}:claude-sonnet-4-5", orjson.dumps(corrupt), 60)
    tools: list[Any] = [
        {"name": "zeta", "input_schema": {"type": "object"}, "description": "z"},
        {"name": "alpha", "input_schema": {"type": "object"}, "description": "a"},
    ]
    before = failures(gw)
    message = anthropic_client(gw).messages.create(
        model="claude-sonnet-4-5",
        max_tokens=50,
        system=long_text("fail", 1500),
        tools=tools,
        messages=[{"role": "user", "content": "[[sim:text still fine]]"}],
        extra_headers={"x-session-id": session},
    )
    assert message.content[0].type == "text" and message.content[0].text == "still fine"
    body = last_sim_body(gw)
    assert body["tools"] == tools and isinstance(body["system"], str)  # no sorting, no marks leaked
    assert failures(gw) == before + 1
    assert 'cachegate_stage_failures_total{stage="prompt_cache"}' in gw.metrics()
