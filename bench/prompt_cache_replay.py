"""Prompt-cache replay: recorded agent sessions through the gateway, turn by turn, against the simulator.

Request k of a session carries messages[:k] (converted to Anthropic's shape in Anthropic mode); the
simulator answers with the recorded next assistant message and bills cache reads/writes by the
provider's rules. Per mode we compare (a) no optimizer, (b) LiteLLM-style fixed injection points
(system + last message), (c) the optimizer, and the physical limit: every token an earlier request of the
same session already sent is cacheable. Then the same with a timestamp injected into the system prompt,
(b) and (c) without and with the volatile-content policy.

    python -m bench.prompt_cache_replay [--traces FILE] [--out DIR] [--sessions N]

A session the loop guard stops or blocks ends there and is counted (`guard_stopped_sessions`): the bench
runs to the end whatever the guard decides.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

import gateway  # noqa: F401  (offline defaults before litellm/tiktoken)
from bench.shared_data import require
from gateway.app import create_app
from gateway.config import Settings, hash_key
from gateway.sim.app import create_sim_app
from gateway.sim.settings import SimSettings
from gateway.traces import default_traces, read_sessions
from gateway.usage import Price, price_for
from tests.servers import free_socket, serve_on_socket

REPO = Path(__file__).resolve().parents[1]
TRACES = default_traces()
RESULTS = REPO / "bench" / "results"
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}
TENANTS = {"plain": {"enabled": False}, "ours": {}, "relocate": {"relocate_volatile": True}}
SIM_ADMIN_KEY = "sk-bench-sim-admin"  # the simulator's /sim/* controls need it
T0 = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC)


# --- sessions as requests -------------------------------------------------------------------------


def load_sessions(path: Path = TRACES, count: int | None = None) -> list[dict[str, Any]]:
    """Every session, or `count` of them spread evenly over the file (deterministic)."""
    sessions = list(read_sessions(path))
    if count is None or count >= len(sessions):
        return sessions
    step = len(sessions) / count
    return [sessions[int(i * step)] for i in range(count)]


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return {"raw": arguments}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def to_anthropic(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI chat messages -> (system, Anthropic messages); consecutive tool results share a message."""
    system = "\n".join(str(m["content"]) for m in messages if m["role"] == "system")
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "assistant":
            text = message.get("content")
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "input": _tool_input(c["function"].get("arguments", "")),
                }
                for c in message.get("tool_calls") or []
            ]
            converted.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "..."}]})
        elif role == "tool":
            result = {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}
            if converted and converted[-1]["role"] == "user" and isinstance(converted[-1]["content"], list):
                converted[-1]["content"].append(result)
            else:
                converted.append({"role": "user", "content": [result]})
        elif role == "user":
            converted.append({"role": "user", "content": message["content"]})
    return system, converted


def anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "input_schema": t["function"].get("parameters", {"type": "object"}),
        }
        for t in tools
    ]


def with_timestamp(system: str, number: int) -> str:
    """The system prompt as an agent that stamps the current time on every request would send it."""
    return f"{system}\n\nCurrent time: {(T0 + timedelta(seconds=7 * number)).isoformat()}"


def fixed_injection(body: dict[str, Any]) -> dict[str, Any]:
    """LiteLLM's cache_control_injection_points [{role: system}, {index: -1}], applied by the client.
    Anthropic shape only: OpenAI's caching is automatic, marks change nothing there."""
    mark = {"type": "ephemeral"}
    body["system"] = [{"type": "text", "text": body["system"], "cache_control": mark}]
    last = body["messages"][-1]
    content = last["content"]
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
    )
    blocks[-1]["cache_control"] = mark
    body["messages"][-1] = {**last, "content": blocks}
    return body


def session_requests(
    session: dict[str, Any], mode: str, *, timestamp: bool = False, fixed: bool = False
) -> Iterator[dict[str, Any]]:
    """Request k carries messages[:k], for each k where the trace's next message is the assistant's."""
    messages = session["messages"]
    for number, k in enumerate(i for i in range(1, len(messages)) if messages[i]["role"] == "assistant"):
        history = json.loads(json.dumps(messages[:k]))
        if timestamp:
            history[0] = {**history[0], "content": with_timestamp(history[0]["content"], number)}
        if mode == "anthropic":
            system, converted = to_anthropic(history)
            body: dict[str, Any] = {
                "model": MODELS[mode],
                "max_tokens": 1024,
                "system": system,
                "tools": anthropic_tools(session["tools"]),
                "messages": converted,
            }
            yield fixed_injection(body) if fixed else body
        else:
            yield {"model": MODELS[mode], "messages": history, "tools": session["tools"]}


# --- gateway + simulator ---------------------------------------------------------------------------


@dataclass
class Replay:
    url: str
    sim_url: str

    def reset(self) -> None:
        headers = {"authorization": f"Bearer {SIM_ADMIN_KEY}"}
        httpx.post(f"{self.sim_url}/sim/reset", headers=headers).raise_for_status()


