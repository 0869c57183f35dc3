"""Context compaction / summarization policy (stage: gateway/stages/compaction.py).

Thresholds are "fraction or tokens": a value <= 1 is a fraction of the model's context window (the
route's `context_window`, else LiteLLM's max_input_tokens), a value > 1 an absolute token count.
Defaults are anchored in shared/specs/compaction.md (see docs/compaction.md for the table).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator


class CompactionConfig(BaseModel):
    enabled: bool = True
    # Reversible compaction of old tool results: fires above the trigger, compacts down to the target
    # (hysteresis, so that it does not fire again next turn). 0.5 ~ Anthropic clear_tool_uses (100K of 200K).
    compact_trigger: float = Field(default=0.5, gt=0)
    compact_target: float = Field(default=0.35, gt=0)
    # Only compact when it frees this much (Anthropic clear_at_least, Claude Code >= 20K of 200K):
    # every compaction breaks the prompt cache after its first change, so it must repay that.
    clear_at_least: float = Field(default=0.1, ge=0)
    keep_tool_results: int = Field(default=3, ge=0, description="Newest tool results always kept whole")
    min_tool_result_tokens: int = Field(default=120, ge=0, description="Smaller results are not worth a reference")
    exclude_tools: list[str] = Field(default_factory=list, description="Tools whose results are never compacted")
    # Very large tool results are shrunk when they first arrive (deepagents: > 20K tokens; 0.15 of 128K).
    shrink_tool_result_at: float = Field(default=0.15, gt=0)
    preview_chars: int = Field(default=240, ge=0, description="Head and tail kept in a compacted reference")
    shrink_preview_chars: int = Field(default=2000, ge=0, description="Head and tail kept when shrinking")
    # Irreversible summarization, only when compaction cannot get under this (Codex 0.9, deepagents 0.85).
    summarize: bool = True
    summarize_trigger: float = Field(default=0.8, gt=0)
    summarize_keep: float = Field(default=0.25, gt=0, description="Newest turns kept verbatim after a summary")
    pin_first_user: bool = Field(default=True, description="Keep the task (first user message) verbatim")
    summarizer_model: str | None = Field(
        default=None, description="Route name of the summarizer; None: the request's own route (warm cache)"
    )
    summarizer_timeout_s: float = Field(default=30.0, gt=0)
    summary_max_tokens: int = Field(default=1500, gt=0)
    max_summary_failures: int = Field(default=3, ge=1, description="Per session, then stop trying (Claude Code)")
    # Originals of compacted results come back by GET /v1/context/{handle}, or through this tool.
    retrieval_tool: bool = False
    max_retrievals: int = Field(default=3, ge=1, description="Gateway-answered retrieval rounds per request")
    default_context_window: int = Field(default=128_000, gt=0, description="When the model map has none")
    state_ttl_s: float = Field(default=7 * 86400, gt=0, description="Session records, originals, summaries")

    @model_validator(mode="after")
    def _ordered(self) -> CompactionConfig:
        if self.compact_target >= self.compact_trigger and (self.compact_target <= 1) == (self.compact_trigger <= 1):
            raise ValueError("compaction: compact_target must be below compact_trigger (hysteresis)")
        if self.summarize_keep >= self.summarize_trigger and (self.summarize_keep <= 1) == (
            self.summarize_trigger <= 1
        ):
            raise ValueError("compaction: summarize_keep must be below summarize_trigger")
        return self
