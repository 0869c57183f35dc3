"""Running one prepared task outside the engine's loop, as LangGraph's executor does
(`run_with_retry` / `arun_with_retry` over a `PregelExecutableTask`, e.g. in a distributed worker):
the task's `proc` (anything with `invoke` / `ainvoke` / `astream`) gets the task's config, in which the
task protocol's keys (agent_runtime/core/protocol.py) reach its run, and its Runtime carries the attempt's
ExecutionInfo. Retries, timeouts and the attempt observer follow the engine's rules (retries.py,
timeouts.py, attempt_events.py). A `Command` raised to this task's graph is handed to its writers; one
for the parent graph leaves with the parent's namespace."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from agent_runtime.constants import CONF, CONFIG_KEY_CHECKPOINT_NS, RETURN
from agent_runtime.core.protocol import (
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_SEND,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_TASK_ID,
    CONFIG_KEY_THREAD_ID,
    NS_END,
    NS_SEP,
)
from agent_runtime.core.types import Command, RetryPolicy, TimeoutPolicy
from agent_runtime.engine.attempt_events import (
    AttemptContext,
    Observer,
    finish_attempt,
    observer_of,
    progress_reporter,
    start_attempt,
)
from agent_runtime.engine.retries import cancelled_by_node, retry_delay
from agent_runtime.engine.runtime import CONFIG_KEY_RUNTIME, ExecutionInfo, Runtime
from agent_runtime.engine.timeouts import TimedAttemptScope, new_scope, run_timed, sync_timeout_unsupported
from agent_runtime.errors import GraphBubbleUp, NodeCancelledError, ParentCommand


@dataclass(frozen=True)
class ExecutableTask:
    """A task ready to run (LangGraph's PregelExecutableTask): `proc` runs on `input` with `config`;
    its writes collect in `writes` (through the config's send)."""

    name: str
    input: Any
    proc: Any
    writes: deque[tuple[str, Any]]
    config: dict[str, Any]
    triggers: Sequence[str]
    retry_policy: Sequence[RetryPolicy]
    cache_key: Any
    id: str
    path: tuple[Any, ...]
    writers: Sequence[Any] = ()
    subgraphs: Sequence[Any] = ()
    timeout: TimeoutPolicy | None = None


def patch_configurable(config: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    return {**config, CONF: {**config.get(CONF, {}), **patch}}


def ensure_execution_info(runtime: Runtime[Any], config: Mapping[str, Any], task: Any) -> Runtime[Any]:
    """`runtime` with an ExecutionInfo, from the config's keys when it has none (a task prepared
    elsewhere and handed to this process)."""
    if runtime.execution_info is not None:
        return runtime
    configurable = config.get(CONF, {})
    run_id = config.get("run_id")
    return runtime.override(
        execution_info=ExecutionInfo(
            checkpoint_id=configurable.get(CONFIG_KEY_CHECKPOINT_ID) or "",
            checkpoint_ns=configurable.get(CONFIG_KEY_CHECKPOINT_NS) or "",
            task_id=configurable.get(CONFIG_KEY_TASK_ID) or task.id,
            thread_id=configurable.get(CONFIG_KEY_THREAD_ID),
            run_id=str(run_id) if run_id else None,
        )
    )


def parent_namespace(ns: str) -> str:
    """The checkpoint namespace of the graph above the one `ns` names. Numeric levels (which tell
    concurrent tasks apart) are not levels of their own: they go with their neighbours."""
    parts = ns.split(NS_SEP)
    while parts and parts[-1].isdigit():
        parts.pop()
    if parts:
        parts.pop()
    while parts and parts[-1].isdigit():
        parts.pop()
    return NS_SEP.join(parts)


def _without_task_ids(ns: str) -> str:
    return NS_SEP.join(part.split(NS_END)[0] for part in ns.split(NS_SEP) if not part.isdigit())


class _Attempts:
    """The config of each attempt of one task: its Runtime's ExecutionInfo numbers the attempt."""

    def __init__(self, task: ExecutableTask, configurable: Mapping[str, Any] | None) -> None:
        self.task = task
        self.policies = task.retry_policy
        config = task.config if configurable is None else patch_configurable(task.config, configurable)
        runtime = config.get(CONF, {}).get(CONFIG_KEY_RUNTIME)
        if isinstance(runtime, Runtime):
            runtime = ensure_execution_info(runtime, config, task).patch_execution_info(
                node_first_attempt_time=time.time()
            )
            config = patch_configurable(config, {CONFIG_KEY_RUNTIME: runtime})
        self.config = config
        self.failures = 0

    def next_config(self) -> dict[str, Any]:
        runtime = self.config.get(CONF, {}).get(CONFIG_KEY_RUNTIME)
        if isinstance(runtime, Runtime):
            attempt = runtime.patch_execution_info(node_attempt=self.failures + 1)
            self.config = patch_configurable(self.config, {CONFIG_KEY_RUNTIME: attempt})
        self.task.writes.clear()  # what a failed attempt wrote is dropped
        return self.config

    def parent_command(self, exc: ParentCommand, config: Mapping[str, Any]) -> bool:
        """True when the Command is for this task's graph (its writers took it); otherwise it is
        readdressed to the parent's namespace when meant for the parent, and goes on up."""
        ns: str = config[CONF][CONFIG_KEY_CHECKPOINT_NS]
        command: Command[Any] = exc.args[0]
        if command.graph in (ns, _without_task_ids(ns), self.task.name):
            for writer in self.task.writers:
                writer.invoke(command, config)
            return True
        if command.graph == Command.PARENT:
            exc.args = (replace(command, graph=parent_namespace(ns)),)
        return False

    def delay(self, exc: Exception, retry_policy: Sequence[RetryPolicy] | None) -> float | None:
        """Seconds before the next attempt, None: the error fails the task."""
        self.failures += 1
        return retry_delay(self.policies or retry_policy or (), exc, self.failures)


def run_with_retry(
    task: ExecutableTask, retry_policy: Sequence[RetryPolicy] | None, configurable: dict[str, Any] | None = None
) -> Any:
    """Run a sync task (its `proc.invoke`), retrying per its policy (or `retry_policy`)."""
    if task.timeout is not None:
        raise sync_timeout_unsupported(task.name)
    attempts = _Attempts(task, configurable)
    while True:
        config = attempts.next_config()
        try:
            return task.proc.invoke(task.input, config)
        except ParentCommand as exc:
            if attempts.parent_command(exc, config):
                return None
            raise
        except GraphBubbleUp:
            raise
        except asyncio.CancelledError as exc:  # a sync node has no asyncio task: its own code raised it
            raise NodeCancelledError(task.name) from exc
        except Exception as exc:
            delay = attempts.delay(exc, retry_policy)
            if delay is None:
                raise
            time.sleep(delay)


async def arun_with_retry(
    task: ExecutableTask,
    retry_policy: Sequence[RetryPolicy] | None,
    stream: bool = False,
    configurable: dict[str, Any] | None = None,
) -> Any:
    """Run a task (its `proc.ainvoke`, or its `proc.astream` drained with `stream=True`), retrying per
    its policy (or `retry_policy`), each attempt under its TimeoutPolicy."""
    attempts = _Attempts(task, configurable)
    while True:
        config = attempts.next_config()
        observer = observer_of(config) if task.timeout is not None else None
        context = _started(observer, task, config)
        try:
            if task.timeout is None:
                result = await _attempt(task, config, stream)
            else:
                result = await _timed_attempt(task, config, task.timeout, stream, observer, context)
        except ParentCommand as exc:
            try:
                handled = attempts.parent_command(exc, config)
            except Exception as writer_error:
                _finished(observer, context, writer_error)
                raise
            _finished(observer, context)
            if handled:
                return None
            raise
        except GraphBubbleUp:
            _finished(observer, context)
            raise
        except asyncio.CancelledError as exc:
            _finished(observer, context, exc)
            if cancelled_by_node():
                raise NodeCancelledError(task.name) from exc
            raise
        except Exception as exc:
            _finished(observer, context, exc)  # before any recovery: see attempt_events.py
            delay = attempts.delay(exc, retry_policy)
            if delay is None:
                raise
            await asyncio.sleep(delay)
            continue
        _finished(observer, context)
        return result


def _started(observer: Observer | None, task: ExecutableTask, config: Mapping[str, Any]) -> AttemptContext | None:
    if observer is None:
        return None
    assert task.timeout is not None
    runtime = config.get(CONF, {}).get(CONFIG_KEY_RUNTIME)
    info = runtime.execution_info if isinstance(runtime, Runtime) else None
    return start_attempt(observer, task.id, task.name, info, task.timeout)


def _finished(observer: Observer | None, context: AttemptContext | None, error: BaseException | None = None) -> None:
    if observer is not None and context is not None:
        finish_attempt(observer, context, error)


async def _attempt(
    task: ExecutableTask, config: dict[str, Any], stream: bool, scope: TimedAttemptScope | None = None
) -> Any:
    if not stream:
        return await task.proc.ainvoke(task.input, config)
    async for _ in task.proc.astream(task.input, config):
        if scope is not None:
            scope.progress("auto")  # a yielded chunk is progress
    # a drained stream returns nothing: a task call's caller needs the value the task wrote
    return next((value for channel, value in task.writes if channel == RETURN), None)


async def _timed_attempt(
    task: ExecutableTask,
    config: dict[str, Any],
    policy: TimeoutPolicy,
    stream: bool,
    observer: Observer | None,
    context: AttemptContext | None,
) -> Any:
    on_progress = progress_reporter(observer, context) if observer is not None and context is not None else None
    scope = new_scope(policy, on_progress)
    scoped = guarded_config(scope, config)
    return await run_timed(task.name, policy, scope, lambda: _attempt(task, scoped, stream, scope), task.writes.clear)


def guarded_config(scope: TimedAttemptScope, config: dict[str, Any]) -> dict[str, Any]:
    """`config` with the task protocol's functions going through the attempt's scope, its Runtime's
    heartbeat and stream writer too, and (refresh_on="auto") a callback handler counting LangChain
    events as progress."""
    configurable = config.get(CONF, {})
    patch: dict[str, Any] = {}
    if (send := configurable.get(CONFIG_KEY_SEND)) is not None:
        patch[CONFIG_KEY_SEND] = scope._guard_send(send)
    if (stream := configurable.get(CONFIG_KEY_STREAM)) is not None:
        patch[CONFIG_KEY_STREAM] = scope._guard_stream(stream)
    if (call := configurable.get(CONFIG_KEY_CALL)) is not None:
        patch[CONFIG_KEY_CALL] = scope._guard_call(call)
    runtime = configurable.get(CONFIG_KEY_RUNTIME)
    if isinstance(runtime, Runtime):
        writer = scope._guard_stream_writer(runtime.stream_writer)
        patch[CONFIG_KEY_RUNTIME] = (
            runtime.override(stream_writer=writer, heartbeat=scope.touch)
            if scope.refresh_on is not None
            else runtime.override(stream_writer=writer)
        )
    scoped = patch_configurable(config, patch) if patch else dict(config)
    if scope.refresh_on == "auto":
        scoped["callbacks"] = [*(config.get("callbacks") or ()), _idle_progress_handler()(scope)]
    return scoped


@cache
def _idle_progress_handler() -> Callable[[TimedAttemptScope], Any]:
    """LangChain's callback handler class counting any callback event of the attempt as progress
    (langchain-core is imported only when a timed attempt has callbacks to count)."""
    import weakref

    from langchain_core.callbacks import BaseCallbackHandler

    class IdleProgressHandler(BaseCallbackHandler):
        run_inline = True  # progress in event order

        def __init__(self, scope: TimedAttemptScope) -> None:
            self._scope = weakref.ref(scope)  # a child run manager outliving the attempt keeps nothing

        def _touch(self, *args: Any, **kwargs: Any) -> None:
            scope = self._scope()
            if scope is not None:
                scope.touch()

        on_llm_start = on_chat_model_start = on_llm_new_token = on_llm_end = on_llm_error = _touch
        on_chain_start = on_chain_end = on_chain_error = _touch
        on_tool_start = on_tool_end = on_tool_error = _touch
        on_retriever_start = on_retriever_end = on_retriever_error = _touch
        on_agent_action = on_agent_finish = on_text = on_retry = on_custom_event = _touch

    return IdleProgressHandler
