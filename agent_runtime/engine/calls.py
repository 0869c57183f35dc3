"""Task calls (the functional API's `@task`): a call runs concurrently with the function that made it,
inside the caller's superstep, and its result is saved as a pending write of the step.

A call's id is its caller's task id plus the call's index in the caller's attempt, so when a step is
resumed (after an interrupt or a crash) and the caller re-runs from its first line, each call finds the
result it saved and returns it without running again; an interrupted or failed call runs again.
From an async caller a call is an asyncio task (sync functions go to the thread pool); from a sync
caller it is a job in the thread pool, with its own event loop there for the bookkeeping.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_runtime.constants import RESUME, RETURN
from agent_runtime.core.types import RetryPolicy
from agent_runtime.engine import context, events
from agent_runtime.engine.algo import PUSH, Task
from agent_runtime.engine.callbacks import ambient, chain_ended, with_ambient
from agent_runtime.engine.retries import retry_delay, wait_before_retry
from agent_runtime.engine.sync import run_sync
from agent_runtime.engine.task_status import restore_task
from agent_runtime.engine.tasks import call_sync
from agent_runtime.errors import GraphDrained, GraphInterrupt, GuardStopped

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

Future = concurrent.futures.Future[Any] | asyncio.Future[Any]


@dataclass(frozen=True, slots=True)
class CallSpec:
    """A function decorated with `@task`."""

    name: str
    fn: Callable[..., Any]
    retry: tuple[RetryPolicy, ...]
    is_async: bool


def start_call(spec: CallSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Future:
    """Start a task call from inside a running node or task; its future, already done when the call
    finished in an earlier attempt of this step."""
    caller = context.current()
    run = caller.run
    if spec.is_async and not caller.is_async:
        raise RuntimeError("In an sync context async tasks cannot be called")  # LangGraph's message
    index = caller.calls
    caller.calls += 1
    call = Task(spec.name, f"{caller.task.id}:call:{index}:{spec.name}", None, PUSH, index, (), (args, kwargs))
    saved = run.saved_writes.get(call.id)
    if saved:
        restore_task(call, saved)
    if run.task_events:
        events.call_started(run, call)
    if call.done:
        return _done(dict(call.writes).get(RETURN), caller.is_async)
    with run.lock:
        if run.guard is not None and run.guard.before_call():
            raise GuardStopped(run.report.message)
        run.calls.append(call)
    traced = caller.config  # the caller's config, when the run has callbacks: the call is its child run
    future: Future
    if caller.is_async:
        future = asyncio.ensure_future(_run_call(run, call, spec, in_pool=False, caller_config=traced))
    else:
        assert run.executor is not None
        future = run.executor.submit(_run_in_pool, run, call, spec, traced)
    caller.pending.append(future)
    return future


def _done(value: Any, is_async: bool) -> Future:
    future: Future = asyncio.get_running_loop().create_future() if is_async else concurrent.futures.Future()
    future.set_result(value)
    return future


def _run_in_pool(run: RunView, call: Task, spec: CallSpec, caller_config: dict[str, Any] | None) -> Any:
    # on the pool thread's reusable loop
    return run_sync(_run_call(run, call, spec, in_pool=True, caller_config=caller_config))


def _call_input(fn: Callable[..., Any], call: Task) -> Any:
    """What a tracer shows as a call's input (as LangGraph): its arguments by parameter name, with the
    defaults, `**kwargs` flattened, without `self` / `cls`."""
    args, kwargs = call.input
    try:
        signature = inspect.signature(fn)
        bound = signature.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):  # no signature, or arguments it refuses (the call fails as it runs)
        return {**dict(enumerate(args)), **kwargs}
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.pop("self", None)
    arguments.pop("cls", None)
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and name in arguments:
            arguments.update(arguments.pop(name))
    return arguments


async def _invoke_traced(
    scratch: context.TaskScratch, spec: CallSpec, call: Task, in_pool: bool, caller_config: dict[str, Any]
) -> Any:
    """`_invoke` as a child chain run of the caller's (engine/callbacks.py)."""
    assert scratch.run.callbacks is not None
    call_run, scratch.config = scratch.run.callbacks.call_started(caller_config, call, _call_input(spec.fn, call))
    try:
        with ambient(scratch.config):
            result = await _invoke(scratch, spec, call, in_pool)
    except BaseException as exc:
        call_run.on_chain_error(exc)
        raise
    chain_ended(call_run, result)
    return result


