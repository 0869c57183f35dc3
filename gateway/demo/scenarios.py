"""The demo's traffic: replayed SWE-bench agent sessions, looping agents, repeated and paraphrased questions.

Each scenario yields (api, body, headers) requests in the order an agent would send them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gateway.traces import assistant_turns, demo_traces, read_sessions

QUESTIONS = [
    ("What is the capital of France?", "Which city is the capital of France?"),
    ("How many bytes are in a kilobyte?", "A kilobyte has how many bytes?"),
    ("Explain what a Python list comprehension is.", "What is a list comprehension in Python?"),
    ("What does HTTP status 404 mean?", "What is the meaning of HTTP status code 404?"),
    ("Who wrote the novel Moby-Dick?", "Who is the author of Moby-Dick?"),
    (
        "What is the boiling point of water at sea level in Celsius?",
        "At sea level, what is water's boiling point in Celsius?",
    ),
]


@dataclass(frozen=True)
class DemoRequest:
    scenario: str
    api: str  # "openai" | "anthropic"
    body: dict[str, Any]
    session: str | None = None


def agent_sessions(count: int, max_turns: int, run: str) -> Iterator[DemoRequest]:
    """Real sessions replayed turn by turn; half on an OpenAI model, half on an Anthropic one. `run`: this
    run's id, in every session id (a run never continues an earlier run's sessions)."""
    for number, session in enumerate(s for s in read_sessions(demo_traces()) if s["resolved"]):
        if number >= count:
            return
        model = "gpt-4o-mini" if number % 2 == 0 else "claude-sonnet-4-5"
        for k in assistant_turns(session["messages"])[:max_turns]:
            body = {
                "model": model,
                "messages": session["messages"][:k],
                "tools": session["tools"],
                "temperature": 0,
                "max_tokens": 512,
            }
            yield DemoRequest("agent sessions", "openai", body, f"demo-swe-{run}-{session['id']}")


def looping_sessions(count: int, run: str, repeats: int = 8) -> Iterator[DemoRequest]:
    """Agents stuck re-running one command with the same result, until the guard stops them (fresh session
    ids per `run`: an earlier run's loops stay blocked)."""
    for number, session in enumerate(read_sessions(demo_traces())):
        if number >= count:
            return
        messages = session["messages"]
        k = next(i for i in assistant_turns(messages) if messages[i].get("tool_calls") and i + 1 < len(messages))
        call, result = messages[k], messages[k + 1]
        history = copy.deepcopy(messages[: k + 2])
        for repeat in range(repeats):
            body = {
                "model": "gpt-4o-mini",
                "messages": copy.deepcopy(history),
                "tools": session["tools"],
                "temperature": 0,
                "max_tokens": 256,
            }
            yield DemoRequest("looping agents", "openai", body, f"demo-loop-{run}-{number}")
            call_id = f"loop_{repeat}"
            again = {**call, "tool_calls": [{**call["tool_calls"][0], "id": call_id}]}
            history += [again, {**result, "tool_call_id": call_id}]


def questions(rounds: int = 2) -> Iterator[DemoRequest]:
    """The same questions asked again, word for word (exact tier) and then in other words (semantic tier).
    The paraphrases come after every original was answered: an answer whose prompt was not embedded in time
    is indexed in the background, and a paraphrase asked right after it could miss."""
    for _ in range(rounds):
        for original, _ in QUESTIONS:
            for text in (original, original):
                yield DemoRequest(
                    "questions",
                    "openai",
                    {"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": text}]},
                )
            yield DemoRequest(
                "questions",
                "anthropic",
                {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 200,
                    "temperature": 0,
                    "messages": [{"role": "user", "content": original}],
                },
            )
    for _, paraphrase in QUESTIONS:
        body = {"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": paraphrase}]}
        yield DemoRequest("questions", "openai", body)
