"""Per-deployment prompt-cache tokens on /metrics: each deployment keeps its own cache, so its own
cache-hit ratio (cache_read over cache_read + uncached) is what shows a deployment losing prefixes."""

from __future__ import annotations

import uuid

from prometheus_client.parser import text_string_to_metric_families

from tests.gateway_harness import running_gateway
from tests.routing.test_pools import POOL, chat, deployment_of, settings


def input_tokens(text: str) -> dict[tuple[str, str], float]:
    """(deployment, kind) -> tokens, for the test's pool."""
    return {
        (sample.labels["deployment"], sample.labels["kind"]): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "cachegate_deployment_input_tokens"
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels["model"] == POOL
    }


def test_each_deployment_counts_its_cached_and_uncached_input_tokens() -> None:
    with running_gateway(**settings("embedded-sim")) as gw:
        session = f"metrics-{uuid.uuid4().hex[:8]}"
        first, request_id = chat(gw, session, ["[[sim:text one]]"])
        home = deployment_of(gw, request_id)["id"]
        second, _ = chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]"])
        tokens = input_tokens(gw.metrics())
    prompts = first["usage"]["prompt_tokens"] + second["usage"]["prompt_tokens"]
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0  # the second turn read the first one's prefix, on the same deployment
    assert tokens == {(home, "cache_read"): cached, (home, "uncached"): prompts - cached}
