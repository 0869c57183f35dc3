"""Response cache policy, exact and semantic tiers (stage: gateway/stages/response_cache.py).

Defaults: the exact tier serves any request that does not opt out; the semantic tier only serves
requests where a near-duplicate answer is what a caller expects — explicit temperature 0 (an omitted
temperature is the provider default 1), no tool results in the conversation, text-only last user turn.
Per-model (`models[].policy.response_cache`) and per-tenant (`tenants[].policy.response_cache`) overrides
use the same fields. `max_entries` and `sync_log_max_len` size shared structures, so only the global
policy's values count.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from gateway.semantic import DEFAULT_SIMILARITY_THRESHOLD


class JudgeConfig(BaseModel):
    """The semantic tier's optional judge (gateway/semantic/judge.py): off while `model` is None."""

    model: str | None = Field(default=None, description="Route that judges candidates below the threshold")
    threshold: float = Field(default=0.90, ge=0, le=1, description="Cosine a candidate needs to be judged")
    timeout_s: float = Field(default=3.0, gt=0, description="A slower judge counts as a refusal")


class ResponseCacheConfig(BaseModel):
    enabled: bool = True
    exact: bool = Field(default=True, description="Serve byte-identical canonical requests")
    coalesce: bool = Field(
        default=True, description="Identical in-flight exact-tier requests wait for one upstream call"
    )
    semantic: bool = Field(default=True, description="Serve near-duplicate last user turns (when eligible)")
    ttl_s: float = Field(default=3600.0, gt=0, description="Entry lifetime unless x-cachegate-cache-ttl says less")
    max_ttl_s: float = Field(default=86400.0, gt=0, description="Cap on a caller-requested TTL")
    namespace: str = Field(default="default", description="Namespace when no x-cachegate-cache-namespace")
    similarity_threshold: float = Field(
        default=DEFAULT_SIMILARITY_THRESHOLD, ge=0, le=1, description="Minimum cosine for a semantic candidate"
    )
    verify: bool = Field(default=True, description="Check numbers/negations/entities/identifiers agree")
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    semantic_max_temperature: float = Field(
        default=0.0, ge=0, description="Above it, semantic hits need the caller's opt-in"
    )
    allow_opt_in: bool = Field(default=True, description="Honour x-cachegate-cache-semantic: on")
    semantic_with_tool_results: bool = Field(
        default=False, description="Semantic hits for requests carrying tool results"
    )
    cache_tool_calls: bool = Field(default=False, description="Store answers that call tools")
    regenerated_window_s: float = Field(
        default=300.0,
        gt=0,
        description="A semantic hit re-asked with Cache-Control: no-cache/no-store within this many seconds counts "
        "as a likely wrong answer (cachegate_response_cache_semantic_regenerated_total)",
    )
    max_prompt_chars: int = Field(default=4000, gt=0, description="Longer last user turns skip the semantic tier")
    max_response_bytes: int = Field(default=1_000_000, gt=0, description="Larger answers are not stored")
    embed_timeout_s: float = Field(default=0.5, gt=0, description="Embedding slower than this is a miss")
    embed_cpu_share: float = Field(
        default=0.5,
        gt=0,
        description="Global only: share of a core each replica's embedder may use over 10 s; past it the "
        "semantic tier sits requests out (skips{reason=embedder_overloaded}) instead of queueing them",
    )
    max_entries: int = Field(default=100_000, gt=0, description="Stored entries before the oldest are evicted")
    sync_log_max_len: int = Field(
        default=10_000, gt=0, description="Index-sync log length in Redis; a replica further behind reloads"
    )
    # Work bound: canonicalising and hashing grow with the history; a request longer than this skips both
    # tiers (counted as skips{tier="all", reason="too_many_messages"}) instead of stalling the replica.
    max_request_messages: int = Field(default=10_000, gt=0, description="Longer requests bypass the cache")
    # Each replica's in-process semantic index (global policy only): bounded by entries and bytes, per
    # tenant and in total; the least recently used go first, counted in
    # cachegate_memory_evictions_total{cache="semantic_index"}. An evicted vector only costs a semantic miss.
    index_max_bytes: int = Field(default=256 * 1024 * 1024, gt=0, description="Bytes of all tenants' vectors")
    index_max_entries_per_tenant: int = Field(default=50_000, gt=0)
    index_max_bytes_per_tenant: int = Field(default=128 * 1024 * 1024, gt=0)
