"""Running one task: call the node (retrying per its policy), then compute its writes.

Writers run in LangGraph's order: state updates, Command.goto, static edges, joins, conditional edges.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agent_runtime.constants import RESUME, TASKS
from agent_runtime.core.schema import StateSchema
from agent_runtime.core.types import END, START, Command, Send, Terminate
from agent_runtime.engine import context, events
from agent_runtime.engine.algo import Task
from agent_runtime.engine.callbacks import ambient, with_ambient
from agent_runtime.engine.error_handlers import handler_task
from agent_runtime.engine.events import task_finished
from agent_runtime.engine.retries import cancelled_by_node, retry_delay, wait_before_retry
from agent_runtime.engine.runtime import call_with_timeout
from agent_runtime.engine.spec import SyncPlacement
from agent_runtime.engine.subgraphs import run_subgraph
from agent_runtime.engine.timeouts import sync_timeout_unsupported
from agent_runtime.errors import (
    GraphDrained,
    GraphInterrupt,
    GuardStopped,
    InvalidUpdateError,
    NodeCancelledError,
    ParentCommand,
)

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

Writes = list[tuple[str, Any]]


def call_sync(
    scratch: context.TaskScratch, placement: SyncPlacement | None, fn: Callable[..., Any], args: tuple[Any, ...]
) -> Any:
    """Call a sync function with `scratch` as its context (also on a pool thread, which has none)."""
    token = context.enter(scratch)
    started = time.perf_counter()
    try:
        return fn(*args)
    finally:
        if placement is not None:
            placement.observe(time.perf_counter() - started)
        context.leave(token)


async def call_traced(run: RunView, task: Task, scratch: context.TaskScratch, arg: Any, inline: bool) -> Any:
    """Call a node as a child chain run of the run's callbacks, its code with the task's config as
    LangChain's ambient config (so the chat models and tools it calls report to the run's handlers)."""
    node = task.node
    callbacks = run.callbacks
    assert node is not None and node.fn is not None and callbacks is not None
    node_run, config = callbacks.task_started(run, task, run.shown_input(arg))
    scratch.config = config
    args = (arg, config) if node.takes_config else (arg,)
    try:
        if node.subgraph is not None:  # the subgraph's chain run is the first step of the node's
            with ambient(config):
                result = await run_subgraph(run, task, node.subgraph, arg)
        elif node.is_async:
            with ambient(config):
                result = await call_node(run, task, scratch, node.fn, args, inline)
        else:
            result = await call_node(run, task, scratch, with_ambient(config, node.fn), args, inline)
    except BaseException as exc:
        node_run.on_chain_error(exc)
        raise
    await callbacks.task_ended(task, node_run, result)
    return result


async def call_node(
    run: RunView, task: Task, scratch: context.TaskScratch, fn: Callable[..., Any], args: tuple[Any, ...], inline: bool
) -> Any:
    """One attempt of the node's function `fn` (its own, or wrapped): an async one on this loop under
    the task's timeout, a sync one inline or on the pool."""
    node = task.node
    assert node is not None
    timeout = task.timeout or node.timeout
    if node.is_async:
        token = context.enter(scratch)
        try:
            if timeout is None:
                return await fn(*args)
            config = scratch.config or run.node_config(task)  # the attempt observer's
            return await call_with_timeout(task.name, timeout, lambda: fn(*args), config)
        finally:
            context.leave(token)
    if timeout is not None:  # a Send's timeout to a sync node (add_node refuses one)
        raise sync_timeout_unsupported(task.name)
    if inline:
        return call_sync(scratch, node.placement, fn, args)
    work = asyncio.wrap_future(run.executor.submit(call_sync, scratch, node.placement, fn, args))
    if not run.owns_loop:
        return await work
    # A sync run (invoke, stream) lets a pooled task it handed to the pool finish, as LangGraph's executor
    # waits for its threads: a step that fails beside it keeps its writes however the threads interleave.
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if work.cancelled():  # the pool's own (shut down), not the step's
            raise
    current = asyncio.current_task()
    if current is not None:
        current.uncancel()
    return await work


