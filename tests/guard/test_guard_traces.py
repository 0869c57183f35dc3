"""The guard on 107 real agent sessions (mini-swe-agent + Gemini 3 Pro on SWE-bench Verified).

- No false alarms: every session is replayed request by request (request k carries messages[:k]) through
  ``evaluate`` with the default policy and the strikes it produced; resolved sessions must never get a
  nudge or a stop (unresolved ones are reported).
- Loops made from those sessions (a recorded step repeated with its identical result, two recorded
  steps alternating, a failing command repeated with identical or changing error text) are caught
  within at most 3 repeated steps; polling (a recorded successful call repeated with changing output)
  is never caught.
- Chanting: of the 4,212 recorded assistant texts, fed as streams, only the one that really chants
  (a thinking loop in an unresolved session) trips.
- ``evaluate`` on a 100-message history stays well under 1 ms.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from agent_runtime.guard import (
    Action,
    ChantDetector,
    Decision,
    GuardLimits,
    GuardPolicy,
    SessionCounters,
    Strike,
    evaluate,
    evaluate_history,
    looks_like_error,
    steps_from_openai_messages,
)
from gateway.traces import default_traces, read_sessions

TRACES = default_traces()
MAX_DELAY = 3  # repeated steps after a loop starts
Message = dict[str, Any]

pytestmark = pytest.mark.skipif(not TRACES.exists(), reason=f"{TRACES} not found")


@cache
def sessions() -> list[dict[str, Any]]:
    return list(read_sessions(TRACES))


def requests(messages: list[Message]) -> Iterator[tuple[int, int]]:
    """(k, steps in messages[:k]) for each request: messages[k] is the assistant turn answering it."""
    steps = 0
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            yield k, steps
            steps += len(message.get("tool_calls") or []) or 1


def replay(messages: list[Message], first_request: int = 0) -> Iterator[tuple[int, Decision]]:
    """Each request's decision from ``first_request`` on, the strike history carried along."""
    steps = steps_from_openai_messages(messages)
    strikes: list[Strike] = []
    for k, count in requests(messages):
        if k < first_request:
            continue
        decision = evaluate(steps[:count], SessionCounters(llm_calls=count), strikes=strikes)
        if decision.strike is not None:
            strikes.append(decision.strike)
        yield k, decision


def test_prefix_of_the_full_parse_is_the_parse_of_the_prefix() -> None:
    for session in sessions()[:5]:
        messages = session["messages"]
        steps = steps_from_openai_messages(messages)
        for k, count in requests(messages):
            assert steps_from_openai_messages(messages[:k]) == steps[:count]


def test_no_nudge_or_stop_on_real_sessions() -> None:
    alarms: Counter[tuple[bool, str]] = Counter()
    for session in sessions():
        for k, decision in replay(session["messages"]):
            if decision.action is not Action.CONTINUE:
                assert decision.detection is not None
                alarms[(session["resolved"], f"{session['id']}@{k}: {decision.detection.detector}")] += 1
    print(f"\nalarms on {len(sessions())} sessions: {dict(alarms) or 'none'}")
    assert not [alarm for alarm in alarms if alarm[0]], "nudge/stop on a resolved session"


SESSIONLESS = GuardPolicy(rungs=(Action.NUDGE, Action.STOP), limits=GuardLimits(None, None, None, None, None))


def sessionless_replay(messages: list[Message], first_request: int = 0) -> Iterator[tuple[int, Decision]]:
    """Each request's decision with no session (the gateway's session-less policy: no BLOCK, no counters)."""
    steps = steps_from_openai_messages(messages)
    for k, count in requests(messages):
        if k >= first_request:
            yield k, evaluate_history(steps[:count], policy=SESSIONLESS)


def test_no_nudge_or_stop_on_real_sessions_without_a_session_id() -> None:
    alarms = [
        (session["id"], k, decision.action.value)
        for session in sessions()
        for k, decision in sessionless_replay(session["messages"])
        if decision.action is not Action.CONTINUE
    ]
    resolved = {session["id"] for session in sessions() if session["resolved"]}
    print(f"\nsession-less alarms: {alarms or 'none'}")
    assert not [alarm for alarm in alarms if alarm[0] in resolved], "nudge/stop on a resolved session"


