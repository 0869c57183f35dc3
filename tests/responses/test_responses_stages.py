"""Stages on the Responses wire through the gateway: the exact response cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway

CACHE_ON = {**CORE_POLICY, "response_cache": {"enabled": True}}


@pytest.fixture(scope="module")
def cached_gw() -> Iterator[RunningGateway]:
    with running_gateway(**gateway_settings(policy=CACHE_ON)) as gw:
        yield gw


@pytest.mark.parametrize("stream", [False, True])
def test_exact_cache_hit_across_turn_metadata(cached_gw: RunningGateway, stream: bool) -> None:
    client = cached_gw.openai()
    text = f"[[sim:text cached answer {stream}]]"

    def ask(turn: str) -> tuple[str, str]:
        metadata = {"client_metadata": {"session_id": "s", "turn_id": turn}}
        if stream:
            with client.responses.with_streaming_response.create(
                model="gpt-4o-mini", input=text, stream=True, extra_body=metadata
            ) as raw:
                header = raw.headers["x-cachegate-cache"]
                events = list(raw.parse())
            return header, events[-1].response.output_text  # type: ignore[union-attr]
        raw = client.responses.with_raw_response.create(model="gpt-4o-mini", input=text, extra_body=metadata)
        return raw.headers["x-cachegate-cache"], raw.parse().output_text

    before = cached_gw.sim_stats()["totals"].get("requests", 0)
    assert ask("t1") == ("miss", f"cached answer {stream}")
    assert ask("t2") == ("exact", f"cached answer {stream}")  # Codex's per-turn ids do not break the key
    assert cached_gw.sim_stats()["totals"].get("requests", 0) == before + 1
