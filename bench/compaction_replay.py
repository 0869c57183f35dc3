"""Compaction replay: recorded agent sessions through the gateway with a small context window.

Request k of a session carries messages[:k] (OpenAI shape); the simulator (replay mode) answers with the
recorded next assistant message and bills prompt-cache reads by OpenAI's rules. The route's context
window is set to --window tokens (default 16K: the sessions reach ~18K tokens at the median and up to
~100K, so a 32K window would leave most of them alone). Two tenants replay the same sessions: one with
the compaction stage off, one with it on (default policy). Reported: requests over the window, input
cost (summaries included), prompt-cache hit ratio, summaries per session, tokens sent per turn (PNG).

    python -m bench.compaction_replay [--traces FILE] [--out DIR] [--sessions N (default 50)]
        [--window TOKENS (default 16000)]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

import gateway  # noqa: F401  (offline defaults before litellm/tiktoken)
from bench.prompt_cache_replay import MODELS, RESULTS, TRACES, load_sessions, session_requests
from gateway.app import create_app
from gateway.config import Settings, hash_key
from gateway.sim.app import create_sim_app
from gateway.sim.settings import SimSettings
from gateway.usage import price_for
from tests.servers import free_socket, serve_on_socket

MODEL = MODELS["openai"]
TENANTS = {"off": {"enabled": False}, "on": {}}


@dataclass
class Turn:
    prompt: int  # tokens the provider counted
    cached: int
    summary: str | None
    summary_cost: float


@dataclass
class Totals:
    requests: int = 0
    over_window: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    input_cost_usd: float = 0.0
    summary_cost_usd: float = 0.0
    summaries: list[int] = field(default_factory=list)  # per session
    summary_failures: int = 0
    seconds: float = 0.0

    @property
    def hit_ratio(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def report(self) -> dict[str, Any]:
        per_session = self.summaries or [0]
        return {
            **asdict(self),
            "summaries": None,
            "hit_ratio": round(self.hit_ratio, 4),
            "total_cost_usd": self.input_cost_usd + self.summary_cost_usd,
            "summaries_per_session": {
                "mean": sum(per_session) / len(per_session),
                "max": max(per_session),
                "sessions_with_summary": sum(1 for s in per_session if s),
            },
        }


@contextmanager
def replay_gateway(window: int, traces: Path = TRACES) -> Iterator[tuple[str, str]]:
    """The simulator replaying the traces, and a gateway routed to it with a `window`-token model."""
    with serve_on_socket(create_sim_app(SimSettings(replay_file=traces)), free_socket()) as sim_url:
        sock = free_socket()
        settings = Settings.model_validate(
            {
                "port": sock.getsockname()[1],
                "embedded_simulator": False,
                "models": [
                    {
                        "name": MODEL,
                        "provider": "openai",
                        "model": MODEL,
                        "api_base": f"{sim_url}/v1",
                        "context_window": window,
                    }
                ],
                # The loop guard is another stage's concern (and may stop a replayed trace): off here.
                "tenants": [
                    {
                        "name": name,
                        "keys": [hash_key(f"sk-{name}")],
                        "policy": {"compaction": policy, "guard": {"enabled": False}},
                    }
                    for name, policy in TENANTS.items()
                ],
                "policy": {"response_cache": {"enabled": False}},  # every request must reach the provider
                "max_body_bytes": 16 * 1024 * 1024,
                "log_level": "warning",
            }
        )
        with serve_on_socket(create_app(settings), sock) as url:
            yield url, sim_url


def replay_session(client: httpx.Client, url: str, tenant: str, session: dict[str, Any]) -> list[Turn]:
    headers = {"authorization": f"Bearer sk-{tenant}", "x-session-id": f"{tenant}-{session['id']}"}
    turns = []
    for body in session_requests(session, "openai"):
        response = client.post(f"{url}/v1/chat/completions", json=body, headers=headers)
        response.raise_for_status()
        usage = response.json()["usage"]
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        turns.append(
            Turn(
                usage["prompt_tokens"],
                cached,
                response.headers.get("x-cachegate-compaction-summary"),
                float(response.headers.get("x-cachegate-compaction-summary-cost-usd") or 0),
            )
        )
    return turns


def measure(turns_by_session: list[list[Turn]], window: int, seconds: float) -> Totals:
    price = price_for(f"openai/{MODEL}")
    totals = Totals(seconds=round(seconds, 1))
    for turns in turns_by_session:
        totals.summaries.append(sum(1 for t in turns if t.summary in ("written", "memo")))
        for turn in turns:
            totals.requests += 1
            totals.over_window += turn.prompt > window
            totals.prompt_tokens += turn.prompt
            totals.cached_tokens += turn.cached
            totals.input_cost_usd += (turn.prompt - turn.cached) * price.input + turn.cached * price.cache_read
            totals.summary_cost_usd += turn.summary_cost
            totals.summary_failures += turn.summary not in (None, "written", "memo")
    return totals


def plot(runs: dict[str, list[list[Turn]]], sessions: list[dict[str, Any]], window: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    longest = sorted(range(len(sessions)), key=lambda i: -len(runs["off"][i]))[:4]
    fig, axes = plt.subplots(1, len(longest), figsize=(4 * len(longest), 3.8), sharey=True)
    for axis, index in zip(axes, longest, strict=True):
        for name, style in (("off", "tab:grey"), ("on", "tab:blue")):
            axis.plot([t.prompt for t in runs[name][index]], color=style, label=f"compaction {name}")
        axis.plot([t.cached for t in runs["on"][index]], color="tab:green", linestyle=":", label="cached (on)")
        axis.axhline(window, color="tab:red", linewidth=0.8, label="context window")
        axis.set_title(sessions[index]["id"][:32], fontsize=8)
        axis.set_xlabel("turn")
    axes[0].set_ylabel("input tokens sent")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sessions", type=int, default=50, help="sessions replayed, spread evenly over the file (all 107: ~12 min)"
    )
    parser.add_argument("--window", type=int, default=16_000, help="context window of the route, tokens")
    parser.add_argument("--traces", type=Path, default=TRACES, help="session traces (JSONL)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON report and the plot")
    args = parser.parse_args()
    sessions = load_sessions(args.traces, count=args.sessions)
    print(f"replaying {len(sessions)} sessions with a {args.window}-token window, compaction off then on")
    runs: dict[str, list[list[Turn]]] = {}
    totals: dict[str, Totals] = {}
    with replay_gateway(args.window, args.traces) as (url, _), httpx.Client(timeout=120) as client:
        for tenant in TENANTS:
            started = time.perf_counter()
            runs[tenant] = []
            for number, session in enumerate(sessions, 1):
                runs[tenant].append(replay_session(client, url, tenant, session))
                if number % 10 == 0 or number == len(sessions):
                    print(
                        f"  compaction {tenant:3s}: {number}/{len(sessions)} sessions "
                        f"{time.perf_counter() - started:6.1f} s",
                        flush=True,
                    )
            totals[tenant] = measure(runs[tenant], args.window, time.perf_counter() - started)
    off, on = totals["off"], totals["on"]
    payload = {
        "window": args.window,
        "model": MODEL,
        "sessions": len(sessions),
        "off": off.report(),
        "on": on.report(),
        "cost_on_vs_off": on.report()["total_cost_usd"] / off.report()["total_cost_usd"],
        "hit_ratio_points_lost": round(100 * (off.hit_ratio - on.hit_ratio), 2),
        "tokens_sent_on_vs_off": on.prompt_tokens / off.prompt_tokens,
    }
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "compaction_replay.json").write_text(json.dumps(payload, indent=2))
    plot(runs, sessions, args.window, out / "compaction_replay.png")
    for name, t in totals.items():
        print(
            f"compaction {name:3s}: {t.requests} requests, {t.over_window} over the window, hit ratio "
            f"{t.hit_ratio:.3f}, input cost ${t.input_cost_usd:.4f} + summaries ${t.summary_cost_usd:.4f}, "
            f"summaries/session {sum(t.summaries) / max(len(t.summaries), 1):.2f}"
        )
    print(f"cost on/off {payload['cost_on_vs_off']:.3f}, hit-ratio points lost {payload['hit_ratio_points_lost']}")


if __name__ == "__main__":
    main()
