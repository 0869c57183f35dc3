"""Embedder: offline model, micro-batching of concurrent requests, timeout."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from gateway.semantic.embedder import Embedder, EmbeddingOverloaded, EmbeddingTimeout

PROMPTS = [f"How do I fix error number {i} in my build?" for i in range(12)]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    model = Embedder(batch_window=0.005)
    model.load()
    return model


def test_embed_many_returns_unit_float32(embedder: Embedder) -> None:
    vectors = embedder.embed_many(["hello world", "the capital of France"])
    assert vectors.shape == (2, embedder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_concurrent_embeds_are_batched_and_match_one_by_one(embedder: Embedder) -> None:
    one_by_one = [await embedder.embed(p) for p in PROMPTS]
    calls = embedder.model_calls
    together = await asyncio.gather(*(embedder.embed(p) for p in PROMPTS))
    batched_calls = embedder.model_calls - calls
    assert batched_calls < len(PROMPTS) // 2
    for a, b in zip(one_by_one, together, strict=True):
        assert np.allclose(a, b, atol=1e-5)


async def test_timeout_raises_embedding_timeout(embedder: Embedder) -> None:
    # Occupy the single worker thread so the request cannot start in time.
    loop = asyncio.get_running_loop()
    busy = loop.run_in_executor(embedder._executor, time.sleep, 0.3)
    with pytest.raises(EmbeddingTimeout):
        await embedder.embed("anything", timeout=0.05)
    await busy
    # The embedder keeps working afterwards.
    vector = await embedder.embed("anything")
    assert vector.shape == (embedder.dimension,)


async def test_an_embedder_past_its_cpu_share_refuses_at_once() -> None:
    """Its share of the last 10 s: a tiny one is used up by one embed, and the next is refused without
    queueing (the semantic tier then sits the request out)."""
    frugal = Embedder(cpu_share=1e-4)
    frugal.load()
    await frugal.embed("the first one runs")
    assert frugal.busy_share() > 1e-4
    started = time.perf_counter()
    with pytest.raises(EmbeddingOverloaded):
        await frugal.embed("the second is refused")
    assert time.perf_counter() - started < 0.25  # a queued embed would wait seconds for its share
    await frugal.aclose()


async def test_waiting_for_the_worker_thread_does_not_count_against_the_share() -> None:
    """The model's load or a warm-up occupying the thread is not encoding: a request that waited behind
    it must leave the embedder under a small share."""
    patient = Embedder(cpu_share=0.02)  # 0.2 s of encoding per 10 s
    patient.load()
    busy = asyncio.get_running_loop().run_in_executor(patient._executor, time.sleep, 0.5)
    await patient.embed("waits half a second for the thread")
    await busy
    assert patient.busy_share() < 0.02
    await patient.embed("is not refused")
    await patient.aclose()
