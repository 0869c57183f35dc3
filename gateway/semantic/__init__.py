"""Semantic response cache parts: embedder, in-process vector index and the candidate verifier.

``DEFAULT_SIMILARITY_THRESHOLD`` is the cosine (all-MiniLM-L6-v2) at or above which the stage may serve
a candidate, always together with ``verify``: chosen by ``python -m bench.semantic_quality`` as the
lowest threshold that kept wrong answers <= 1% on the must-miss pair sets (PAWS non-paraphrases,
one-number changes) with the verifier, then one step stricter (0.975 -> 0.98) because 0.975 measured
1.03% on the held-out half; see docs/benchmarks/semantic-cache.md. Without the verifier
no threshold is safe.
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
