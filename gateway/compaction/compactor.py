"""Reversible compaction: which tool results become references, oldest first, keeping the newest whole.

Very large results are shrunk whenever they appear (a longer preview), so they never enter the cached
prefix in full. Results recorded as compacted stay compacted (determinism). New compactions pick the
oldest eligible results until the history is under the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.compaction.history import History
from gateway.compaction.reference import reference
from gateway.compaction.results import Rendering, ResultFacts, Results, ToolResult
from gateway.compaction.thresholds import Thresholds
from gateway.compaction.tokens import TokenCounter
from gateway.config.compaction import CompactionConfig
from gateway.pacing import CHUNK, Pacer

# A result's references kept (`rendering`): one form per route and config in practice; the tool
# name is the caller's, so no caller can grow the facts of a result shared by every session that sends it.
REFERENCE_FORMS_KEPT = 8


@dataclass(frozen=True, slots=True)
class Candidate:
    result: ToolResult
    tokens: int  # the result's, in the counter's encoding
    preview_chars: int  # its reference's preview (`Compactor.rendering`)
    saving: int  # tokens freed


Replaced = tuple[int, ResultFacts, str, Rendering]  # (message index, the result, its tool, what replaced it)


@dataclass(slots=True, eq=False)
class Reapplied:
    """What `Compactor.reapply` replaced in a session's history: the next request that extends that history
    makes the same replacements without deciding them again (a compacted session's every request re-applied
    every recorded compaction: work that grew with the history, issue 28)."""

    form: tuple[object, ...]  # what decided them: the recorded handles, the history's start, the thresholds
    covered: int  # the results (`Results.found`) they were decided for
    replaced: list[Replaced]


class Compactor:
    def __init__(
        self, config: CompactionConfig, thresholds: Thresholds, counter: TokenCounter, tool_offered: bool
    ) -> None:
        self.config = config
        self.thresholds = thresholds
        self.counter = counter
        self.tool_offered = tool_offered

    def rendering(self, result: ToolResult, tokens: int, preview_chars: int) -> Rendering:
        """What replaces a plain result of `tokens` tokens, built once per result and form (kept in its
        facts): a request over the trigger that cannot clear enough compacts nothing, and the next one
        weighs the same results again; a compacted session's every request sends the same references."""
        facts = result.facts
        key = (self.counter.name, tokens, preview_chars, self.tool_offered, result.tool)
        known = facts.references.get(key) if facts.references is not None else None
        if known is None:
            text = result.text
            assert text is not None, "only plain results are compacted"
            known = Rendering(
                reference(result.tool, text, tokens, result.handle, preview_chars, tool_offered=self.tool_offered)
            )
            if facts.references is None:
                facts.references = {}
            if len(facts.references) < REFERENCE_FORMS_KEPT:
                facts.references[key] = known
        return known

    def reference_tokens(self, result: ToolResult, tokens: int, preview_chars: int) -> int:
        """The tokens of the `rendering`'s text, counted once per result, form and encoding."""
        rendering = self.rendering(result, tokens, preview_chars)
        if rendering.tokens is None:
            rendering.tokens = self.counter.text(rendering.text)
        return rendering.tokens

    async def reapply(
        self, history: History, results: Results, compacted: set[str], pacer: Pacer, last: Reapplied | None = None
    ) -> tuple[list[Candidate], Reapplied | None]:
        """Shrink very large results and re-apply recorded compactions; returns the results shrunk for the
        first time (not in `compacted` yet), and what it replaced, for the session's next request (None when
        it shrank any: they are recorded, so the next request decides with another `compacted`). Most results
        are neither: decided from their facts alone. `last`: what the session's previous request replaced,
        whose history this one extends (compaction/totals.py): its results decide the same, so their
        replacements are made again as they are and only the new results are looked at."""
        shrunk: list[Candidate] = []
        shrink_at, shrink_preview = self.thresholds.shrink_at, self.config.shrink_preview_chars
        form = (frozenset(compacted), history.start, shrink_at, shrink_preview, self.config.preview_chars,
                self.counter.name, self.tool_offered)  # fmt: skip
        replaced: list[Replaced] = []
        covered = 0
        if last is not None and self._holds(last, form, results):
            for number, (index, facts, _, rendering) in enumerate(last.replaced):
                await history.replace(index, facts.block, rendering)
                if number % CHUNK == CHUNK - 1:
                    await pacer.tick()
            replaced, covered = list(last.replaced), last.covered
        for number, (index, facts) in enumerate(results.found[covered:]):
            if number % CHUNK == CHUNK - 1:
                await pacer.tick()
            if not facts.plain or (facts.bound < shrink_at and facts.handle not in compacted):
                continue
            result = results.result(index, facts)
            tokens = await result.tokens(self.counter)
            if tokens >= shrink_at:
                if result.handle not in compacted:
                    saving = tokens - self.reference_tokens(result, tokens, shrink_preview)
                    shrunk.append(Candidate(result, tokens, shrink_preview, saving))
                rendering = self.rendering(result, tokens, shrink_preview)
            elif result.handle in compacted:
                rendering = self.rendering(result, tokens, self.config.preview_chars)
            else:
                continue
            await history.replace(index, facts.block, rendering)
            replaced.append((index, facts, result.tool, rendering))
            await pacer.tick()
        return shrunk, (Reapplied(form, len(results.found), replaced) if not shrunk else None)

    @staticmethod
    def _holds(last: Reapplied, form: tuple[object, ...], results: Results) -> bool:
        """Whether `last` decides this request's first results: the same recorded handles, start and
        thresholds, and each replaced result's tool named as it was (its reference names it)."""
        if last.form != form or last.covered > len(results.found):
            return False
        return all(results.tool(facts) == tool for _, facts, tool, _ in last.replaced)

    async def candidates(
        self, history: History, results: Results, pacer: Pacer, enough: int | None = None
    ) -> list[Candidate]:
        """Results that may be compacted now, oldest first: not the newest `keep_tool_results`, not
        excluded, plain text, and large enough that the reference saves tokens. With `enough`, only until
        their savings reach it: `choose` takes no more, and a newer result is counted when a later
        compaction reaches it (a first compaction would otherwise count every older result of the history)."""
        keep, least = self.config.keep_tool_results, self.config.min_tool_result_tokens
        preview = self.config.preview_chars
        older = results.found[: len(results.found) - keep] if keep else results.found
        found = []
        for index, facts in older:
            await pacer.tick()
            if not facts.plain or facts.bound < least or history.is_replaced(index, facts.block):
                continue
            if results.tool(facts) in self.config.exclude_tools:
                continue
            result = results.result(index, facts)
            tokens = await result.tokens(self.counter)
            if tokens < least:
                continue
            saving = tokens - self.reference_tokens(result, tokens, preview)
            if saving > 0:
                found.append(Candidate(result, tokens, preview, saving))
                if enough is not None:
                    enough -= saving
                    if enough <= 0:
                        break
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
