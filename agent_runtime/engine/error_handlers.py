"""Node error handlers (`add_node(..., error_handler=fn)`, `set_node_defaults(error_handler=fn)`), as
LangGraph runs them: once a node's retries are spent, its error is saved (marked as handled) and its
handler runs at once, in the same superstep, on the failed task's input, with a `NodeError` in a
parameter `error`. The failed task writes nothing (its edges do not fire); the handler's update and
`Command(goto=...)` go to the barrier with the step's other writes. A handler that fails fails the run.
A resume after such a crash does not run the failed node again: its handler runs again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_runtime.constants import PUSH_TRIGGER
from agent_runtime.engine.algo import PUSH, Task
from agent_runtime.errors import NodeError

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

CONFIG_KEY_NODE_ERROR = "__pregel_node_error"  # LangGraph's key: the NodeError in a handler's config


class HandlerTask(Task):
    """The run of a failed task's error handler."""

    __slots__ = ("failed", "node_error")

    failed: Task
    node_error: NodeError


def handler_task(run: RunView, failed: Task, error: BaseException) -> HandlerTask | None:
    """The handler task of `failed`; None when its node has no handler (a handler has none)."""
    name = run.spec.error_handlers.get(failed.name)
    if name is None:
        return None
    node = run.spec.nodes[name]
    handler = HandlerTask(
        name, f"{failed.id}:error_handler", node, PUSH, failed.index, (PUSH_TRIGGER,), run.task_input(failed)
    )
    handler.failed = failed
    handler.node_error = NodeError(failed.name, error)
    return handler


def in_barrier_order(tasks: list[Task]) -> list[Task]:
    """Tasks in barrier order (`sort_tasks`'), with each handler's writes right after where its failed
    task's would have been (as LangGraph, whose handler task's path extends the failed task's)."""
    handlers = {t.failed.id: t for t in tasks if type(t) is HandlerTask}
    if not handlers:
        return tasks
    ordered: list[Task] = []
    for task in tasks:
        if type(task) is not HandlerTask:
            ordered.append(task)
            if task.id in handlers:
                ordered.append(handlers[task.id])
    return ordered


def handler_config(task: Task, config: dict[str, Any]) -> dict[str, Any]:
    """A node's config, with the NodeError when the task is an error handler's."""
    if type(task) is HandlerTask:
        config["configurable"][CONFIG_KEY_NODE_ERROR] = task.node_error
    return config
