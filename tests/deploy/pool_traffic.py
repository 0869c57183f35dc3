"""Traffic through a deployment pool, so that every series of the pools dashboard appears: two simulated
deployments (each its own prompt cache and rate limits, whose headers give headroom), a session that reads
its prefix, then a failure on its deployment: an error, a cooldown, an open circuit (`breaker_failures: 1`)
and a move to the other deployment with its lost prefix."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx

from gateway.sim import create_sim_app
from tests.gateway_harness import RunningGateway
from tests.servers import run_app_in_thread
from tests.sim.conftest import SIM_ADMIN, sim_test_settings

POOL = "pooled-mini"
# A model of its own per deployment, so that a fault queued for one model hits one deployment.
MODELS = {"east": "gpt-4o-mini", "west": "gpt-4o"}
POOLS_CONFIG = {"breaker_failures": 1}  # one failure opens a circuit (a pool of one keeps no state)
SYSTEM = " ".join(f"rule{i}" for i in range(1600))  # past the simulator's 1,024-token caching threshold


@contextmanager
def pool_simulators() -> Iterator[dict[str, str]]:
    """The deployments' simulators (name -> URL), with rate limits so that they send rate-limit headers."""
    with ExitStack() as stack:
        settings = sim_test_settings(rate_limits={"rpm": 1000})
        yield {name: stack.enter_context(run_app_in_thread(create_sim_app(settings))) for name in MODELS}


def pool_models(sims: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "name": POOL,
            "provider": "openai",
            "model": MODELS[name],
            "api_base": f"{url}/v1",
            "deployment_id": name,
            "retries": 0,
        }
        for name, url in sims.items()
    ]


def drive_pool_traffic(gw: RunningGateway, sims: dict[str, str]) -> None:
    oai, session = gw.openai(), {"x-session-id": f"pool-{uuid.uuid4().hex[:8]}"}

    def turn(text: str) -> None:
        messages: Any = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"[[sim:text ok]] {text}"}]
        oai.chat.completions.create(model=POOL, extra_headers=session, messages=messages)

    turn("first")
    turn("second")  # reads the first turn's prefix on the same deployment
    home = next(name for name, url in sims.items() if httpx.get(f"{url}/sim/stats", headers=SIM_ADMIN).json()["totals"])
    faults = {"faults": ["500"], "model": MODELS[home]}
    httpx.post(f"{sims[home]}/sim/faults", json=faults, headers=SIM_ADMIN).raise_for_status()
    turn("third")  # fails on its deployment, moves to the other one before the client sees anything