async def execute(run: RunView, task: Task, inline: bool = False) -> context.TaskScratch:
    """Run `task` to completion (its writes are set) or to an interrupt (task.interrupts is set);
    commit the outcome at once. The hot path of every superstep: one coroutine and, per attempt, one
    call_node."""
    node = task.node
    assert node is not None
    attempts = 0
    while True:
        scratch = context.TaskScratch(task, run, node.is_async)
        try:
            try:
                arg = run.task_input(task)
                if node.fn is None:  # the hidden __start__ task maps the graph input
                    result = arg
                elif run.callbacks is not None:  # the node is a chain run of the graph's callbacks
                    result = await call_traced(run, task, scratch, arg, inline)
                elif node.subgraph is not None:
                    result = await run_subgraph(run, task, node.subgraph, arg)
                else:
                    args = (arg, run.node_config(task)) if node.takes_config else (arg,)
                    result = await call_node(run, task, scratch, node.fn, args, inline)
            except ParentCommand as exc:  # a graph this node ran addressed this node's graph
                result = exc.command
            except asyncio.CancelledError as exc:
                if not cancelled_by_node():
                    raise  # the runtime cancelled the task (the step failed, the reader stopped)
                raise NodeCancelledError(task.name) from exc
            if node.async_branches:
                writes = await node_writes_async(run, task, result)
            else:
                writes = node_writes(run, task, result)
            if scratch.writes:
                writes[:0] = scratch.writes
        except GraphInterrupt as exc:
            task.interrupts = exc.interrupts
            task.writes = [(RESUME, list(task.resume))] if task.resume else []
            run.commit(task)
            if run.modes:
                task_finished(run, task)
            return scratch
        except (ParentCommand, GraphDrained):
            raise  # this node's own Command(graph=PARENT), or a drained subgraph: no retry
        except GuardStopped:
            return scratch  # the guard ended the run at a task call: the run stops before the barrier
        except Exception as exc:
            attempts += 1
            delay = retry_delay(node.retry, exc, attempts)
            if delay is None:
                return await _failed(run, task, exc, inline)
            run.report.retries += 1
            await wait_before_retry(delay, node.is_async, run.executor)
            continue
        if task.resume:
            writes.append((RESUME, list(task.resume)))
        task.writes = writes
        task.done = True
        if run.node_finished is not None and not task.hidden:
            run.node_finished(task.name)
        run.commit(task)
        if run.modes:
            task_finished(run, task)
        return scratch


async def _failed(run: RunView, task: Task, error: Exception, inline: bool) -> context.TaskScratch:
    """A task that failed for good: saved as failed; its error handler, if it has one, runs now as a
    task of this step (the failed task writes nothing), otherwise the error fails the step."""
    task.error = error
    if run.modes:
        task_finished(run, task)
    handler = handler_task(run, task, error)
    if handler is not None:
        task.done = True
    run.commit(task)
    if handler is None:
        raise error
    run._tasks.append(handler)  # the step's task list: the barrier applies the handler's writes
    if run.task_events:
        events.tasks_started(run, [handler])
    return await execute(run, handler, inline=inline or handler.node.runs_inline())  # type: ignore[union-attr]


