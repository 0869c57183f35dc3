"""A gateway whose routes have small context windows, so that compaction must act."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway_harness import RunningGateway, running_gateway

WINDOW = 8000


def route(name: str, provider: str, model: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": provider,
        "model": model,
        "api_base": "embedded-sim",
        "retries": 0,
        "context_window": WINDOW,
        **extra,
    }


MODELS = [
    route("small", "openai", "gpt-4o-mini"),
    route("small-claude", "anthropic", "claude-sonnet-4-5"),
    route("small-gemini", "gemini", "gemini-2.5-flash"),
    route("cheap", "openai", "gpt-4.1-mini"),
    route("unreachable", "openai", "gpt-4o-mini", api_base="http://127.0.0.1:9/v1"),
    route("small-cheap-summary", "openai", "gpt-4o-mini", policy={"compaction": {"summarizer_model": "cheap"}}),
    route("small-broken-summary", "openai", "gpt-4o-mini", policy={"compaction": {"summarizer_model": "unreachable"}}),
    route(
        "small-slow-summary",
        "openai",
        "gpt-4o-mini",
        policy={"compaction": {"summarizer_model": "cheap", "summarizer_timeout_s": 0.3}},
    ),
    route("small-retrieval", "openai", "gpt-4o-mini", policy={"compaction": {"retrieval_tool": True}}),
    route("small-claude-retrieval", "anthropic", "claude-sonnet-4-5", policy={"compaction": {"retrieval_tool": True}}),
]
POLICY = {"response_cache": {"enabled": False}, "prompt_cache": {"enabled": False}}


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(models=MODELS, policy=POLICY, max_body_bytes=4 * 1024 * 1024) as gateway:
        yield gateway


def sent_bodies(gw: RunningGateway, limit: int = 200) -> list[dict[str, Any]]:
    """Request bodies that reached the simulated provider, oldest first."""
    return [r["body"] for r in gw.sim_requests(limit)]
