"""Summary calls made by compaction are charged to the tenant and the session (issue #11, item 9).

The session's own route is priced at zero (its answers cost 0), the summarizer is a priced model that nothing
else calls: every cent the tenant and the session are charged is the summary's, and its price is computed
here from the simulator's own token counts and the pricing module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.usage import Cost, Usage, price_for
from tests.compaction.conftest import MODELS, POLICY, route
from tests.compaction.sessions import TOOLS_OPENAI, openai_history
from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway

SUMMARIZER = "gpt-4.1-mini"  # provider model of the "cheap" route: only summaries reach it
FREE = {"input": 0.0, "output": 0.0}  # a route's own prices: a deployment that costs nothing
UNPRICED = {"prices": FREE, "policy": {"compaction": {"summarizer_model": "cheap"}}}
BUDGET = {"compaction": {"summarizer_model": "cheap"}, "guard": {"limits": {"max_cost_usd": 1e-9}}}
FREE_MODELS = [
    route("free-summarized", "openai", "gpt-4o-mini", **UNPRICED),
    route("free-budget", "openai", "gpt-4o-mini", prices=FREE, policy=BUDGET),
]


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(models=[*MODELS, *FREE_MODELS], policy=POLICY, max_body_bytes=4 * 1024 * 1024) as gateway:
        yield gateway


def _step(gw: RunningGateway, model: str, session: str, step: int, words: int) -> Any:
    raw = gw.openai().chat.completions.with_raw_response.create(
        model=model,
        messages=openai_history(step, words=words),
        tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        extra_headers={"x-session-id": session},
    )
    assert raw.http_response.status_code == 200
    return raw


def _summary_price(gw: RunningGateway) -> float:
    counts = gw.sim_stats()["models"].get(SUMMARIZER, {})
    usage = Usage(
        uncached_input=counts.get("input_tokens", 0),
        cache_read=counts.get("cache_read_tokens", 0),
        output=counts.get("output_tokens", 0),
    )
    return Cost.of(usage, price_for(f"openai/{SUMMARIZER}")).usd


def _tenant_cost(gw: RunningGateway, tenant: str) -> float:
    lines = [line for line in gw.metrics().splitlines() if line.startswith("cachegate_cost_usd_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if f'tenant="{tenant}"' in line)


def _session_cost(gw: RunningGateway, session: str) -> float:
    view = httpx.get(
        f"{gw.url}/admin/guard/session",
        params={"tenant": "acme", "session": session},
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
    )
    assert view.status_code == 200
    return float(view.json()["counters"]["cost_usd"])


def test_summary_cost_reaches_tenant_metrics_session_and_header(gw: RunningGateway) -> None:
    gw.reset_sim()
    before = _tenant_cost(gw, "acme")
    summarized = None
    for step in range(1, 17):
        raw = _step(gw, "free-summarized", "charged-summary", step, words=13)
        if raw.headers.get("x-cachegate-compaction-summary") == "written":
            summarized = raw
            break
    assert summarized is not None, "no summary was written"
    price = _summary_price(gw)
    assert price > 0
    assert _tenant_cost(gw, "acme") - before == pytest.approx(price, rel=1e-6)
    assert _session_cost(gw, "charged-summary") == pytest.approx(price, rel=1e-6)
    # The request that paid for the summary says so: its cost is the summary's (its own answer is free).
    assert float(summarized.headers["x-cachegate-cost-usd"]) == pytest.approx(price, rel=1e-6)
    assert float(summarized.headers["x-cachegate-compaction-summary-cost-usd"]) == pytest.approx(price, rel=1e-6)
    assert 'cachegate_summary_cost_usd_total{model="cheap",tenant="acme"}' in gw.metrics()


def test_a_budget_exceeded_only_by_summaries_stops_the_session(gw: RunningGateway) -> None:
    gw.reset_sim()
    decisions = []
    for step in range(1, 20):
        raw = _step(gw, "free-budget", "budget-summary", step, words=14)
        decisions.append(raw.headers.get("x-cachegate-guard", "-"))
        if raw.headers.get("x-cachegate-compaction-summary") == "written":
            break
    assert all(d == "-" for d in decisions), decisions  # free answers never touch the budget
    stopped = _step(gw, "free-budget", "budget-summary", len(decisions) + 1, words=14)
    assert stopped.headers.get("x-cachegate-guard") == "stop; reason=BUDGET; detector=max_cost_usd"