def gateway_settings(sim_url: str, port: int) -> Settings:
    return Settings.model_validate(
        {
            "port": port,
            "embedded_simulator": False,
            "models": [
                {
                    "name": MODELS["anthropic"],
                    "provider": "anthropic",
                    "model": MODELS["anthropic"],
                    "api_base": sim_url,
                },
                {
                    "name": MODELS["openai"],
                    "provider": "openai",
                    "model": MODELS["openai"],
                    "api_base": f"{sim_url}/v1",
                },
            ],
            "tenants": [
                {"name": name, "keys": [hash_key(f"sk-{name}")], "policy": {"prompt_cache": policy}}
                for name, policy in TENANTS.items()
            ],
            "policy": {"response_cache": {"enabled": False}},  # every request must reach the provider
            "max_body_bytes": 16 * 1024 * 1024,
            "log_level": "warning",
        }
    )


@contextmanager
def replay_gateway(traces: Path = TRACES) -> Iterator[Replay]:
    """The simulator (replaying `traces`) and a gateway routed to it, both on loopback."""
    sim_app = create_sim_app(SimSettings(replay_file=traces, admin_key_hashes=[hash_key(SIM_ADMIN_KEY)]))
    with serve_on_socket(sim_app, free_socket()) as sim_url:
        sock = free_socket()
        app = create_app(gateway_settings(sim_url, sock.getsockname()[1]))
        with serve_on_socket(app, sock) as url:
            yield Replay(url, sim_url)


# --- measurement -------------------------------------------------------------------------------------


@dataclass
class Tokens:
    uncached: int = 0
    read: int = 0
    write_5m: int = 0
    write_1h: int = 0

    @property
    def total(self) -> int:
        return self.uncached + self.read + self.write_5m + self.write_1h

    def cost(self, price: Price) -> float:
        return (
            self.uncached * price.input
            + self.read * price.cache_read
            + self.write_5m * price.cache_write_5m
            + self.write_1h * price.cache_write_1h
        )


def usage_tokens(mode: str, usage: dict[str, Any]) -> Tokens:
    if mode == "anthropic":
        split = usage.get("cache_creation") or {}
        return Tokens(
            usage["input_tokens"],
            usage.get("cache_read_input_tokens") or 0,
            split.get("ephemeral_5m_input_tokens") or 0,
            split.get("ephemeral_1h_input_tokens") or 0,
        )
    read = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return Tokens(usage["prompt_tokens"] - read, read)


@dataclass
class Replayed:
    tokens: list[Tokens]
    stopped: bool  # the loop guard stopped or blocked the session before its last request


def replay_session(
    client: httpx.Client,
    replay: Replay,
    mode: str,
    session: dict[str, Any],
    tenant: str,
    session_id: str,
    **options: bool,
) -> Replayed:
    path = "/v1/messages" if mode == "anthropic" else "/v1/chat/completions"
    headers = {"x-api-key": f"sk-{tenant}", "x-session-id": session_id}
    results = []
    for body in session_requests(session, mode, **options):
        response = client.post(f"{replay.url}{path}", json=body, headers=headers)
        if response.status_code == 403 and "agent_loop_stopped" in response.text:
            return Replayed(results, stopped=True)  # blocked: the rest of the session is refused
        response.raise_for_status()
        if response.headers.get("x-cachegate-guard", "").startswith("stop"):
            return Replayed(results, stopped=True)  # answered by the guard, not the model: not a cache figure
        results.append(usage_tokens(mode, response.json()["usage"]))
    return Replayed(results, stopped=False)


def physical_limit(per_session: list[list[Tokens]]) -> list[Tokens]:
    """Every token the previous request of the session sent is read; the rest is plain input."""
    limit = []
    for requests in per_session:
        previous = 0
        for tokens in requests:
            limit.append(Tokens(uncached=tokens.total - min(previous, tokens.total), read=min(previous, tokens.total)))
            previous = tokens.total
    return limit


@dataclass
class Summary:
    requests: int
    input_tokens: int
    hit_ratio: float
    input_cost_usd: float
    write_tokens: int

    @classmethod
    def of(cls, tokens: list[Tokens], price: Price) -> Summary:
        total = sum(t.total for t in tokens)
        return cls(
            len(tokens),
            total,
            sum(t.read for t in tokens) / total if total else 0.0,
            sum(t.cost(price) for t in tokens),
            sum(t.write_5m + t.write_1h for t in tokens),
        )


VARIANTS: dict[str, tuple[str, dict[str, bool]]] = {
    "a_no_optimizer": ("plain", {}),
    "b_fixed_injection": ("plain", {"fixed": True}),
    "c_cachegate": ("ours", {}),
    "timestamp_a_no_optimizer": ("plain", {"timestamp": True}),
    "timestamp_b_fixed_injection": ("plain", {"fixed": True, "timestamp": True}),
    "timestamp_c_cachegate": ("ours", {"timestamp": True}),
    "timestamp_c_cachegate_relocate": ("relocate", {"timestamp": True}),
}


