"""Running the tasks of a superstep concurrently on the run's event loop. When the run streams
per-task events, the caller is woken as each task finishes (and, with `subgraphs=True`, as a subgraph's
event arrives), so its events go out at once and a consumer that stops early cancels the tasks still
running. A graph's `step_timeout` (seconds) fails a step whose tasks have not all finished by then
with TimeoutError, cancelling them."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from agent_runtime.engine.tasks import execute
from agent_runtime.errors import is_invalid_resume

if TYPE_CHECKING:
    from agent_runtime.engine.algo import Task
    from agent_runtime.engine.context import TaskScratch
    from agent_runtime.engine.run_view import RunView

PER_TASK_MODES = frozenset({"updates", "debug", "tasks"})


class StepRun:
    """The unfinished tasks of one superstep: `advance()` until `finished`, then `close()`."""

    def __init__(self, run: RunView, tasks: list[Task]) -> None:
        self.run = run
        self.tasks = tasks
        self.todo = [t for t in tasks if not t.done]
        self.scratches: list[TaskScratch] = []
        self.finished = not self.todo
        step_timeout = run.graph.step_timeout
        # the step's tasks must all finish by then (the time a reader takes over the step's events counts)
        self.deadline = None if step_timeout is None else time.monotonic() + step_timeout
        self.streams = (
            run.waker is not None
            or self.deadline is not None
            or (len(self.todo) > 1 and not PER_TASK_MODES.isdisjoint(run.modes))
        )
        self._futures: set[asyncio.Future[TaskScratch]] = set()
        self._deferred: BaseException | None = None  # an invalid resume value's error, see `_collect`
        limit = run.config.get("max_concurrency")  # LangChain's config key: tasks running at once
        self._slots = asyncio.Semaphore(limit) if limit else None

    async def _limited(self, task: Task, inline: bool = False) -> TaskScratch:
        if self._slots is None:
            return await execute(self.run, task, inline=inline)
        async with self._slots:
            return await execute(self.run, task, inline=inline)

    async def advance(self) -> None:
        """Run until at least one more task finished (all of them, when nothing streams per task)."""
        if not self.streams:
            self.scratches = await self._all()
            self.finished = True
            return
        if not self._futures:  # the first call: start every task
            self._futures = {asyncio.ensure_future(self._execute(t)) for t in self.todo}
        waker = self.run.waker
        timeout = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        if waker is None:
            done, self._futures = await asyncio.wait(
                self._futures, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            woke = bool(done)
        elif self.run.events:  # written since the last wait (a wake then had no future to set)
            return
        else:  # a subgraph's event, a custom write, a task call's update also end the wait
            woken = waker.arm()
            waiting: set[asyncio.Future[Any]] = {*self._futures, woken}
            done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            waker.future = None
            woke = bool(done)
            done.discard(woken)
            self._futures -= done
        if not woke:  # the step timeout passed: `close()` cancels what still runs
            raise TimeoutError("Timed out")
        for future in done:
            self._collect(future)  # a failed task raises here
        self.finished = not self._futures
        if self.finished and self._deferred is not None:
            raise self._deferred

    def _collect(self, future: asyncio.Future[TaskScratch]) -> None:
        """A finished task's scratch; its error is raised, but an invalid resume value (as LangGraph)
        only once the step's other tasks finished, so a task answered in the same resume is not cut
        off after its side effects (to run them again with its saved answer)."""
        exc = None if future.cancelled() else future.exception()
        if exc is not None and is_invalid_resume(exc):
            self._deferred = self._deferred or exc
            return
        self.scratches.append(future.result())

    async def close(self) -> None:
        """Cancel the tasks still running (the step failed, or the consumer stopped reading)."""
        futures, self._futures = self._futures, set()
        for future in futures:
            future.cancel()
        if futures:
            await asyncio.gather(*futures, return_exceptions=True)

    async def _execute(self, task: Task) -> TaskScratch:
        return await self._limited(task, inline=task.node.runs_inline())  # type: ignore[union-attr]

    async def _all(self) -> list[TaskScratch]:
        run, todo = self.run, self.todo
        if len(todo) == 1:
            # a lone task's writes are saved apart too (as LangGraph's): the step's history shows them
            inline = run.owns_loop or todo[0].node.runs_inline()  # type: ignore[union-attr]
            return [await execute(run, todo[0], inline=inline)]
        inline = [t.node.runs_inline() for t in todo]  # type: ignore[union-attr]
        # pooled and async tasks start first, so they progress while the inline ones run
        futures = [asyncio.ensure_future(self._limited(t)) for t, here in zip(todo, inline, strict=True) if not here]
        self._futures = set(futures)  # for `close()`, should an inline task fail
        for t, here in zip(todo, inline, strict=True):
            if here:
                try:
                    self.scratches.append(await self._limited(t, inline=True))
                except Exception as exc:
                    if not is_invalid_resume(exc):
                        raise
                    self._deferred = self._deferred or exc
        pending = set(futures)
        while pending:  # the first failure ends the step (but see `_collect`)
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            for future in done:
                error = None if future.cancelled() else future.exception()
                if error is not None and not is_invalid_resume(error):
                    raise error
        for future in futures:
            self._collect(future)
        self._futures = set()
        if self._deferred is not None:
            raise self._deferred
        return self.scratches
