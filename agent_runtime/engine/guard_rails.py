"""Guard rails: limits and loop detection evaluated at the barrier, with a typed stop reason.

* `max_steps`: the run stops cleanly after that many supersteps (the last one is applied and saved;
  no exception, unlike `recursion_limit`).
* `max_wall_time_s`, `max_tokens`, `max_cost_usd`: checked before each superstep (usage comes from
  `report_usage()` inside nodes).
* Loop detection (shared detectors of `agent_runtime.guard`) over the steps of each superstep. A node
  that calls `record_action(tool, args, result)` describes its own actions (tool calls and results).
  Until some node does, every node counts as one step: the action is the node with the superstep's
  input state and the result is its writes, so only an exact no-progress loop (same state in, same
  writes out) trips. Once a run records actions, only recorded actions are steps (an LLM node's
  growing transcript would otherwise hide a tool loop between its steps).
* Escalation per the guard policy: a NUDGE is offered to nodes through `pending_nudge()`; a STOP ends
  the run with the detection's reason.
* `grace_step`: when a stop is decided, one more superstep runs in which nodes see
  `in_grace_step() == True` and may only update state (routing is dropped), so an agent can answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agent_runtime.core.types import StopReason
from agent_runtime.engine.algo import PUSH, Task
from agent_runtime.engine.node_usage import NodeUsage
from agent_runtime.guard import (
    Action,
    GuardLimits,
    GuardPolicy,
    GuardThresholds,
    LoopGuard,
    SessionCounters,
    Step,
    canonical_json,
    digest,
    make_tool_step,
)
from agent_runtime.guard import StopReason as GuardReason

if TYPE_CHECKING:
    from agent_runtime.engine.report import RunReport

_REASONS = {
    GuardReason.GOAL: StopReason.GOAL,
    GuardReason.LOOP: StopReason.LOOP,
    GuardReason.NO_PROGRESS: StopReason.LOOP,
    GuardReason.MAX_STEPS: StopReason.MAX_STEPS,
    GuardReason.BUDGET: StopReason.BUDGET,
    GuardReason.TIMEOUT: StopReason.TIMEOUT,
    GuardReason.ERRORS: StopReason.ERROR,
    GuardReason.FAILURE: StopReason.ERROR,
    GuardReason.ABORTED: StopReason.ABORTED,
}


class GuardedRun(Protocol):
    """What a guard session reads and sets of its run (engine/loop.py's Run): the step, the report it
    adds to, and the stop it decides (`status` "guard", a grace step)."""

    step: int
    status: str
    grace: bool
    report: RunReport


@dataclass(frozen=True, slots=True)
class GuardEvent:
    """One limit hit or detection, as recorded in `RunReport.guard_events`."""

    step: int
    action: str  # "warn" | "nudge" | "stop" | "grace"
    reason: StopReason
    detector: str
    detail: str


@dataclass(frozen=True)
class GuardRails:
    max_steps: int | None = None
    max_wall_time_s: float | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_consecutive_errors: int | None = 10
    loop_detection: bool = True
    thresholds: GuardThresholds = field(default_factory=GuardThresholds)
    escalation: tuple[Action, ...] = (Action.NUDGE, Action.STOP)
    grace_step: bool = False

    def policy(self) -> GuardPolicy:
        limits = GuardLimits(
            max_llm_calls=None,
            max_tool_calls=None,
            max_total_tokens=self.max_tokens,
            max_cost_usd=self.max_cost_usd,
            max_wall_time_s=self.max_wall_time_s,
            max_consecutive_errors=self.max_consecutive_errors,
        )
        thresholds = self.thresholds if self.loop_detection else _NO_DETECTORS
        return GuardPolicy(thresholds=thresholds, limits=limits, rungs=self.escalation)

    def session(self, run: GuardedRun) -> GuardSession:
        return GuardSession(self, run)


_NO_DETECTORS = GuardThresholds(
    identical_calls=None,
    cycle_repeated_steps=None,
    no_progress_streak=None,
    repeated_errors=None,
    monologue=None,
    malformed=None,
)


class GuardSession:
    """The guard state of one run."""

    def __init__(self, rails: GuardRails, run: GuardedRun) -> None:
        self.rails = rails
        self.run = run
        self.guard = LoopGuard(rails.policy())
        self.started = time.monotonic()
        self.steps_run = 0
        self.tool_calls = 0
        self.nudge: str | None = None
        self.records_actions = False  # set once any node of the run calls record_action
        self._stop_after_grace: tuple[StopReason, str, str] | None = None

    def counters(self) -> SessionCounters:
        report = self.run.report
        return SessionCounters(
            llm_calls=self.steps_run,
            tool_calls=self.tool_calls,
            total_tokens=report.tokens,
            cost_usd=report.cost,
            elapsed_s=time.monotonic() - self.started,
        )

    def _record(self, action: str, reason: StopReason, detector: str, detail: str) -> None:
        self.run.report.guard_events.append(GuardEvent(self.run.step, action, reason, detector, detail))

    def _stop(self, reason: StopReason, detector: str, detail: str) -> bool:
        """Stop now, or after a grace step if allowed; True if the run must stop now."""
        if self.rails.grace_step and not self.run.grace and self._stop_after_grace is None:
            self._stop_after_grace = (reason, detector, detail)
            self._record("grace", reason, detector, detail)
            return False
        self._record("stop", reason, detector, detail)
        self.run.status = "guard"
        self.run.report.stop_reason = reason
        self.run.report.message = detail
        return True

    def before_step(self, tasks: Sequence[Task]) -> bool:
        """Limits that must hold before spending another superstep. True = stop before running."""
        if self._stop_after_grace is not None:
            self.run.grace = True
            return False
        rails = self.rails
        report = self.run.report
        elapsed = time.monotonic() - self.started
        if rails.max_wall_time_s is not None and elapsed >= rails.max_wall_time_s:
            return self._stop_or_grace(StopReason.TIMEOUT, "max_wall_time_s", f"{elapsed:.3g} s elapsed")
        if rails.max_tokens is not None and report.tokens >= rails.max_tokens:
            return self._stop_or_grace(StopReason.BUDGET, "max_tokens", f"{report.tokens} tokens used")
        if rails.max_cost_usd is not None and report.cost >= rails.max_cost_usd:
            return self._stop_or_grace(StopReason.BUDGET, "max_cost_usd", f"{report.cost:g} USD spent")
        return False

    def _stop_or_grace(self, reason: StopReason, detector: str, detail: str) -> bool:
        if self._stop(reason, detector, detail):
            return True
        self.run.grace = True  # this very step is the grace step
        return False

    def take_nudge(self) -> str | None:
        nudge, self.nudge = self.nudge, None
        return nudge

    def after_step(self, tasks: Sequence[Task], scratches: Sequence[NodeUsage], before: dict[str, Any]) -> None:
        """At the barrier: account usage, feed the detectors, decide."""
        if all(t.hidden for t in tasks):
            return  # the hidden input step is not a step of the agent
        by_task = {id(s.task): s for s in scratches}
        if any(s.actions for s in scratches):
            self.records_actions = True
        steps: list[Step] = []
        state_digest: str | None = None
        for task in tasks:
            if task.hidden:
                continue
            own = self._observe(by_task.get(id(task)))
            if own is None and self.rails.loop_detection and not self.records_actions:
                if state_digest is None:
                    state_digest = digest(canonical_json(before))
                own = [_default_step(task, state_digest)]
            steps.extend(own or ())
        self._conclude(steps)

    def before_call(self) -> bool:
        """Functional API: a task call is a step of the agent (an entrypoint runs in one superstep).
        True = the run must stop instead of making the call."""
        return self.run.status == "guard" or self.before_step(())

    def after_call(self, call: Task, scratch: NodeUsage, result: Any) -> None:
        """A finished task call: its recorded actions, or (call, arguments -> result) as one step."""
        if scratch.actions:
            self.records_actions = True
        steps = self._observe(scratch)
        if steps is None and self.rails.loop_detection and not self.records_actions:
            steps = [make_tool_step(call.name, {"args": canonical_json(call.input)}, _as_text(result), is_error=False)]
        self._conclude(steps or [])

    def _observe(self, scratch: NodeUsage | None) -> list[Step] | None:
        """Account a task's usage; its recorded actions as steps, None if it recorded none."""
        if scratch is None:
            return None
        report = self.run.report
        report.tokens += scratch.tokens
        report.cost += scratch.cost
        if not scratch.actions:
            return None
        self.tool_calls += len(scratch.actions)
        return [
            make_tool_step(a.tool, _as_args(a.args), _as_text(a.result), is_error=a.error, text=a.text)
            for a in scratch.actions
        ]

    def _conclude(self, steps: list[Step]) -> None:
        """One step of the agent done: end a grace step, run the detectors and the step limit."""
        self.steps_run += 1
        report = self.run.report
        if self.run.grace:
            reason, detector, detail = self._stop_after_grace or (StopReason.MAX_STEPS, "grace", "grace step done")
            self._stop_after_grace = None
            self._record("stop", reason, detector, detail)
            self.run.status = "guard"
            report.stop_reason = reason
            report.message = detail
            return
        if steps:  # detectors and error limits only change when new steps arrive
            self.guard.add(*steps)
            self._decide()
        stopping = self.run.status != "running" or self._stop_after_grace is not None
        if not stopping and self.rails.max_steps is not None and self.steps_run >= self.rails.max_steps:
            detail = f"{self.steps_run} supersteps run (limit {self.rails.max_steps})"
            self._stop(StopReason.MAX_STEPS, "max_steps", detail)

    def _decide(self) -> None:
        decision = self.guard.check(self.counters())
        detection = decision.detection
        if detection is not None and decision.action is not Action.CONTINUE:
            reason = _REASONS[detection.reason]
            if decision.action in (Action.STOP, Action.BLOCK):
                self._stop(reason, detection.detector, detection.detail)
                return
            self._record(decision.action.value, reason, detection.detector, detection.detail)
            if decision.action is Action.NUDGE:
                self.nudge = decision.message


def _as_args(args: Any) -> Any:
    return args if isinstance(args, str | dict) or args is None else {"value": args}


def _as_text(result: Any) -> Any:
    return result if result is None or isinstance(result, str | list) else canonical_json(result)


def _default_step(task: Task, state_digest: str) -> Step:
    writes = canonical_json([[c, v] for c, v in task.writes])
    args = {"state": state_digest, "send": canonical_json(task.input) if task.kind == PUSH else None}
    return make_tool_step(task.name, args, writes, is_error=False)