@dataclass
class ModeResult:
    variants: dict[str, Summary] = field(default_factory=dict)
    limit: Summary | None = None
    guard_stopped: dict[str, int] = field(default_factory=dict)  # variant -> sessions the guard ended


def run_mode(replay: Replay, mode: str, sessions: list[dict[str, Any]], progress: Callable[[str], None]) -> ModeResult:
    price = price_for(f"{'anthropic' if mode == 'anthropic' else 'openai'}/{MODELS[mode]}")
    result = ModeResult()
    with httpx.Client(timeout=120) as client:
        for name, (tenant, options) in VARIANTS.items():
            if mode == "openai" and options.get("fixed"):
                # Marks change nothing on OpenAI's automatic cache: (b) sends what (a) sends.
                result.variants[name] = result.variants[name.replace("b_fixed_injection", "a_no_optimizer")]
                continue
            replay.reset()
            started = time.perf_counter()
            replayed = [
                replay_session(client, replay, mode, s, tenant, f"{name}-{s['id']}", **options) for s in sessions
            ]
            per_session = [r.tokens for r in replayed]
            result.guard_stopped[name] = sum(r.stopped for r in replayed)
            tokens = [t for requests in per_session for t in requests]
            result.variants[name] = Summary.of(tokens, price)
            if name == "a_no_optimizer":
                result.limit = Summary.of(physical_limit(per_session), price)
            progress(
                f"{mode:9s} {name:32s} {len(tokens):5d} requests  hit ratio "
                f"{result.variants[name].hit_ratio:.3f}  {time.perf_counter() - started:5.1f} s"
            )
    return result


def plot(reports: dict[str, dict[str, Any]], path: Path) -> None:
    """Hit ratio and input cost per variant, one column per mode (from the JSON report)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(reports), figsize=(13, 8))
    for column, (mode, report) in enumerate(reports.items()):
        rows = {"physical_limit": report["physical_limit"], **report["variants"]}
        colors = ["grey"] + ["tab:orange" if "cachegate" in name else "tab:blue" for name in report["variants"]]
        for row, (metric, label) in enumerate((("hit_ratio", "hit ratio"), ("input_cost_usd", "input cost (USD)"))):
            axis = axes[row][column]
            axis.barh(list(rows), [summary[metric] for summary in rows.values()], color=colors)
            axis.set_title(f"{mode} mode: {label}")
            axis.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def mode_report(result: ModeResult) -> dict[str, Any]:
    assert result.limit is not None
    ours, fixed = result.variants["c_cachegate"], result.variants["b_fixed_injection"]
    return {
        "physical_limit": asdict(result.limit),
        "variants": {name: asdict(summary) for name, summary in result.variants.items()},
        "guard_stopped_sessions": result.guard_stopped,
        "ours_vs_limit_hit_ratio": ours.hit_ratio / result.limit.hit_ratio if result.limit.hit_ratio else None,
        "ours_vs_fixed_cost": ours.input_cost_usd / fixed.input_cost_usd,
        "timestamp_ours_vs_fixed_cost": result.variants["timestamp_c_cachegate"].input_cost_usd
        / result.variants["timestamp_b_fixed_injection"].input_cost_usd,
        "timestamp_relocate_vs_fixed_cost": result.variants["timestamp_c_cachegate_relocate"].input_cost_usd
        / result.variants["timestamp_b_fixed_injection"].input_cost_usd,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=Path, default=TRACES, help="session traces (JSONL)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON report and the plot")
    parser.add_argument("--sessions", type=int, default=12, help="sessions replayed (spread over the file)")
    args = parser.parse_args()
    sessions = load_sessions(require(args.traces, "--traces"), count=args.sessions)
    print(
        f"replaying {len(sessions)} sessions "
        f"({sum(sum(m['role'] == 'assistant' for m in s['messages']) for s in sessions)} requests per variant)"
    )
    started = time.perf_counter()
    results: dict[str, ModeResult] = {}
    with replay_gateway(args.traces) as replay:
        for mode in ("anthropic", "openai"):
            results[mode] = run_mode(replay, mode, sessions, lambda line: print(line, flush=True))
    reports = {mode: mode_report(result) for mode, result in results.items()}
    seconds = round(time.perf_counter() - started, 1)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "sessions": len(sessions),
        "session_ids": [s["id"] for s in sessions],
        "seconds": seconds,
        "modes": reports,
    }
    (out / "prompt_cache_replay.json").write_text(json.dumps(payload, indent=2))
    plot(reports, out / "prompt_cache_replay.png")
    for mode, report in reports.items():
        print(
            f"{mode}: ours / limit hit ratio = {report['ours_vs_limit_hit_ratio']:.3f}, "
            f"ours / fixed-injection input cost = {report['ours_vs_fixed_cost']:.3f} "
            f"(with a timestamp: {report['timestamp_ours_vs_fixed_cost']:.3f}, "
            f"relocated: {report['timestamp_relocate_vs_fixed_cost']:.3f})"
        )
    print(f"results: {out / 'prompt_cache_replay.json'} ({seconds} s)")


if __name__ == "__main__":
    main()
