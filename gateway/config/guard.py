"""Loop-guard policy (stage: gateway/stages/guard.py; mapping to the core policy: gateway/guard/policy.py).

Defaults come from the core (agent_runtime.guard), so the gateway and the runtime agree on them; see
docs/loop-guard.md for why each threshold is what it is. Any threshold or limit can be ``null`` (off).
Per-model (``models[].policy.guard``) and per-tenant (``tenants[].policy.guard``) overrides merge in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent_runtime.guard import GuardLimits, GuardThresholds

Rung = Literal["warn", "nudge", "stop", "block"]
HeaderPolicy = Literal["off", "warn-only"]

_T = GuardThresholds()
_L = GuardLimits()


def _default_rungs() -> list[Rung]:
    return ["nudge", "stop", "block"]


def _default_header_policies() -> list[HeaderPolicy]:
    return ["off", "warn-only"]


class GuardThresholdsConfig(BaseModel):
    """Detector thresholds (meaning: agent_runtime/guard/detectors.py)."""

    identical_calls: int | None = _T.identical_calls
    cycle_repeated_steps: int | None = _T.cycle_repeated_steps
    cycle_max_period: int = _T.cycle_max_period
    no_progress_streak: int | None = _T.no_progress_streak
    no_progress_window: int = _T.no_progress_window
    repeated_errors: int | None = _T.repeated_errors
    monologue: int | None = _T.monologue
    malformed: int | None = _T.malformed
    long_polling_s: float | None = _T.long_polling_s


class GuardLimitsConfig(BaseModel):
    """Hard per-session caps (reasons MAX_STEPS, BUDGET, TIMEOUT, ERRORS)."""

    max_llm_calls: int | None = _L.max_llm_calls
    max_tool_calls: int | None = _L.max_tool_calls
    max_total_tokens: int | None = _L.max_total_tokens
    max_cost_usd: float | None = _L.max_cost_usd
    max_wall_time_s: float | None = _L.max_wall_time_s
    max_consecutive_errors: int | None = _L.max_consecutive_errors


class ChantingConfig(BaseModel):
    """Chanting in a response's text (Gemini CLI's content-loop check): cut the stream, strike the session."""

    enabled: bool = True
    chunk_size: int = 50
    threshold: int = 10
    max_mean_gap: int = 250
    max_distinct_gaps: int = 5
    # Repeats closer than this (characters, on average) are a pattern within the text (a repeating
    # decimal, "hahaha"), not chanting.
    min_period: int = 20


class GuardMemoryConfig(BaseModel):
    """Per-replica caps on the guard's in-process maps (read from the global policy only). Session ids are
    caller-chosen, so each map is bounded by entries and bytes, per tenant (so that one tenant filling
    its share never evicts another's sessions) as well as in total; evictions are counted in
    cachegate_guard_memory_evictions_total{cache, reason}. An evicted parser is rebuilt from the next
    request's tail (same decisions); an evicted active session only leaves the gauge early."""

    parser_cache_bytes: int = Field(default=64 * 1024 * 1024, gt=0, description="Bytes of parsed histories")
    parser_cache_sessions_per_tenant: int = Field(default=1000, gt=0)
    parser_cache_bytes_per_tenant: int = Field(default=32 * 1024 * 1024, gt=0)
    active_sessions: int = Field(default=100_000, gt=0, description="Sessions the active gauge remembers")
    active_sessions_per_tenant: int = Field(default=50_000, gt=0)
    active_bytes: int = Field(default=32 * 1024 * 1024, gt=0, description="Bytes of remembered session keys")
    active_bytes_per_tenant: int = Field(default=16 * 1024 * 1024, gt=0)


class CallerCap(BaseModel):
    count: int = Field(gt=0)
    window_s: float = Field(default=3600.0, gt=0)


class ChurnConfig(BaseModel):
    """New conversations of one agent (the same system prompt and tools, on one key) that make it one
    agent whatever its session ids: this many within the window."""

    sessions: int = Field(default=5, gt=1)
    window_s: float = Field(default=600.0, gt=0)


class CallerConfig(BaseModel):
    """Caps that bind the caller's key, not only the session ids it chooses (gateway/guard/caller.py);
    all off by default: one key often serves many honest users of one agent."""

    # New session ids per key in the window (429 beyond).
    sessions_per_key: CallerCap | None = None
    # Requests without a session id per key in the window (429 beyond).
    sessionless_per_key: CallerCap | None = None
    # Session-id churn: the conversations of a churning agent share its step/cost caps and its stop.
    churn: ChurnConfig | None = None


class GuardConfig(BaseModel):
    enabled: bool = True
    # The escalation ladder: the k-th detection of a session takes the k-th rung (the last one repeats).
    rungs: list[Rung] = Field(default_factory=_default_rungs)
    # Strikes older than this many requests of the session no longer escalate.
    strike_memory: int | None = 100
    thresholds: GuardThresholdsConfig = Field(default_factory=GuardThresholdsConfig)
    limits: GuardLimitsConfig = Field(default_factory=GuardLimitsConfig)
    chanting: ChantingConfig = Field(default_factory=ChantingConfig)
    # Opt-in: add a terminate(status, reason) tool to requests that carry tools (see docs/loop-guard.md).
    terminate_tool: bool = False
    # Requests without a session id: "detect" judges the request's own history with no stored state: the
    # rung is how many earlier requests of that history (one step shorter each) trip too, so a loop still
    # going is nudged, then stopped; no counters, never a block (nothing could enforce it). "off": left alone.
    sessionless: Literal["detect", "off"] = "detect"
    # A tool call whose result came back this long (seconds) after the answer that made it waited (a
    # poll with a pause, a slow check): repeating it is polling, not a loop (sessions with an id only;
    # the wall-clock cap is thresholds.long_polling_s). null: only explicit waits (sleep, wait tools).
    wait_gap_s: float | None = 5.0
    caller: CallerConfig = Field(default_factory=CallerConfig)
    # Values a client may choose with the x-cachegate-guard-policy header ([] forbids the header).
    header_policies: list[HeaderPolicy] = Field(default_factory=_default_header_policies)
    # Session state lives this long after the session's first request.
    session_ttl_s: float = 86400.0
    # Per-replica, read from the global policy only: parsed histories kept, and the "active" window.
    parser_cache_sessions: int = 2000
    active_window_s: float = 900.0
    memory: GuardMemoryConfig = Field(default_factory=GuardMemoryConfig)
