"""Loop-guard quality through the gateway: false alarms on real sessions, detection delay on loops made
from them, chanting streams, and the stage's overhead on a 100-message request.

1. Replay: every recorded session (mini-swe-agent + Gemini 3 Pro on SWE-bench Verified) is sent turn by
   turn (request k carries messages[:k], with a session id) through a real gateway with the default
   policy; the simulator in replay mode answers with the recorded next message. Goal: no nudge or stop
   on a resolved session (any on the others is reported with its reason).
2. Loops made from the same sessions, appended after a recorded step: the step repeated with its
   identical result, two recorded steps alternating, a failing command repeated; and polling (a
   successful call repeated with changing output) as the negative control. Goal: every loop stopped,
   acted on within 3 repeated steps after it starts; never acted on: polling (changing output; the same
   output with a `sleep 30` in the call; the same output with real pauses between requests) and
   verification (after the session's last edit, its earlier checks re-run twice, a diff between, as an
   agent does before it submits). "sliding": the repeated step sent
   by a sliding-window agent (the task plus only the last 8 messages: every request has the same
   number of messages), which must escalate like any other session.
3. Chanting: `[[sim:chant N]]` streams must be cut; recorded assistant texts streamed must not.
4. Overhead: GuardStage.on_request in-process on a 100-message request, p50 (goal <= 1 ms); baseline
   in the same run: parsing the whole history with steps_from_openai_messages.

    python -m bench.guard_quality [--sessions N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

import gateway  # noqa: F401  (offline defaults before litellm/tiktoken)
from agent_runtime.guard import Step, looks_like_error, steps_from_openai_messages
from bench.shared_data import require
from gateway.app import create_app
from gateway.config import PolicyConfig, Settings, TenantConfig, hash_key
from gateway.context import RequestContext
from gateway.services import create_services
from gateway.sim.app import create_sim_app
from gateway.sim.settings import SimSettings
from gateway.stages.guard import GuardStage
from gateway.traces import default_traces, read_sessions
from gateway.wire import OPENAI
from tests.deploy.processes import redis_server
from tests.servers import free_socket, serve_on_socket

REPO = Path(__file__).resolve().parents[1]
TRACES = default_traces()
RESULTS = REPO / "bench" / "results"
KEY = "sk-bench-guard"
MAX_DELAY = 3
HONEST = ("polling", "polling_sleep", "verify")  # made sessions the guard must never act on
PAUSE_S = 5.5  # pauses of polling-with-pauses runs: just over the default wait_gap_s (5 s)
WINDOW = 8  # messages a sliding-window agent keeps (after its task): the original step + 3 repeats
Message = dict[str, Any]


def load_sessions(traces: Path = TRACES) -> list[dict[str, Any]]:
    return list(read_sessions(traces))


@contextmanager
def gateway_with_replay(traces: Path = TRACES) -> Iterator[str]:
    """A real gateway on loopback, its models routed to a simulator that replays the traces."""
    sock = free_socket()
    settings = Settings.model_validate(
        {
            "port": sock.getsockname()[1],
            "models": [
                {
                    "name": "gpt-4.1-mini",
                    "provider": "openai",
                    "model": "gpt-4.1-mini",
                    "api_base": "embedded-sim",
                    "path": "lean",
                }
            ],
            "tenants": [{"name": "bench", "keys": [hash_key(KEY)]}],
            # Only the guard under test: the other stages would change what is measured and cost time.
            "policy": {name: {"enabled": False} for name in ("compaction", "response_cache", "prompt_cache")},
            "max_body_bytes": 16 * 1024 * 1024,
            "log_level": "warning",
        }
    )
    app = create_app(settings)
    app.mount("/sim", create_sim_app(SimSettings(replay_file=traces)))
    with serve_on_socket(app, sock) as url:
        yield url


class Client:
    """Sends one request of a session; returns the guard's action (or 'error:<status>')."""

    def __init__(self, url: str, tools: list[Any]) -> None:
        self.http = httpx.Client(base_url=url, timeout=60, headers={"authorization": f"Bearer {KEY}"})
        self.tools = tools
        self.requests = 0

    def send(self, session: str, messages: list[Message], *, stream: bool = False) -> tuple[str, str, httpx.Response]:
        body = {"model": "gpt-4.1-mini", "messages": messages, "tools": self.tools, "stream": stream}
        response = self.http.post("/v1/chat/completions", json=body, headers={"x-session-id": session})
        self.requests += 1
        if response.status_code == 403:  # a block (agent_loop_stopped, x-should-retry: false)
            return "block", response.headers.get("x-cachegate-guard", ""), response
        if response.status_code != 200:
            return f"error:{response.status_code}", response.text[:200], response
        guard = response.headers.get("x-cachegate-guard", "")
        return (guard.split(";")[0] or "continue"), guard, response


