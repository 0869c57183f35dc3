"""Drive the demo traffic through a gateway (the embedded default when no URL is given)."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import as_file

import httpx
from tqdm import tqdm

from gateway.demo.scenarios import DemoRequest, agent_sessions, looping_sessions, questions
from gateway.metrics_summary import render, summarize
from gateway.serving import free_socket, serve_in_thread
from gateway.traces import demo_traces

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@contextmanager
def embedded_gateway() -> Iterator[str]:
    """The embedded default in a background thread, its simulator replaying the demo's own sessions."""
    from gateway.app import create_app
    from gateway.config import load_settings

    sock = free_socket()
    with as_file(demo_traces()) as replay:  # a real file even when the package is zipped
        settings = load_settings(port=sock.getsockname()[1], simulator_replay_file=replay)
        with serve_in_thread(create_app(settings), sock) as url:
            yield url


def plan(sessions: int, turns: int) -> list[DemoRequest]:
    streams = [agent_sessions(sessions, turns), looping_sessions(3), questions()]
    return list(itertools.chain(*streams))


async def drive(url: str, key: str, requests: list[DemoRequest], concurrency: int) -> Counter[str]:
    """Sessions run in order (an agent waits for each answer); different sessions run concurrently."""
    outcomes: Counter[str] = Counter()
    by_session: dict[str, list[DemoRequest]] = {}
    for number, request in enumerate(requests):
        by_session.setdefault(request.session or f"single-{number}", []).append(request)
    progress = tqdm(total=len(requests), desc="demo traffic", unit="req")
    limit = asyncio.Semaphore(concurrency)
    headers = {"authorization": f"Bearer {key}", "x-api-key": key}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:

        async def run_session(items: list[DemoRequest]) -> None:
            async with limit:
                for item in items:
                    extra = {"x-session-id": item.session} if item.session else {}
                    response = await client.post(PATHS[item.api], json=item.body, headers={**headers, **extra})
                    outcome = response.headers.get("x-cachegate-guard", "").split(";")[0] or str(response.status_code)
                    outcomes[f"{item.scenario}: {outcome}"] += 1
                    progress.update()
                    if outcome == "block":  # the guard blocked this session: the agent is done
                        progress.update(len(items) - items.index(item) - 1)
                        return

        await asyncio.gather(*(run_session(items) for items in by_session.values()))
    progress.close()
    return outcomes


def run_demo(
    url: str | None,
    key: str,
    sessions: int = 6,
    turns: int = 20,
    concurrency: int = 8,
    metrics_key: str | None = None,
) -> str:
    """`metrics_key`: a metrics token or admin key, for a gateway whose /metrics is not open (any but a
    loopback one without metrics_tokens)."""
    requests = plan(sessions, turns)
    metrics_headers = {"authorization": f"Bearer {metrics_key}"} if metrics_key else {}

    def go(target: str) -> str:
        outcomes = asyncio.run(drive(target, key, requests, concurrency))
        response = httpx.get(f"{target}/metrics", headers=metrics_headers)
        if response.status_code != 200:
            raise SystemExit(f"{target}/metrics answered {response.status_code}: pass --metrics-key")
        metrics = response.text
        lines = [f"{name:<40} {count}" for name, count in sorted(outcomes.items())]
        return "\n".join(["", "outcomes by scenario:", *lines, "", render(summarize(metrics))])

    if url:
        return go(url.rstrip("/"))
    with embedded_gateway() as embedded:
        return go(embedded)