async def _invoke(scratch: context.TaskScratch, spec: CallSpec, call: Task, in_pool: bool) -> Any:
    args, kwargs = call.input
    if spec.is_async:
        token = context.enter(scratch)
        try:
            return await call_settled_async(scratch, spec.fn, *args, **kwargs)
        finally:
            context.leave(token)
    # a traced call's config is the ambient config of a pool thread too
    settle = call_settled if scratch.config is None else with_ambient(scratch.config, call_settled)
    fn = functools.partial(settle, scratch, spec.fn, *args, **kwargs)
    if in_pool:  # already on a pool thread, called by a sync function that waits for it
        return call_sync(scratch, None, fn, ())
    assert scratch.run.executor is not None
    return await asyncio.get_running_loop().run_in_executor(scratch.run.executor, call_sync, scratch, None, fn, ())


def call_settled(scratch: context.TaskScratch, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a sync function, then wait (on its thread) for the task calls it did not wait for: they
    belong to its step, as in LangGraph, and must have saved their outcome (an interrupt too) before
    the step ends, also when the function raised. Their failures reach it through the futures only."""
    try:
        return fn(*args, **kwargs)
    finally:
        if scratch.pending:
            concurrent.futures.wait(scratch.pending)


async def call_settled_async(
    scratch: context.TaskScratch, fn: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any
) -> Any:
    """`call_settled` for an async function."""
    try:
        return await fn(*args, **kwargs)
    finally:
        running = [f for f in scratch.pending if not f.done()]
        if running:  # (not awaiting done ones: the node's end is not put behind the events of its calls)
            await asyncio.gather(*running, return_exceptions=True)


async def _run_call(
    run: RunView, call: Task, spec: CallSpec, in_pool: bool, caller_config: dict[str, Any] | None = None
) -> Any:
    """Run a call to completion (retrying per its policy), saving its outcome as the step's
    pending write; an interrupt or a failure is saved too and raised to the caller's future."""
    attempts = 0
    while True:
        scratch = context.TaskScratch(call, run, spec.is_async)
        try:
            if caller_config is None:
                result = await _invoke(scratch, spec, call, in_pool)
            else:
                result = await _invoke_traced(scratch, spec, call, in_pool, caller_config)
        except GraphInterrupt as exc:
            call.interrupts = exc.interrupts
            call.writes = [(RESUME, list(call.resume))] if call.resume else []
            _commit(run, call)
            raise
        except (GuardStopped, GraphDrained):
            raise  # the guard's stop, or a drained graph the call ran: not a failure, no retry, nothing saved
        except Exception as exc:
            attempts += 1
            delay = retry_delay(spec.retry, exc, attempts)
            if delay is None:
                call.error = exc
                _commit(run, call)
                if run.task_events:
                    events.call_finished(run, call, None)
                raise
            run.report.retries += 1
            await wait_before_retry(delay, spec.is_async, None if in_pool else run.executor)
            continue
        call.writes = [(RETURN, result), *([(RESUME, list(call.resume))] if call.resume else [])]
        call.done = True
        _commit(run, call)
        if run.task_events:
            events.call_finished(run, call, result)
        with run.lock:
            run._emit("updates", {call.name: result})
            if run.guard is not None:
                run.guard.after_call(call, scratch, result)
        if run.waker is not None:  # the update goes out now, not when the caller's step ends
            run.waker.wake()
        return result


def _commit(run: RunView, call: Task) -> None:
    with run.lock:
        run.commit(call)
