"""Reversible compaction: which tool results become references, oldest first, keeping the newest whole.

Very large results are shrunk whenever they appear (a longer preview), so they never enter the cached
prefix in full. Results recorded as compacted stay compacted (determinism). New compactions pick the
oldest eligible results until the history is under the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.compaction.history import History
from gateway.compaction.reference import reference
from gateway.compaction.results import Results, ToolResult
from gateway.compaction.thresholds import Thresholds
from gateway.compaction.tokens import TokenCounter
from gateway.config.compaction import CompactionConfig
from gateway.pacing import CHUNK, Pacer


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

    async def reapply(self, history: History, results: Results, compacted: set[str], pacer: Pacer) -> list[Candidate]:
        """Shrink very large results and re-apply recorded compactions; returns the results shrunk for the
        first time (not in `compacted` yet). Most results are neither: decided from their facts alone."""
        shrunk = []
        shrink_at = self.thresholds.shrink_at
        for number, (index, facts) in enumerate(results.found):
            if number % CHUNK == CHUNK - 1:
                await pacer.tick()
            if not facts.plain or (facts.bound < shrink_at and facts.handle not in compacted):
                continue
            result = results.result(index, facts)
            tokens, text = await result.tokens(self.counter), result.text
            if text is None:
                continue
            if tokens >= shrink_at:
                ref = self._reference(result, text, tokens, self.config.shrink_preview_chars)
                if result.handle not in compacted:
                    shrunk.append(Candidate(result, text, ref, tokens - self.counter.text(ref)))
                await history.replace(result, ref)
            elif result.handle in compacted:
                await history.replace(result, self._reference(result, text, tokens, self.config.preview_chars))
            await pacer.tick()
        return shrunk

    async def candidates(self, history: History, results: Results, pacer: Pacer) -> list[Candidate]:
        """Results that may be compacted now, oldest first: not the newest `keep_tool_results`, not
        excluded, plain text, and large enough that the reference saves tokens."""
        keep, least = self.config.keep_tool_results, self.config.min_tool_result_tokens
        older = results.found[: len(results.found) - keep] if keep else results.found
        found = []
        for index, facts in older:
            await pacer.tick()
            if not facts.plain or facts.bound < least or history.is_replaced(index, facts.block):
                continue
            if results.tool(facts) in self.config.exclude_tools:
                continue
            result = results.result(index, facts)
            tokens, text = await result.tokens(self.counter), result.text
            if tokens < least or text is None:
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