def state_updates(schema: StateSchema, result: Any, task: Task) -> tuple[Writes, list[str | Send]]:
    """(state writes, goto targets) of a node's return value."""
    if result is None:
        return [], []
    # (a root state's __start__ task returns its input as {ROOT: value}, as any graph input)
    if isinstance(result, dict) and (not schema.is_root or task.name == START):
        keys = schema.keys
        return [(k, v) for k, v in result.items() if k in keys], []
    if isinstance(result, Command):
        if result.graph == Command.PARENT:
            raise ParentCommand(replace(result, graph=None))
        writes, _ = _update_payload(schema, result.update, task)
        return writes, result.goto_targets()
    if isinstance(result, Terminate):
        task.terminate = result
        return _update_payload(schema, result.update, task)
    if isinstance(result, list | tuple) and any(isinstance(r, Command | Terminate) for r in result):
        writes, gotos = [], []
        for item in result:
            more_writes, more_gotos = state_updates(schema, item, task)
            writes.extend(more_writes)
            gotos.extend(more_gotos)
        return writes, gotos
    from_object = schema.updates_from_object(result)
    if from_object is not None:
        return from_object, []
    raise InvalidUpdateError(f"Expected dict, got {result!r} (returned by node '{task.name}')")


def _update_payload(schema: StateSchema, update: Any, task: Task) -> tuple[Writes, list[str | Send]]:
    if isinstance(update, list | tuple) and all(isinstance(u, tuple) and len(u) == 2 for u in update):
        return [(k, v) for k, v in update if k in schema.keys], []
    return state_updates(schema, update, task)


def route(run: RunView, source: str, results: Any, path_map: Mapping[Hashable, str] | None = None) -> Writes:
    """Trigger writes for goto / branch results: a name, a list of names, Sends, or a mix."""
    items = results if isinstance(results, list | tuple) else [results]
    writes: Writes = []
    for item in items:
        target: Any = item
        if path_map is not None and not isinstance(item, Send):
            if item not in path_map:
                raise ValueError(f"Conditional edge from '{source}' returned {item!r}, not a key of its path map")
            target = path_map[item]
        if target is None or target == START:
            raise ValueError(f"Conditional edge or goto from '{source}' returned {target!r}, not a node name")
        if isinstance(target, Send):
            if target.node == END:
                raise InvalidUpdateError(f"'{source}' sent a Send to END; send to a node")
            writes.append((TASKS, target))
        elif target != END:
            trigger = run.spec.branch_channels.get(target)
            if trigger is None:
                raise InvalidUpdateError(f"'{source}' routed to unknown node {target!r}")
            writes.append((trigger, None))
    return writes


def _base_writes(run: RunView, task: Task, result: Any) -> tuple[Writes, Writes]:
    """(all writes but the conditional edges', the state updates alone)."""
    node = task.node
    assert node is not None
    gotos: list[str | Send] = []
    if node.writer is not None:
        updates = node.writer(result)
    else:
        updates, gotos = state_updates(run.spec.schema, result, task)
    writes = list(updates)
    if gotos:
        writes.extend(route(run, task.name, gotos))
    writes.extend(node.static_writes)
    return writes, updates


def _finish_writes(run: RunView, writes: Writes) -> Writes:
    if run.grace:
        # the grace step may only finish: routing to further work is dropped
        return [(c, v) for c, v in writes if c in run.spec.schema.keys]
    return writes


def node_writes(run: RunView, task: Task, result: Any) -> Writes:
    writes, updates = _base_writes(run, task, result)
    for branch in task.node.branches:  # type: ignore[union-attr]
        state = run.local_state(updates, result, branch)
        out = branch.path(state, run.node_config(task)) if branch.takes_config else branch.path(state)
        writes.extend(route(run, task.name, out, branch.path_map))
    return _finish_writes(run, writes)


async def node_writes_async(run: RunView, task: Task, result: Any) -> Writes:
    """Same as `node_writes`, for nodes with at least one async path function."""
    writes, updates = _base_writes(run, task, result)
    for branch in task.node.branches:  # type: ignore[union-attr]
        state = run.local_state(updates, result, branch)
        out = branch.path(state, run.node_config(task)) if branch.takes_config else branch.path(state)
        if branch.is_async:
            out = await out
        writes.extend(route(run, task.name, out, branch.path_map))
    return _finish_writes(run, writes)
