"""Reversible compaction: which tool results become references, oldest first, keeping the newest whole.

Very large results are shrunk whenever they appear (a longer preview), so they never enter the cached
prefix in full. Results recorded as compacted stay compacted (determinism). New compactions pick the
oldest eligible results until the history is under the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.compaction.history import History
from gateway.compaction.layout import ToolResult
from gateway.compaction.reference import reference
from gateway.compaction.thresholds import Thresholds
from gateway.compaction.tokens import TokenCounter
from gateway.config.compaction import CompactionConfig
from gateway.pacing import Pacer


@dataclass(frozen=True, slots=True)
class Candidate:
    result: ToolResult
    text: str  # the original as text
    reference: str
    saving: int  # tokens freed


class Compactor:
    def __init__(
        self, config: CompactionConfig, thresholds: Thresholds, counter: TokenCounter, tool_offered: bool
    ) -> None:
        self.config = config
        self.thresholds = thresholds
        self.counter = counter
        self.tool_offered = tool_offered

    def _reference(self, result: ToolResult, text: str, tokens: int, preview_chars: int) -> str:
        return reference(result.tool, text, tokens, result.handle, preview_chars, tool_offered=self.tool_offered)

    async def reapply(
        self, history: History, results: list[ToolResult], compacted: set[str], pacer: Pacer
    ) -> list[Candidate]:
        """Shrink very large results and re-apply recorded compactions; returns the shrunk ones."""
        shrunk = []
        for result in results:
            await pacer.tick()
            text = result.text
            if text is None:
                continue
            tokens = await self.counter.content_off_loop(result.content)
            if tokens >= self.thresholds.shrink_at:
                ref = self._reference(result, text, tokens, self.config.shrink_preview_chars)
                shrunk.append(Candidate(result, text, ref, tokens - self.counter.text(ref)))
                await history.replace(result, ref)
            elif result.handle in compacted:
                await history.replace(result, self._reference(result, text, tokens, self.config.preview_chars))
        return shrunk

    async def candidates(self, history: History, results: list[ToolResult], pacer: Pacer) -> list[Candidate]:
        """Results that may be compacted now, oldest first: not the newest `keep_tool_results`, not
        excluded, plain text, and large enough that the reference saves tokens."""
        keep = self.config.keep_tool_results
        older = results[: len(results) - keep] if keep else results
        found = []
        for result in older:
            await pacer.tick()
            text = result.text
            if text is None or history.is_replaced(result) or result.tool in self.config.exclude_tools:
                continue
            tokens = await self.counter.content_off_loop(result.content)
            if tokens < self.config.min_tool_result_tokens:
                continue
            ref = self._reference(result, text, tokens, self.config.preview_chars)
            saving = tokens - self.counter.text(ref)
            if saving > 0:
                found.append(Candidate(result, text, ref, saving))
        return found

    def choose(self, candidates: list[Candidate], tokens: int) -> list[Candidate]:
        """Oldest first until the history is under the target (all of them if it cannot get there)."""
        chosen = []
        for candidate in candidates:
            if tokens <= self.thresholds.compact_target:
                break
            chosen.append(candidate)
            tokens -= candidate.saving
        return chosen