def test_sessionless_loops_stop_one_request_after_the_nudge_and_polling_never() -> None:
    rng = random.Random(7)
    gaps: Counter[str] = Counter()
    for session in sessions():
        for name, history, loop in loops(session["messages"], rng):
            actions = [d.action for _, d in sessionless_replay(history + loop, first_request=len(history))]
            acted = [a for a in actions if a is not Action.CONTINUE]
            if name == "polling":
                assert not acted, session["id"]
                continue
            first = actions.index(acted[0])
            gaps[f"{name}: {actions[first : first + 2]}"] += 1
            assert actions[first : first + 2] == [Action.NUDGE, Action.STOP], (name, session["id"])
    print(f"\nsession-less ladders: {dict(gaps)}")


def tool_pairs(messages: list[Message]) -> list[int]:
    """Indices of assistant turns with one tool call, answered by the next message."""
    return [
        a
        for a in range(len(messages) - 1)
        if len(messages[a].get("tool_calls") or []) == 1 and messages[a + 1]["role"] == "tool"
    ]


def delay(history: list[Message], loop: list[Message]) -> int | None:
    """Repeated steps of ``loop`` (appended to ``history``) before the guard acts, or None if never."""
    for k, decision in replay(history + loop, first_request=len(history)):
        if decision.action is not Action.CONTINUE:
            return (k - len(history)) // 2
    return None


def with_output(message: Message, suffix: str) -> Message:
    return {**message, "content": message["content"] + suffix}


def loops(messages: list[Message], rng: random.Random) -> Iterator[tuple[str, list[Message], list[Message]]]:
    """(name, history, appended turns) of synthetic loops and of polling, made from recorded steps."""
    m = messages
    pairs = tool_pairs(m)
    failing = [a for a in pairs if looks_like_error(m[a + 1]["content"])]
    for a in rng.sample(pairs, min(3, len(pairs))):
        step = [m[a], m[a + 1]]
        yield "repeat", m[: a + 2], step * 8
        if a + 2 in pairs:
            yield "alternate", m[: a + 4], [*step, m[a + 2], m[a + 3]] * 4
        if a not in failing:
            poll = [x for i in range(10) for x in (m[a], with_output(m[a + 1], f"\nprogress {10 * i}%"))]
            yield "polling", m[: a + 2], poll
    for a in rng.sample(failing, min(2, len(failing))):
        yield "failing, same error", m[: a + 2], [m[a], m[a + 1]] * 8
        vary = [x for i in range(8) for x in (m[a], with_output(m[a + 1], f"\nat 12:00:{i:02}"))]
        yield "failing, changing error", m[: a + 2], vary


def test_synthetic_loops_are_caught_within_three_repeated_steps() -> None:
    rng = random.Random(7)
    delays: dict[str, Counter[int | None]] = {}
    for session in sessions():
        for name, history, loop in loops(session["messages"], rng):
            delays.setdefault(name, Counter())[delay(history, loop)] += 1
    print(f"\ndetection delay in repeated steps: { {k: dict(v) for k, v in delays.items()} }")
    assert set(delays["polling"]) == {None}
    for name, counts in delays.items():
        if name != "polling":
            assert sum(counts.values()) >= 100, name
            assert all(d is not None and d <= MAX_DELAY for d in counts), (name, counts)


def test_evaluate_cost_on_a_100_message_history() -> None:
    messages = next(s["messages"] for s in sessions() if len(s["messages"]) >= 100)[:100]
    steps = steps_from_openai_messages(messages)
    counters = SessionCounters(llm_calls=len(steps))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(200):
            evaluate(steps, counters)
        best = min(best, (time.perf_counter() - start) / 200)
    print(f"\nevaluate on 100 messages ({len(steps)} steps): {best * 1e6:.0f} µs")
    assert best < 0.5e-3


def test_chanting_on_real_assistant_texts() -> None:
    tripped = []
    for session in sessions():
        for message in session["messages"]:
            if message["role"] == "assistant" and message["content"]:
                detector = ChantDetector()
                text = message["content"]
                if any(detector.feed(text[i : i + 64]) for i in range(0, len(text), 64)):
                    tripped.append((session["id"], session["resolved"]))
    print(f"\nchanting in recorded assistant texts: {tripped}")
    assert tripped == [("scikit-learn__scikit-learn-25102", False)]