# --- 1. replay ------------------------------------------------------------------------------------


def replay(client: Client, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    alarms: list[dict[str, Any]] = []
    requests = 0
    for number, session in enumerate(sessions):
        messages = session["messages"]
        for k, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            action, guard, _ = client.send(f"replay-{session['id']}", messages[:k])
            requests += 1
            if action != "continue":
                alarms.append(
                    {
                        "session": session["id"],
                        "resolved": session["resolved"],
                        "request": k,
                        "action": action,
                        "guard": guard,
                    }
                )
        if number % 20 == 0:
            print(f"  replay {number + 1}/{len(sessions)} sessions, {requests} requests, {len(alarms)} alarms")
    resolved = [s for s in sessions if s["resolved"]]
    return {
        "sessions": len(sessions),
        "resolved_sessions": len(resolved),
        "requests": requests,
        "alarms_on_resolved": [a for a in alarms if a["resolved"]],
        "alarms_on_unresolved": [a for a in alarms if not a["resolved"]],
    }


# --- 2. loops -------------------------------------------------------------------------------------


def tool_pairs(messages: list[Message]) -> list[int]:
    return [
        a
        for a in range(len(messages) - 1)
        if len(messages[a].get("tool_calls") or []) == 1 and messages[a + 1]["role"] == "tool"
    ]


def with_output(message: Message, suffix: str) -> Message:
    return {**message, "content": message["content"] + suffix}


def with_command(call: Message, command: Callable[[str], str]) -> Message | None:
    """The recorded call with its shell command rewritten (None: not a call with a `command` argument)."""
    tool_call = call["tool_calls"][0]
    try:
        args = json.loads(tool_call["function"]["arguments"])
    except (TypeError, ValueError):
        return None
    if not isinstance(args, dict) or not isinstance(args.get("command"), str):
        return None
    function = {**tool_call["function"], "arguments": json.dumps({**args, "command": command(args["command"])})}
    return {**call, "tool_calls": [{**tool_call, "function": function}]}


def verification(m: list[Message], pairs: list[int]) -> tuple[int, list[Message]] | None:
    """After the session's last edit, up to three of its earlier successful checks run again, a look at
    the diff, then the same checks once more, each printing what it printed the first time: the checks
    an agent runs before it submits. (The edit's index, the appended messages.)"""
    edits = [a for a in pairs if (step := tool_step(m, a)) is not None and step.changes]
    if not edits:
        return None
    edit = edits[-1]
    checks = [a for a in pairs if a < edit and (step := tool_step(m, a)) is not None and not step.changes]
    checks = [a for a in checks if not looks_like_error(m[a + 1]["content"])][-3:]
    diff = with_command(m[edit], lambda _: "git diff")
    if not checks or diff is None:
        return None
    runs = [x for a in checks for x in (m[a], m[a + 1])]
    return edit, [*runs, diff, {**m[edit + 1], "content": "diff --git a/x b/x"}, *runs]


def tool_step(m: list[Message], a: int) -> Step | None:
    steps = steps_from_openai_messages(m[a : a + 2])
    return steps[0] if steps else None


def loops(messages: list[Message], rng: random.Random) -> Iterator[tuple[str, int, list[Message], list[Message]]]:
    """(kind, first index, history, appended steps as message pairs) made from recorded steps."""
    m, pairs = messages, tool_pairs(messages)
    failing = [a for a in pairs if looks_like_error(m[a + 1]["content"])]
    for index, a in enumerate(rng.sample(pairs, min(3, len(pairs)))):
        yield "repeat", a, m[: a + 2], [m[a], m[a + 1]] * 6
        if index == 0:
            yield "sliding", a, m[: a + 2], [m[a], m[a + 1]] * 6
        if a + 2 in pairs:
            yield "alternate", a, m[: a + 4], [m[a], m[a + 1], m[a + 2], m[a + 3]] * 3
        if a not in failing and index == 0:  # one polling control per session (8 requests each)
            yield "polling", a, m[: a + 2], [x for i in range(8) for x in (m[a], with_output(m[a + 1], f"\n{i}0%"))]
            sleeping = with_command(m[a], lambda command: f"sleep 30; {command}")
            if sleeping is not None:  # the same call, unchanged output, waiting in the call itself
                yield "polling_sleep", a, m[: a + 2], [sleeping, m[a + 1]] * 8
    verified = verification(m, pairs)
    if verified is not None:
        edit, checks = verified
        yield "verify", edit, m[: edit + 2], checks
    for a in rng.sample(failing, min(2, len(failing))):
        yield "failing", a, m[: a + 2], [m[a], m[a + 1]] * 6


def run_loop(
    client: Client, session: str, history: list[Message], loop: list[Message], window: int | None = None
) -> tuple[int | None, int | None]:
    """(repeated steps when the guard first acted, when it stopped the session), None = never. With a
    ``window``, each request carries the first message (the task) and only the last ``window`` others."""
    first = stop = None
    for step in range(1, len(loop) // 2 + 1):
        sent = history + loop[: 2 * step]
        if window is not None:
            sent = sent[:1] + sent[1:][-window:]
        action, _, _ = client.send(session, sent)
        if action != "continue" and first is None:
            first = step
        if action in ("stop", "block"):
            stop = step
            break
    return first, stop


def synthetic_loops(client: Client, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    rng = random.Random(7)
    firsts: dict[str, Counter[str]] = {}
    stops: dict[str, Counter[str]] = {}
    for number, session in enumerate(sessions):
        for kind, a, history, loop in loops(session["messages"], rng):
            window = WINDOW if kind == "sliding" else None
            first, stop = run_loop(client, f"loop-{session['id']}-{kind}-{a}", history, loop, window)
            firsts.setdefault(kind, Counter())[str(first)] += 1
            stops.setdefault(kind, Counter())[str(stop)] += 1
        if number % 20 == 0:
            print(f"  loops {number + 1}/{len(sessions)} sessions, {client.requests} requests so far")
    summary: dict[str, Any] = {}
    for kind in firsts:
        total = sum(firsts[kind].values())
        if kind in HONEST:
            summary[kind] = {"runs": total, "never_acted": firsts[kind]["None"]}
            continue
        within = sum(n for d, n in firsts[kind].items() if d != "None" and int(d) <= MAX_DELAY)
        summary[kind] = {
            "runs": total,
            "acted_within_3_repeats": within,
            "stopped": total - stops[kind]["None"],
            "first_action_delay": dict(sorted(firsts[kind].items())),
            "stop_delay": dict(sorted(stops[kind].items())),
        }
    return summary


def polling_with_pauses(
    client: Client, sessions: list[dict[str, Any]], runs: int = 4, polls: int = 6
) -> dict[str, Any]:
    """The same recorded call returning the same output, the agent pausing PAUSE_S between requests (no
    sleep in the call): polling as the gateway sees it in time. Sessions run side by side (real time)."""
    chosen = []
    for session in sessions:
        m = session["messages"]
        good = [a for a in tool_pairs(m) if not looks_like_error(m[a + 1]["content"])]
        if good:
            chosen.append((session["id"], m[: good[0] + 2], [m[good[0]], m[good[0] + 1]]))
        if len(chosen) == runs:
            break

    def run(item: tuple[str, list[Message], list[Message]]) -> str | None:
        sid, history, pair = item
        for poll in range(1, polls + 1):
            time.sleep(PAUSE_S)
            action, guard, _ = client.send(f"pauses-{sid}", history + pair * poll)
            if action != "continue":
                return guard
        return None

    with ThreadPoolExecutor(len(chosen) or 1) as pool:
        acted = [guard for guard in pool.map(run, chosen) if guard is not None]
    return {"runs": len(chosen), "polls_each": polls, "pause_s": PAUSE_S, "never_acted": len(chosen) - len(acted)}


# --- 3. chanting ----------------------------------------------------------------------------------


def stream_text(response: httpx.Response) -> str:
    text = ""
    for line in response.text.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                text += choice["delta"].get("content") or ""
    return text


def chanting(client: Client, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    from gateway.sim.responses import CHANT_SENTENCE

    chants = []
    for repeats in (12, 20, 40, 80, 160):
        prompt = [{"role": "user", "content": f"[[sim:chant {repeats}]]"}]
        _, _, response = client.send(f"chant-{repeats}", prompt, stream=True)
        text = stream_text(response)
        full = len(" ".join([CHANT_SENTENCE] * repeats))
        chants.append(
            {
                "repeats": repeats,
                "cut": len(text) < full,
                "chars_streamed": len(text),
                "chars_full": full,
                "sentences_before_cut": round(len(text) / (len(CHANT_SENTENCE) + 1), 1),
            }
        )
    rng = random.Random(11)
    texts = [
        (s["id"], s["resolved"], m["content"])
        for s in sessions
        for m in s["messages"]
        if m["role"] == "assistant" and m.get("content") and "]]" not in m["content"]
    ]
    sample = rng.sample(texts, min(300, len(texts)))
    cut = []
    for number, (sid, resolved, text) in enumerate(sample):
        _, _, response = client.send(
            f"prose-{number}", [{"role": "user", "content": f"[[sim:text {text}]]"}], stream=True
        )
        if len(stream_text(response)) < len(text.strip()):
            cut.append({"session": sid, "resolved": resolved})
    return {"chanting_streams": chants, "recorded_texts_streamed": len(sample), "recorded_texts_cut": cut}


# --- 4. overhead ----------------------------------------------------------------------------------


async def stage_overhead(messages: list[Message], runs: int = 400, redis_url: str | None = None) -> dict[str, float]:
    """p50 of GuardStage.on_request on a 100-message request (memory store, or Redis), warm and cold."""
    settings = Settings.model_validate(
        {"tenants": [{"name": "bench", "keys": [hash_key(KEY)]}], "redis_url": redis_url}
    )
    services = create_services(settings)
    stage = GuardStage(services)
    tenant = TenantConfig(name="bench")
    body = {"model": "gpt-4.1-mini", "messages": messages}

    def context(session: str, history: list[Message]) -> RequestContext:
        return RequestContext(
            wire=OPENAI,
            body={**body, "messages": history},
            headers={},
            services=services,
            tenant=tenant,
            session_id=session,
            policy=PolicyConfig(),
        )

    async def timed(session: str, warm: bool) -> float:
        if warm:  # the session's previous request: history up to the last assistant turn
            await stage.on_request(context(session, messages[:-2]))
        ctx = context(session, messages)
        start = time.perf_counter()
        await stage.on_request(ctx)
        return time.perf_counter() - start

    results: dict[str, float] = {}
    for label, warm in (("warm", True), ("cold", False)):
        samples = [await timed(f"{label}-{i}", warm) for i in range(runs)]
        results[f"stage_p50_ms_{label}"] = statistics.median(samples) * 1e3
        results[f"stage_p90_ms_{label}"] = statistics.quantiles(samples, n=10)[-1] * 1e3
    parse = []
    for _ in range(runs // 4):
        start = time.perf_counter()
        steps_from_openai_messages(messages)
        parse.append(time.perf_counter() - start)
    results["baseline_full_parse_p50_ms"] = statistics.median(parse) * 1e3
    results["warm_vs_full_parse"] = results["stage_p50_ms_warm"] / results["baseline_full_parse_p50_ms"]
    await services.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    parser.add_argument("--traces", type=Path, default=TRACES, help="session traces (JSONL)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON report")
    args = parser.parse_args()
    every = load_sessions(require(args.traces, "--traces"))
    sessions = every[: args.sessions] if args.sessions else every
    started = time.perf_counter()
    hundred = next(s["messages"] for s in every if len(s["messages"]) >= 100)[:100]
    print("overhead (in-process) ...")
    overhead = asyncio.run(stage_overhead(hundred))
    print(f"  memory store: {overhead}")
    if shutil.which("redis-server"):  # a private server: the bench never touches a Redis it did not start
        with tempfile.TemporaryDirectory() as scratch, redis_server(Path(scratch)) as (_, redis_url):
            on_redis = asyncio.run(stage_overhead(hundred, runs=200, redis_url=redis_url))
        overhead.update({f"redis_{k}": v for k, v in on_redis.items() if k.startswith("stage")})
        print(f"  redis store: {on_redis}")
    with gateway_with_replay(args.traces) as url:
        client = Client(url, sessions[0]["tools"])
        print(f"replay of {len(sessions)} sessions ...")
        replayed = replay(client, sessions)
        print("synthetic loops ...")
        looped = synthetic_loops(client, sessions)
        print(f"polling with {PAUSE_S} s pauses (real time) ...")
        looped["polling_pauses"] = polling_with_pauses(client, sessions)
        print("chanting ...")
        chanted = chanting(client, sessions)
    result = {
        "command": "python -m bench.guard_quality" + (f" --sessions {args.sessions}" if args.sessions else ""),
        "policy": "default (GuardConfig())",
        "replay": replayed,
        "loops": looped,
        "chanting": chanted,
        "overhead": overhead,
        "requests": client.requests,
        "seconds": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "guard_quality.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "chanting"}, indent=2)[:4000])
    print(f"chanting: {json.dumps(chanted)[:1500]}")


if __name__ == "__main__":
    main()
