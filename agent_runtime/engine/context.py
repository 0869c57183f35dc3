"""Per-task context reachable from inside a node: interrupt(), usage reporting, the guard's view."""

from __future__ import annotations

import hashlib
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.constants import INTERRUPT
from agent_runtime.core.types import Interrupt
from agent_runtime.engine.algo import Task
from agent_runtime.engine.node_usage import StepAction
from agent_runtime.errors import GraphInterrupt, mark_invalid_resume

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView


class TaskScratch:
    """What a running node can reach through `interrupt()`, `report_usage()`, `record_action()`."""

    __slots__ = (
        "actions",
        "calls",
        "config",
        "cost",
        "counter",
        "grace",
        "guard",
        "is_async",
        "pending",
        "resume",
        "run",
        "subgraph_calls",
        "task",
        "tokens",
        "writes",
    )

    def __init__(self, task: Task, run: RunView, is_async: bool) -> None:
        self.task = task
        self.run = run
        self.guard = run.guard  # the run's GuardSession, or None
        self.resume = run.resume_source
        self.grace = run.grace
        # functional API: task calls from an async function are asyncio tasks, from a sync one pool jobs
        self.is_async = is_async
        self.counter = 0  # interrupt() calls so far in this attempt
        self.calls = 0  # task calls so far in this attempt (their index makes their ids)
        self.subgraph_calls = 0  # graphs invoked so far in this attempt (the 2nd one's namespace ends in |1)
        self.pending: list[Any] = []  # futures of the task calls started in this attempt
        self.tokens = 0
        self.cost = 0.0
        self.actions: list[StepAction] = []
        self.config: dict[str, Any] | None = None  # the node's config, when the run has callbacks
        self.writes: list[tuple[str, Any]] | None = None  # made while it ran (push_message), before its update's


_CURRENT: ContextVar[TaskScratch | None] = ContextVar("agent_runtime_task", default=None)


def current() -> TaskScratch:
    scratch = _CURRENT.get()
    if scratch is None:
        raise RuntimeError("This function can only be called from inside a graph node")
    return scratch


def running() -> TaskScratch | None:
    """The task whose code is running here (a graph invoked inside a node runs as its subgraph)."""
    return _CURRENT.get()


def enter(scratch: TaskScratch) -> Any:
    return _CURRENT.set(scratch)


def leave(token: Any) -> None:
    _CURRENT.reset(token)


def interrupt_id(task_id: str, index: int) -> str:
    return hashlib.sha1(f"{task_id}|{index}".encode(), usedforsecurity=False).hexdigest()[:32]


def interrupt(value: Any, *, response_schema: type[Any] | dict[str, Any] | None = None) -> Any:
    """Pause the run and surface `value`; after `invoke(Command(resume=v), cfg)` this returns `v`.

    The node re-runs from its first line on resume, so code before `interrupt()` runs again. Without a
    checkpointer the run still pauses and returns `__interrupt__` (as LangGraph does), but cannot resume.
    `response_schema` (as LangGraph): a type (pydantic model, TypedDict, dataclass, ...) validates and
    converts the resume value (an invalid one raises pydantic's ValidationError, the interrupt stays
    pending) and reaches the Interrupt as JSON schema; a dict is passed on as is, unchecked.
    """
    adapter = None
    if response_schema is not None and not isinstance(response_schema, dict):
        from pydantic import TypeAdapter

        adapter = TypeAdapter(response_schema)
    scratch = current()
    index = scratch.counter
    scratch.counter += 1
    task = scratch.task
    if index < len(task.resume):
        return _validate_resume(adapter, task.resume[index])
    # keyed by how many answers the task has (as LangGraph): parallel calls in one task ask in any order
    iid = interrupt_id(task.id, len(task.resume))
    source = scratch.resume
    asked = _asked_ids(scratch) if source.by_id else ()
    if iid in source.by_id:
        answer = source.by_id.pop(iid)
    elif any(i in source.by_id for i in asked):  # an answer to the question the task saved it asked
        answer = source.by_id.pop(next(i for i in asked if i in source.by_id))
    elif source.value is not MISSING:
        answer, source.value = source.value, MISSING
    else:
        schema = adapter.json_schema() if adapter is not None else response_schema
        raise GraphInterrupt((Interrupt(value, iid, response_schema=schema),))
    validated = _validate_resume(adapter, answer)
    task.resume.append(answer)
    return validated


def _asked_ids(scratch: TaskScratch) -> list[str]:
    """The ids of the interrupts the running task saved it asked (its INTERRUPT record)."""
    saved = scratch.run.saved_writes.get(scratch.task.id, ())
    return [i.id for chan, value in saved if chan == INTERRUPT for i in value]


def _validate_resume(adapter: Any, answer: Any) -> Any:
    if adapter is None:
        return answer
    try:
        return adapter.validate_python(answer)
    except Exception as exc:
        mark_invalid_resume(exc)
        raise


def report_usage(tokens: int = 0, cost: float = 0.0) -> None:
    """Count LLM usage of the current node against the run's token / cost budget."""
    scratch = current()
    scratch.tokens += tokens
    scratch.cost += cost


def record_action(tool: str, args: Any, result: Any, *, error: bool = False, text: str | None = None) -> None:
    """Report a tool call (or other action) and its result for loop detection at the barrier."""
    current().actions.append(StepAction(tool, args, result, error, text))


def pending_nudge() -> str | None:
    """The guard's nudge for the model (a possible loop was detected), once; None otherwise.
    An agent node appends it to the conversation before its next LLM call."""
    scratch = current()
    return None if scratch.guard is None else scratch.guard.take_nudge()


def in_grace_step() -> bool:
    """True while the run is in its single grace step: the node may only finish (routing is dropped)."""
    scratch = _CURRENT.get()
    return scratch is not None and scratch.grace
