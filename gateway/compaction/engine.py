"""One request through compaction: replay the session's record, then summarize only if compaction
cannot get (clearly) under the summarization trigger, then compact. Returns the history to send and
what it did."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from gateway.compaction import shared_counts
from gateway.compaction.bounds import assembled_small, surely_small
from gateway.compaction.compactor import Candidate, Compactor
from gateway.compaction.history import History
from gateway.compaction.layout import Layout, Message, digest
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.memo import Memo, SessionRecord, Summary
from gateway.compaction.originals import Originals
from gateway.compaction.pairs import safe_cut_steps
from gateway.compaction.provider_count import ProviderCount, plausible, shows_under
from gateway.compaction.results import Results
from gateway.compaction.summarizer import (
    INSTRUCTION,
    SummaryFailed,
    Written,
    fit_steps,
    summary_request,
    write_summary,
)
from gateway.compaction.thresholds import Thresholds, context_window
from gateway.compaction.tokens import CONTENT, JSON, TokenCounter, counter_for
from gateway.compaction.totals import Totals, sessions
from gateway.config.compaction import CompactionConfig
from gateway.config.tenants import same_keys
from gateway.context import RequestContext
from gateway.history import MessageFacts
from gateway.history.view import RAW_MESSAGES_MAX
from gateway.pacing import CHUNK, Pacer, finish_paced


@dataclass(slots=True)
class Outcome:
    tokens_before: int
    tokens_after: int
    window: int
    body: dict[str, Any] | None = None  # None: send the request as it came
    compacted: int = 0  # tool results newly turned into references (shrunk ones included)
    summary: str | None = None  # written | memo | a failure reason
    summary_cost_usd: float = 0.0
    summary_call: Written | None = None  # the summary written this turn: its usage is charged
    invalidated: int = 0  # tokens of the previous prefix this turn's changes took out of the cache
    counted: bool = True  # False: its bound shows it under every threshold, its tokens were not all counted

    @property
    def action(self) -> str:
        if self.summary in ("written", "memo"):
            return "summarized"
        if self.compacted:
            return "compacted"
        return "reapplied" if self.body is not None else "none"


def summary_message(layout: Layout, summary: Summary) -> Message:
    return layout.user_message(
        f"[cachegate: summary of {summary.count} earlier messages; their full text is stored as "
        f"{summary.dump}]\n\n{summary.text}"
    )


def range_digest(layout: Layout, body: dict[str, Any], end: int, summarizer: str) -> str:
    """Names the summarized range by its content (and who summarizes how), for the memo and the record."""
    return digest([layout.system(body), layout.messages(body)[:end], summarizer, INSTRUCTION], 16)


def _last_reply(layout: Layout, messages: list[Message]) -> int:
    """Index of the newest model message: the previous request ended right before it."""
    return next((i for i in range(len(messages) - 1, -1, -1) if layout.is_reply(messages[i])), 0)


class Run:
    """State of one request through the engine. Every walk over the history is paced (see pacing.py)
    and every token count comes from one count per message, so a huge history costs linear work
    spread over many short slices, never one long stall of the event loop."""

    def __init__(self, ctx: RequestContext, config: CompactionConfig) -> None:
        assert ctx.route is not None
        self.ctx, self.config, self.route = ctx, config, ctx.route
        self.layout = LAYOUTS[ctx.wire.name]
        self.body = ctx.body
        self.messages = self.layout.messages(ctx.body)
        self.tenant = ctx.tenant_label
        self.counter: TokenCounter = counter_for(self.route.provider, self.route.model)
        self.thresholds = Thresholds.for_request(config, context_window(self.route, config.default_context_window))
        store = ctx.services.store
        self.memo = Memo(ctx.state, config.state_ttl_s)  # the record is read ahead (CompactionStage.reads_ahead)
        self.originals = Originals(store, config.state_ttl_s)
        self.head = self.layout.head_length(self.messages, config.pin_first_user)
        self.pacer = Pacer()
        self.history = History(self.layout, self.messages, self.head, self.counter, [])  # counted in execute
        self.compactor = Compactor(config, self.thresholds, self.counter, config.retrieval_tool)
        self.summarizer = config.summarizer_model or self.route.name
        self.fixed = 0  # tools and system prompt: counted in execute
        self.fixed_known = False  # whether execute counted them (not for a request under the byte bound)
        self.facts: list[MessageFacts] = []  # the messages' shared facts (gateway/history/): taken in execute
        self.totals = Totals(self.layout.name, self.counter.name)  # the session's: taken in execute
        self.session_name = ""  # the session's name (`session`): taken in execute

    def session(self) -> str:
        """The client's session, else one named by how the conversation starts (clients without ids)."""
        if self.ctx.session_key:
            return self.ctx.session_key
        start = self.messages[: max(self.head, 1)]
        return f"{self.tenant}:anon:{digest([self.layout.system(self.body), self.body.get('tools'), start])}"

    def tokens(self) -> int:
        return self.fixed + self.history.tokens()

    def remember_provider_count(self, tokens: int) -> None:
        """The provider's input tokens for this request, sent as its client sent it (`execute` returned no
        body): the session's totals keep them for its next turn (provider_count.py)."""
        if self.fixed_known and self.session_name and plausible(tokens, self.totals.size):
            self.totals.provider = ProviderCount(len(self.messages), self.fixed, tokens)

    async def _tool_results(self) -> Results:
        """results.tool_results from the start of the history after the summary (the session's totals
        derive only the messages no earlier request of theirs derived)."""
        return await finish_paced(self.totals.results(self.layout, self.messages, self.history.start), self.pacer)

    async def execute(self) -> Outcome:
        # The facts are shared with the other stages (taken once per request): the bounds read them.
        self.facts = await finish_paced(self.ctx.history.facts_steps(self.messages), self.pacer)
        t = self.thresholds
        # The session's running totals: their sums cost this request's new messages only (totals.py).
        session = self.session_name = self.session()
        totals = self.totals = await finish_paced(
            sessions.of(session, self.layout, self.counter.name, self.messages, self.facts), self.pacer
        )
        small = min(t.compact_trigger, t.shrink_at)
        # surely_small, with the messages' bytes from the totals: those alone reaching its limit answer it.
        field = self.layout.history_field
        if isinstance(self.body.get(field), list):
            under = totals.byte_bound() < small and assembled_small(self.body, field, totals, small)
        else:
            under = await finish_paced(surely_small(self.layout, self.body, self.facts, small), self.pacer)
        if under:
            # Nothing recorded and nothing to do: counting its tokens would only fill two headers, and
            # it is most of this stage's CPU on typical traffic.
            sessions.keep(session, self.tenant, totals)
            return Outcome(0, 0, t.window, counted=False)
        record = await self.memo.record(session)
        self.fixed = await self._fixed_tokens()
        self.fixed_known = True
        if record.summary is None and not record.compacted and totals.largest < t.shrink_at:
            quick = await self._untouched(totals)
            if quick is not None:
                sessions.keep(session, self.tenant, totals)
                return quick
        outcome = await self._walk(record, session, totals)
        sessions.keep(session, self.tenant, totals)
        return outcome

    async def _fixed_tokens(self) -> int:
        """The tools' and the system prompt's tokens, counted once per content: a body's own values by
        their facts, which the session's previous body vouches for when they are the same (no serialization:
        an agent CLI sends tens of kilobytes of them, unchanged, on every request)."""
        view, counter, field = self.ctx.history, self.counter, self.layout.system_field
        tools, system = self.body.get("tools"), self.layout.system(self.body)
        if tools:
            fixed = await counter.part_off_loop(view.part_facts("tools", tools), JSON, tools)
        else:  # counted as an empty list, as a provider renders none
            fixed = await counter.json_off_loop([])
        if system is not None and field is not None:
            fixed += await counter.part_off_loop(view.part_facts(field, system), CONTENT, system)
        return fixed

    async def _untouched(self, totals: Totals) -> Outcome | None:
        """The outcome of a request with nothing recorded and no result to shrink, when it stays under
        the compaction trigger: the walk's sums and counts (`_walk`), from the totals, for its new turn.
        None when it is over the trigger (the walk decides what to compact)."""
        t = self.thresholds
        limit = min(t.compact_trigger, t.window)
        fresh = totals.bound()
        tokens = self.fixed + totals.tokens
        if not totals.exact and tokens > limit:
            under, _ = await self._provider_shows_under(totals, limit)
            tokens = self.fixed + totals.tokens
            if under and not totals.exact:
                # The provider's count of the session's last turn, and what came since, are well under: the
                # history need not be counted (provider_count.py). Not exact: nothing reported.
                return Outcome(tokens, tokens, t.window, counted=False)
        self._refresh_where_it_matters(totals, fresh, tokens, limit)
        tokens = self.fixed + totals.tokens
        exact = totals.exact
        if not exact and tokens > limit:
            # A decision (or the over-window count) needs the exact tokens: count the messages not counted yet.
            await self._count_loose(totals)
            tokens, exact = self.fixed + totals.tokens, True
        if tokens > t.compact_trigger:
            return None
        # Not exact: the bound shows it under every threshold (its token fields are not reported then).
        return Outcome(tokens, tokens, t.window, counted=exact)

    @staticmethod
    def _refresh_where_it_matters(totals: Totals, fresh: int, tokens: int, limit: int) -> list[int]:
        """Take the counts that were bounds when taken and may be known now (by another session's count)
        where they could change something: whether to count (`tokens` over `limit` with them as bounds) or
        whether all are known (no bound was taken now, `fresh`, and the newest one is known now). Otherwise
        the sum with them is under the limit as well, and not all known: nothing decided or reported
        differs, and the refresh (a look at every bound: the history's, on a session that stays under its
        limit) is skipped. Returns the messages counted since."""
        if totals.loose and (tokens > limit or (not fresh and totals.newest_known())):
            return totals.refresh()
        return []

    async def _provider_shows_under(self, totals: Totals, limit: int) -> tuple[bool, list[int]]:
        """Whether the provider's count of the session's last turn, with what came since, shows the request
        well under `limit` (provider_count.py); and the messages counted to see it. Those since that count
        are counted when their bounds alone do not show it: a new turn's bytes bound its tokens ~4 times
        over, and its count is the new turn's work, where the history's would be the whole history's."""
        seen = totals.provider
        if shows_under(seen, totals.counts, self.fixed, limit):
            return True, []
        if seen is None or seen.fixed != self.fixed or not totals.loose or totals.loose[-1][0] < seen.messages:
            return False, []  # no count of this history to start from, or the messages since are counted
        counted = await self._count_since(totals, seen.messages)
        return shows_under(seen, totals.counts, self.fixed, limit), counted

    async def _count_since(self, totals: Totals, since: int) -> list[int]:
        """Count the messages from raw index `since` on that the totals know only a bound of (a new turn:
        cheaper to count here than a round trip for another replica's counts): their indexes."""
        loose = [index for index, _ in totals.loose if index >= since]
        await self.counter.count_messages([self.messages[i] for i in loose], self.pacer, [self.facts[i] for i in loose])
        totals.refresh()
        return loose

    async def _count_loose(self, totals: Totals) -> list[int]:
        """Count the messages the totals know only a bound of (the others are counted): their indexes."""
        loose = [index for index, _ in totals.loose]
        messages, facts = [self.messages[i] for i in loose], [self.facts[i] for i in loose]
        # Counts another replica took for this session first (shared_counts.py): only the rest are counted here.
        state, encoding, sharing = self.ctx.state, self.counter.name, shared_counts.shared(self.ctx.state)
        taken = await shared_counts.take(state, self.session_name, encoding, facts) if sharing else 0
        await self.counter.count_messages(messages, self.pacer, facts)
        if sharing and taken < len(facts):
            shared_counts.share(state, self.session_name, encoding, self.facts, self.config.state_ttl_s)
        totals.settle()
        return loose

    async def _walk(self, record: SessionRecord, session: str, totals: Totals) -> Outcome:
        """Every message's count (from the totals: counts_or_bounds's, taken for the new turn), the record
        replayed, then what to compact (or summarize)."""
        t = self.thresholds
        fresh = totals.bound()
        counts = list(totals.counts)
        self.history = History(self.layout, self.messages, self.head, self.counter, counts)
        changed = self._replay_summary(record)
        # Under the trigger only recorded or very large results are acted on: most requests have neither.
        results = await self._tool_results() if record.compacted or totals.largest >= t.shrink_at else None
        shrunk: list[Candidate] = []
        if results is not None:
            shrunk, totals.reapplied = await self.compactor.reapply(
                self.history, results, record.compacted, self.pacer, totals.reapplied
            )
        tokens, limit = self.tokens(), min(t.compact_trigger, t.window)
        # With the history as sent: a compacted session's history as the client sends it stays over the limit.
        refreshed = self._refresh_where_it_matters(totals, fresh, tokens, limit)
        if refreshed:
            counts = list(totals.counts)
            self.history.settle(counts, refreshed)
            tokens = self.tokens()
        exact = totals.exact
        # The provider's count of the last turn shows it well under (provider_count.py): nothing to count.
        under = False
        if not exact and tokens > limit:
            under, since = await self._provider_shows_under(totals, limit)
            if since:
                counts, exact = list(totals.counts), totals.exact
                self.history.settle(counts, since)
                tokens = self.tokens()
                under = under and not exact
        if not exact and tokens > limit and not under:
            # A decision (or the over-window count) needs the exact tokens: count the messages not counted yet.
            loose = await self._count_loose(totals)
            counts = list(totals.counts)
            self.history.settle(counts, loose)
            tokens, exact = self.tokens(), True
        # Not exact: a bound shows it under every threshold, nothing to decide from a count.
        outcome = Outcome(self.fixed + sum(counts), tokens, t.window, counted=exact)
        chosen: list[Candidate] = []
        if tokens > self.thresholds.compact_trigger and not under:
            results = results if results is not None else await self._tool_results()
            # Over the summarization trigger, every candidate's saving decides whether to summarize.
            enough = None if tokens > t.summarize_trigger else tokens - t.compact_target
            candidates = await self.compactor.candidates(self.history, results, self.pacer, enough)
            if self._must_summarize(tokens, sum(c.saving for c in candidates)):
                changed |= await self._summarize(record, outcome)
                results = await self._tool_results()
                tokens = self.tokens()
                enough = tokens - t.compact_target
                candidates = await self.compactor.candidates(self.history, results, self.pacer, enough)
            chosen = await self._compact(candidates, tokens, outcome)
        new = [*shrunk, *chosen]
        for candidate in new:
            result = candidate.result
            await self.originals.put(
                self.tenant, result.handle, "tool_result", result.content, tool=result.tool, tool_call_id=result.call_id
            )
        if new or changed:
            present = await self._handles(results if results is not None else await self._tool_results())
            record.compacted = ({c.result.handle for c in new} | record.compacted) & present
            await self.memo.save(session, record)
        outcome.compacted = len(new)
        if self.history.replaced or self.history.summary is not None:
            sent = self.history.sent()
            outcome.body = self.layout.with_messages(self.body, sent)
            outcome.tokens_after = self.tokens()
            self._vouch(sent)
        return outcome

    def _vouch(self, sent: list[Message]) -> None:
        """The later stages take the facts of the history sent as a whole, and those of the messages sent in
        place of compacted results without serializing them: a kept message's facts are taken on its
        first request and kept with it. Not for a history too long to handle in one go: the later stages
        then take its facts message by message, paced."""
        if len(sent) > RAW_MESSAGES_MAX:
            return
        view = self.ctx.history
        for message, kept in self.history.kept_messages():
            if kept.facts is None:
                kept.facts = view.facts(message)
            else:
                view.vouch(message, kept.facts)
        view.remember(sent, self.history.sent_facts(self.facts, view.facts))

    async def _handles(self, results: Results) -> set[str]:
        handles: set[str] = set()
        for first in range(0, len(results.found), CHUNK):
            handles.update(facts.handle for _, facts in results.found[first : first + CHUNK])
            await self.pacer.tick()
        return handles

    def _must_summarize(self, tokens: int, full_saving: int) -> bool:
        """Over the summarization trigger, and compaction cannot get clearly under it: compacting
        anyway would only come back next turn with another small, cache-breaking step."""
        t = self.thresholds
        return tokens > t.summarize_trigger and tokens - full_saving > t.summarize_trigger - t.clear_at_least

    def _replay_summary(self, record: SessionRecord) -> bool:
        """Put the recorded summary back if the history still starts with the range it replaced."""
        summary = record.summary
        if summary is None:
            return False
        end = self.history.head + summary.count
        same_range = range_digest(self.layout, self.body, end, self.summarizer) == summary.range_digest
        if end < len(self.messages) and same_range:
            self.history.summarize(end, summary_message(self.layout, summary))
            return False
        record.summary = None  # the client rewrote its history: start over
        return True

    async def _compact(self, candidates: list[Candidate], tokens: int, outcome: Outcome) -> list[Candidate]:
        """Compact in one large step, only when it repays the cache break (or the history must shrink)."""
        if tokens <= self.thresholds.compact_trigger:
            return []
        chosen = self.compactor.choose(candidates, tokens)
        saving = sum(c.saving for c in chosen)
        if not chosen or (saving < self.thresholds.clear_at_least and tokens <= self.thresholds.summarize_trigger):
            return []
        if outcome.summary not in ("written", "memo"):  # a summary this turn already broke the prefix
            first = min(c.result.message for c in chosen)
            outcome.invalidated += self.history.tokens_between(first, _last_reply(self.layout, self.messages))
        for candidate in chosen:
            replaced_by = self.compactor.rendering(candidate.result, candidate.tokens, candidate.preview_chars)
            await self.history.replace(candidate.result.message, candidate.result.block, replaced_by)
            await self.pacer.tick()
        return chosen

    async def _cut(self) -> int | None:
        """The earliest safe cut that keeps at most `summarize_keep` tokens verbatim (else the latest)."""
        cuts = await finish_paced(safe_cut_steps(self.layout, self.messages, self.history.start), self.pacer)
        if not cuts:
            return None
        # Tokens kept only shrink as the cut moves later: the first fitting cut is found by bisection.
        first = bisect_left(cuts, -self.thresholds.summarize_keep, key=lambda cut: -self.history.kept_from(cut))
        return cuts[first] if first < len(cuts) else cuts[-1]

    async def _summarize(self, record: SessionRecord, outcome: Outcome) -> bool:
        """Replace the oldest span by a summary; on any failure leave the history as it is (and count)."""
        if not self.config.summarize or record.summary_failures >= self.config.max_summary_failures:
            outcome.summary = "skipped"
            return False
        cut = await self._cut()
        if cut is None:
            outcome.summary = "no_safe_cut"
            return False
        key = range_digest(self.layout, self.body, cut, self.summarizer)
        summary = await self.memo.summary(self.tenant, key)
        outcome.summary = "memo"
        if summary is None:
            try:
                summary = await self._write(cut, key, outcome)
            except SummaryFailed as failure:
                outcome.summary = str(failure)
                record.summary_failures += 1
                return True
            outcome.summary = "written"
        outcome.invalidated += self.history.tokens_between(self.history.start, _last_reply(self.layout, self.messages))
        self.history.summarize(cut, summary_message(self.layout, summary))
        record.summary = summary
        return True

    async def _write(self, cut: int, key: str, outcome: Outcome) -> Summary:
        # Write-ahead: the full history is stored before anything is summarized away.
        dump = "ctx_" + digest([self.layout.system(self.body), self.messages])
        await self.originals.put(self.tenant, dump, "history", self.messages, system=self.layout.system(self.body))
        route = self.ctx.services.settings.model_by_name(self.summarizer)
        route = same_keys(self.route, route) if route is not None else None  # the tenant's own provider key
        if route is None:
            raise SummaryFailed("unknown_route")
        window = context_window(route, self.config.default_context_window)
        steps = fit_steps(
            self.history.sent(cut),
            self.counter,
            window - self.config.summary_max_tokens,
            self.config.shrink_preview_chars,
            self.history.sent_counts(cut),
        )
        prefix = await finish_paced(steps, self.pacer)
        request = summary_request(self.layout, self.body, prefix, self.config.summary_max_tokens)
        written = await write_summary(
            self.ctx.services.router, self.layout, route, request, self.config.summarizer_timeout_s
        )
        outcome.summary_cost_usd, outcome.summary_call = written.cost_usd, written
        summary = Summary(cut - self.history.head, key, written.text, dump)
        await self.memo.remember(self.tenant, summary)
        return summary
