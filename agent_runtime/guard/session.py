"""``LoopGuard``: the incremental, stateful form of ``evaluate`` for consumers that see steps one by one.

The runtime keeps one per run: ``add()`` the steps of each superstep, ``check()`` before the next LLM
call. It holds the steps, counters and strike history, and records strikes itself::

    guard = LoopGuard(policy)
    guard.add(make_tool_step("bash", {"command": "ls"}, "a.py"))
    decision = guard.check(SessionCounters(llm_calls=1, tool_calls=1))
    if decision.action is Action.NUDGE: ...

``check`` costs the same on any history length (detectors only read the tail).
"""

from __future__ import annotations

from .limits import SessionCounters
from .policy import DEFAULT_POLICY, Decision, GuardPolicy, Strike, evaluate
from .steps import Step

__all__ = ["LoopGuard"]


class LoopGuard:
    """One session's guard state: steps, strikes and the policy."""

    def __init__(self, policy: GuardPolicy = DEFAULT_POLICY) -> None:
        self.policy = policy
        self.steps: list[Step] = []
        self.strikes: list[Strike] = []

    def add(self, *steps: Step) -> None:
        """Append the session's newest steps (results known)."""
        self.steps.extend(steps)

    def check(self, counters: SessionCounters | None = None) -> Decision:
        """``evaluate`` the session now, recording the strike the decision carries."""
        decision = evaluate(self.steps, counters, self.policy, self.strikes)
        if decision.strike is not None:
            self.strikes.append(decision.strike)
        return decision

    def reset(self) -> None:
        """Forget the strikes (lifts a BLOCK); the steps stay, so a loop still at the tail trips again."""
        self.strikes.clear()
