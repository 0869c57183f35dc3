"""A run as the engine's helpers see it: the members of engine/loop.py's Run that the modules the loop
calls (tasks, events, start, resume, subgraphs, runtime, ...) read and set. They take this view, not
the Run, so none of them imports the loop that imports them (tests/runtime/test_layers.py); the Run
satisfies it structurally, which mypy checks where the loop passes itself. Annotations only: nothing
checks it at run time."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Protocol

from agent_runtime.engine.callbacks import TracedRun
from agent_runtime.engine.guard_rails import GuardedRun
from agent_runtime.engine.subgraph_run import SubgraphRun

if TYPE_CHECKING:
    from agent_runtime.checkpoint.base import BaseCheckpointer, CheckpointTuple
    from agent_runtime.engine.algo import ChannelState, Task
    from agent_runtime.engine.callbacks import RunCallbacks
    from agent_runtime.engine.control import RunControl
    from agent_runtime.engine.guard_rails import GuardSession
    from agent_runtime.engine.resume_source import ResumeSource
    from agent_runtime.engine.spec import Branch, EngineGraph, GraphSpec
    from agent_runtime.engine.stream_event import Event
    from agent_runtime.engine.waker import Waker


class RunView(SubgraphRun, TracedRun, GuardedRun, Protocol):
    """engine/loop.py's Run, as the engine's helpers use it (with what its parent run, its callbacks
    and its guard session see of it)."""

    # the graph and how the run was asked for
    graph: EngineGraph[Any]
    spec: GraphSpec
    config: dict[str, Any]
    recursion_limit: int
    durability: str
    executor: Executor
    node_finished: Any  # LangGraph's test hook: called with each node's name as it finishes

    # the state and the superstep running
    state: ChannelState
    updated: set[str] | None
    _tasks: list[Task]
    _view: dict[str, Any] | None

    # checkpoints
    checkpointer: BaseCheckpointer | None
    checkpointing: bool
    thread_id: str
    saved_writes: dict[str, list[tuple[str, Any]]]
    _pending_writes: list[tuple[str, str, Any]]
    _loaded: CheckpointTuple | None

    # the stream
    events: list[Event]
    events_lock: threading.Lock
    waker: Waker | None
    task_events: bool
    checkpoint_events: bool

    # what steers the run: resume values, a caller's drain, callbacks, the guard, the event loop
    resume_source: ResumeSource
    control: RunControl | None
    callbacks: RunCallbacks | None
    guard: GuardSession | None
    owns_loop: bool

    # the functional API's task calls of the current step, and the lock of their bookkeeping
    calls: list[Task]
    lock: threading.Lock

    @property
    def result_keys(self) -> frozenset[str]: ...

    def task_input(self, task: Task) -> Any: ...

    def shown_input(self, task_input: Any) -> Any: ...

    def local_state(self, own: Sequence[tuple[str, Any]], result: Any, branch: Branch) -> Any: ...

    def task_update(self, task: Task, keys: frozenset[str]) -> Any: ...

    def input_writes(self, value: Any) -> list[tuple[str, Any]]: ...

    def _emit(self, mode: str, payload: Any) -> None: ...

    def _debug(self, kind: str, payload: Any) -> None: ...

    def commit(self, task: Task, force: bool = False) -> None: ...

    def save_branch_point(self, source: str) -> None: ...

    def _save(self, source: str) -> None: ...
