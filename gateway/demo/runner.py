"""Drive the demo traffic through a gateway (the embedded default when no URL is given)."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import as_file

import httpx
from tqdm import tqdm

from gateway.demo.scenarios import DemoRequest, agent_sessions, looping_sessions, questions
from gateway.metrics_summary import difference, render, summarize
from gateway.serving import free_socket, serve_in_thread
from gateway.traces import demo_traces

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
EMBEDDER_WAIT_S = 300.0  # the first load of the embedding model (a download on a fresh machine)
LOADING = 'cachegate_response_cache_skips_total{reason="embedder_loading",tier="semantic"}'


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


def plan(sessions: int, turns: int, run: str | None = None) -> list[DemoRequest]:
    """The run's requests; `run` (default: a new id) goes into its session ids."""
    run = run or uuid.uuid4().hex[:8]
    streams = [agent_sessions(sessions, turns, run), looping_sessions(3, run), questions()]
    return list(itertools.chain(*streams))


class Gateway:
    """The gateway the demo drives: its URL, the tenant key's headers and its /metrics."""

    def __init__(self, url: str, key: str, metrics_key: str | None) -> None:
        self.url = url
        self.headers = {"authorization": f"Bearer {key}", "x-api-key": key}
        self.metrics_headers = {"authorization": f"Bearer {metrics_key}"} if metrics_key else {}

    def metrics(self) -> str:
        response = httpx.get(f"{self.url}/metrics", headers=self.metrics_headers)
        if response.status_code != 200:
            raise SystemExit(f"{self.url}/metrics answered {response.status_code}: pass --metrics-key")
        return response.text

    def loading_skips(self) -> float:
        """Requests whose semantic lookup was skipped because the embedder was still loading."""
        return sum(float(line.rsplit(" ", 1)[1]) for line in self.metrics().splitlines() if line.startswith(LOADING))

    def wait_for_embedder(self, timeout_s: float = EMBEDDER_WAIT_S) -> None:
        """Ask new questions until one is no longer skipped as `embedder_loading` (the model loads on first
        use, in the background), so the run's paraphrases are compared by meaning. A gateway without the
        semantic tier never counts that skip: no wait."""
        deadline = time.monotonic() + timeout_s
        for attempt in itertools.count():
            before = self.loading_skips()
            question = [{"role": "user", "content": f"warm-up {uuid.uuid4()}"}]
            body = {"model": "gpt-4o-mini", "temperature": 0, "messages": question}  # semantic: temperature 0
            httpx.post(f"{self.url}{PATHS['openai']}", json=body, headers=self.headers, timeout=60)
            if self.loading_skips() == before or time.monotonic() > deadline:
                return
            if attempt == 0:
                print("cachegate demo: waiting for the embedding model to load ...", file=sys.stderr)
            time.sleep(1)


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
    """The report of one run: what the gateway's counters gained during it. `metrics_key`: a metrics token
    or admin key, for a gateway whose /metrics is not open (any but a loopback one without metrics_tokens)."""
    requests = plan(sessions, turns)

    def go(target: str) -> str:
        gateway = Gateway(target, key, metrics_key)
        gateway.wait_for_embedder()
        before = summarize(gateway.metrics())
        outcomes = asyncio.run(drive(target, key, requests, concurrency))
        run = difference(summarize(gateway.metrics()), before)
        lines = [f"{name:<40} {count}" for name, count in sorted(outcomes.items())]
        return "\n".join(["", "outcomes by scenario:", *lines, "", render(run)])

    if url:
        return go(url.rstrip("/"))
    with embedded_gateway() as embedded:
        return go(embedded)
