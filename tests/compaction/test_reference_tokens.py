"""A session over the compaction trigger whose results cannot clear enough compacts nothing, and its next
request weighs the same older results again (issue 28): each result's reference is counted once per
content, form and encoding (kept in its facts), so that request encodes its new messages only. The
references it would send, and what it decides, are those counted afresh. Encodings are counted, never time."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from gateway.compaction.compactor import REFERENCE_FORMS_KEPT, Candidate, Compactor
from gateway.compaction.history import History
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.reference import reference
from gateway.compaction.results import ResultFacts, Results, ToolResult
from gateway.compaction.thresholds import Thresholds
from gateway.compaction.tokens import counter_for
from gateway.config.compaction import CompactionConfig
from gateway.pacing import Pacer
from tests.compaction.test_provider_count import Encodings, turn
from tests.compaction.test_work_per_turn import WINDOW, Message, stage_with

# Over the trigger from a few turns on, far under summarization; no choice of results clears 10^6 tokens.
NEVER_ENOUGH = {
    "compact_trigger": 2_000,
    "compact_target": 1_000,
    "clear_at_least": 1_000_000,
    "summarize_trigger": 10_000_000,
    "summarize_keep": 1_000_000,
    "shrink_tool_result_at": 10_000_000,
}
# 40 tool turns (44,623 tokens: their tag is digits, which count the same whatever their value, where a hex
# tag's count ranged over 54,000-74,000 and sometimes stayed under the trigger) over the trigger at once;
# clearing ~9,600 tokens takes the oldest 12 results.
FIRST_COMPACTION = {
    "compact_trigger": 40_000,
    "compact_target": 35_000,
    "clear_at_least": 500,
    "summarize_trigger": 10_000_000,
    "summarize_keep": 1_000_000,
    "shrink_tool_result_at": 10_000_000,
}


def tool_turns(turns: int, tag: str) -> list[Message]:
    """A task, then tool turns whose results (~1,560 tokens of words each) are worth a reference."""
    found: list[Message] = [{"role": "user", "content": f"Fix the bug. [{tag}]"}]
    for step in range(turns):
        call = {"id": f"c{step}", "type": "function", "function": {"name": "bash", "arguments": f'{{"n": {step}}}'}}
        found.append({"role": "assistant", "content": f"Step {step} [{tag}]", "tool_calls": [call]})
        words = " ".join(f"line{n} of step {step} in {tag}" for n in range(60))
        found.append({"role": "tool", "tool_call_id": f"c{step}", "content": words})
    return found


def weighing(monkeypatch: pytest.MonkeyPatch) -> list[Candidate]:
    """The candidates compaction weighs from now on (each counted, its reference too), as it returns them."""
    weighed: list[Candidate] = []
    original = Compactor.candidates

    async def candidates(
        self: Compactor, history: History, results: Results, pacer: Pacer, enough: int | None = None
    ) -> list[Candidate]:
        found = await original(self, history, results, pacer, enough)
        weighed.extend(found)
        return found

    monkeypatch.setattr(Compactor, "candidates", candidates)
    return weighed


def test_a_request_over_the_trigger_weighs_older_results_without_counting_them_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services, stage, policy = stage_with(NEVER_ENOUGH)
    full, session = tool_turns(20, uuid.uuid4().hex), uuid.uuid4().hex
    for k in range(3, len(full) - 1, 2):  # the last request adds one turn: 2 messages
        asyncio.run(turn(services, stage, policy, full[:k], session))
    encodings = Encodings(monkeypatch)
    weighed = weighing(monkeypatch)
    headers = asyncio.run(turn(services, stage, policy, full, session))
    encoded = encodings.count
    assert len(weighed) >= 12  # the older results, weighed on this request too...
    assert headers["x-cachegate-compaction"] == "none"  # ...which compacts nothing...
    # ...encoding the new assistant message and tool result, and the one result that just became older
    # (the newest keep_tool_results stay whole) and its reference: not every older result's reference again.
    assert encoded == 4
    counter = counter_for("openai", "gpt-4o-mini")
    for candidate in weighed:  # what each saving was taken from: the reference, counted afresh
        result = candidate.result
        assert result.text is not None
        sent = reference(result.tool, result.text, candidate.tokens, result.handle, 240, tool_offered=False)
        assert candidate.saving == candidate.tokens - counter.text(sent) > 0


def test_a_results_reference_counts_are_bounded_whatever_the_callers_tool_names() -> None:
    """The tool name is the caller's: a result sent under ever new names keeps REFERENCE_FORMS_KEPT references,
    and each name still gets its own reference's count."""
    counter = counter_for("openai", "gpt-4o-mini")
    config = CompactionConfig.model_validate(NEVER_ENOUGH)
    compactor = Compactor(config, Thresholds.of(config, WINDOW), counter, tool_offered=False)
    message = tool_turns(1, uuid.uuid4().hex)[-1]
    facts = ResultFacts(None, "c0", "h0", plain=True, bound=len(str(message)))
    for number in range(3 * REFERENCE_FORMS_KEPT):
        result = ToolResult(0, message, facts, f"tool{number}", LAYOUTS["openai"])
        sent = reference(result.tool, message["content"], 400, "h0", 240, tool_offered=False)
        assert compactor.reference_tokens(result, 400, 240) == counter.text(sent)
    assert facts.references is not None and len(facts.references) == REFERENCE_FORMS_KEPT


def test_a_sessions_first_compaction_counts_the_results_it_compacts_not_every_older_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session past the trigger for the first time compacts its oldest results until under the target:
    it weighs those, and leaves the newer ones uncounted until a later compaction reaches them (they were
    all counted alone on that request before, a burst that grew with the history)."""
    services, stage, policy = stage_with(FIRST_COMPACTION)
    full = tool_turns(40, f"{uuid.uuid4().int % 10**30:030d}")  # a tag of digits: the same count for any
    weighed = weighing(monkeypatch)
    headers = asyncio.run(turn(services, stage, policy, full, uuid.uuid4().hex))
    before, after = (int(headers[f"x-cachegate-compaction-tokens-{when}"]) for when in ("before", "after"))
    assert headers["x-cachegate-compaction"] == "compacted"
    assert before > FIRST_COMPACTION["compact_trigger"]
    assert 0 < len(weighed) <= 37 // 2  # of 37 older results
    # the fewest oldest results that bring the history under the target, as when all were weighed
    assert after <= FIRST_COMPACTION["compact_target"] < after + weighed[-1].saving
