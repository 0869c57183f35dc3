"""Semantic response cache parts: embedder, in-process vector index and the candidate verifier.

``DEFAULT_SIMILARITY_THRESHOLD`` is the cosine (all-MiniLM-L6-v2) at or above which the stage may serve
a candidate, always together with ``verify``. ``python -m bench.semantic_quality`` picks 0.96 on its
choose half (wrong answers <= 1% on every must-miss set: PAWS, number changes, written agent prompts,
news and everyday questions); the default stays at 0.98, where the held-out half has 0.69% wrong on PAWS
and none on the other sets, because at 0.96 one pair in ~120 of three sets went wrong: too thin a margin
for prompts from other sources. See docs/benchmarks/semantic-cache.md. Without the verifier no
threshold is safe.
"""

from gateway.semantic.embedder import Embedder, EmbeddingTimeout
from gateway.semantic.index import VectorIndex
from gateway.semantic.verifier import Verdict, verify

DEFAULT_SIMILARITY_THRESHOLD = 0.98

__all__ = [
    "DEFAULT_SIMILARITY_THRESHOLD",
    "Embedder",
    "EmbeddingTimeout",
    "VectorIndex",
    "Verdict",
    "verify",
]
