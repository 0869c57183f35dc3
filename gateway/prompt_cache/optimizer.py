"""One request through the optimizer: a new body (the caller's is never touched) and what was done.

A request may hold 100,000 messages: every walk over them is a step generator (gateway/compaction/
pacing.py) that the stage runs paced, so no stretch of it holds the event loop for long; `optimize` runs
the same steps in one go (tests, tools).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.history import HistoryView, MessageFacts
from gateway.pacing import CHUNK, Steps, finish
from gateway.prompt_cache.breakpoints import Limits, Placement, plan_breakpoints
from gateway.prompt_cache.layout import block_groups
from gateway.prompt_cache.min_tokens import min_cacheable_tokens
from gateway.prompt_cache.prefix import PartHash, PrefixBreak, diagnose, record_prefix_steps
from gateway.prompt_cache.providers import CacheStyle, cache_style
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.session_key import session_cache_key
from gateway.prompt_cache.shapes import SHAPES, Shape, system_indexes
from gateway.prompt_cache.survey import SurveyHead, set_marks, survey_steps
from gateway.prompt_cache.system_part import SystemFacts, held, kinds_steps
from gateway.prompt_cache.system_text import SystemPrompt
from gateway.prompt_cache.tools_part import ToolsPart, tools_part_steps
from gateway.prompt_cache.ttl import Ttl, choose_ttl, recent_gaps
from gateway.prompt_cache.turns import Prefix, Turn
from gateway.prompt_cache.volatile import relocation_note, replace_spans_steps
from gateway.prompt_cache.work import WorkingCopy, copy_of

KEY_FIELDS = ("prompt_cache_key", "prompt_cache_retention")
STATIC_CAUSES = {"model_changed", "tools_changed", "system_changed"}


@dataclass(slots=True)
class Outcome:
    body: dict[str, Any]
    style: CacheStyle
    prefix_break: PrefixBreak
    state: SessionState
    volatile: list[str] = field(default_factory=list)  # kinds found in tools/system
    relocated: bool = False
    placements: list[Placement] = field(default_factory=list)
    client_marks: int = 0
    skipped: str | None = None  # why no marks were placed
    ttl: Ttl | None = None
    key_action: str | None = None  # set | stripped
    prefix: Prefix | None = None  # per-message results the line's next request can start from (turns.py)

    def headers(self) -> dict[str, str]:
        headers = {"x-cachegate-prefix-break": self.prefix_break.header()}
        if self.volatile:
            headers["x-cachegate-volatile"] = ",".join(self.volatile) + ("; relocated" if self.relocated else "")
        if self.style is CacheStyle.ANTHROPIC:
            headers["x-cachegate-cache-breakpoints"] = self._breakpoints_header()
        return headers

    def _breakpoints_header(self) -> str:
        if self.skipped:
            return f"skipped={self.skipped}; client={self.client_marks}"
        ours = ",".join(f"{p.kind}:{p.ttl}@{p.position}" for p in self.placements) or "none"
        return f"{ours}; client={self.client_marks}"


def _volatile_kinds(
    tools: ToolsPart, system: SystemPrompt, facts: MessageFacts | None, held_facts: SystemFacts | None
) -> Steps[list[str]]:
    """Kinds of volatile content in the system prompt and the tools; `facts`: the system prompt's, when it
    is one body field as the caller sent it, `held_facts`: when values of its own hold it (either way its
    kinds are scanned once per content)."""
    if held_facts is not None:
        found = held_facts.kinds
    elif facts is None:
        found = yield from kinds_steps(system)
    else:
        if facts.volatile is None:
            facts.volatile = yield from kinds_steps(system)
        found = facts.volatile
    return sorted(tools.kinds | found)


def _holders_facts(
    system: SystemPrompt, work: dict[str, Any], at: list[int], facts: list[MessageFacts] | None, parts: HistoryView
) -> list[MessageFacts] | None:
    """The facts of the values that hold the system prompt: the body's fields (Responses' instructions) by
    their part facts, then the messages at `at` by the history's; None when the history's are not known."""
    if facts is None or system.whole:  # one field: its own facts, when it is there
        return None
    fields = [key for holder, key in system.holders if holder is work]
    if len(system.holders) != len(fields) + len(at) or not all(key in work for key in fields):
        return None
    return [*(parts.part_facts(key, work[key]) for key in fields), *(facts[index] for index in at)]


def _take_volatile(body: dict[str, Any], shape: Shape, system: SystemPrompt) -> Steps[list[str]]:
    """Replace the system prompt's volatile spans by placeholders; their values, in order. Nothing is
    taken when no note can follow the newest turn (a request ending with an assistant prefill)."""
    if shape.ends_with_reply(body):
        return []
    values: list[str] = []
    for text_field in system.fields():
        replaced, spans = yield from replace_spans_steps(text_field.text, len(values) + 1)
        if spans:
            text_field.replace(replaced)
            values += [span.value for span in spans]
    return values


def _place_marks(
    outcome: Outcome,
    work: WorkingCopy,
    wire: str,
    route: ModelConfig,
    config: PromptCacheConfig,
    previous: SessionState,
    facts: list[MessageFacts] | None,
    head: SurveyHead | None,
    system: list[int] | None,
    static: bytes | None,
) -> Steps[SurveyHead | None]:
    """Plan and place the marks; the survey's known run (for the line's next request: turns.py)."""
    body = work.body
    skip = config.skip_unstable_prefix and outcome.state.static_changes >= 2
    # Token counts are only needed when marks will be planned.
    min_tokens = 0 if skip else config.min_tokens if config.min_tokens is not None else min_cacheable_tokens(route)
    survey = yield from survey_steps(work, wire, outcome.prefix_break, min_tokens, facts, head, system, static)
    if not survey.count:
        return survey.head
    client = survey.client
    automatic = isinstance(body.get("cache_control"), dict) if wire == "anthropic" else False
    outcome.client_marks = len(client) + int(automatic)
    last = survey.count - (2 if outcome.relocated else 1)
    if automatic:
        client.setdefault(survey.count - 1, body["cache_control"])
    outcome.ttl = choose_ttl(outcome.state.gaps, config)
    if skip:
        outcome.skipped = "unstable_prefix"
    else:
        limits = Limits(
            max_marks=config.max_breakpoints - (outcome.client_marks - len(client)),
            # An intermediate mark must sit within the lookback of the entry it reads.
            every=min(config.intermediate_every_blocks, config.lookback_blocks - 1),
            min_tokens=min_tokens,
        )
        anchor = max((p for p in previous.marks if p < survey.common), default=None)
        outcome.placements = plan_breakpoints(
            survey.tokens.ends,
            survey.markable,
            client,
            static_end=survey.static_end,
            last=last if last >= 0 else None,
            anchor=anchor,
            ttl=outcome.ttl,
            limits=limits,
        )
        marks = {
            p.position: {"type": "ephemeral", "ttl": "1h"} if p.ttl == "1h" else {"type": "ephemeral"}
            for p in outcome.placements
        }
        set_marks(work, wire, survey, marks)
    outcome.state.marks = sorted({*client, *(p.position for p in outcome.placements)})
    return survey.head


def _static_digest(
    tools: MessageFacts,
    config: PromptCacheConfig,
    shape: Shape,
    body: dict[str, Any],
    system: MessageFacts | None,
    relocated: bool,
) -> bytes | None:
    """What the working copy's blocks before the history are made of: the caller's tools (as the config
    sends them) and, outside the history, the system prompt as the caller sent it (None: unknown)."""
    sent_tools = tools.digest + (b"c" if config.canonical_tools else b"a")
    if shape.system_messages:  # a system prompt of messages: part of the history
        return sent_tools
    if relocated or (system is None and "system" in body):
        return None
    return sent_tools + (system.digest if system is not None else b"")


def _session_keys(
    outcome: Outcome, shape: Shape, route: ModelConfig, config: PromptCacheConfig, session_key: str | None
) -> None:
    body = outcome.body
    if not shape.cache_key:
        return
    if route.provider not in config.key_providers:
        removed = [body.pop(name) for name in KEY_FIELDS if name in body]
        if removed:
            outcome.key_action = "stripped"  # providers that reject unknown fields would answer 400
        return
    if config.prompt_cache_key and session_key and "prompt_cache_key" not in body:
        body["prompt_cache_key"] = session_cache_key(session_key)
        outcome.key_action = "set"
    if config.retention and "prompt_cache_retention" not in body:
        body["prompt_cache_retention"] = config.retention
        outcome.key_action = "set"


def _strip_marks(work: WorkingCopy, wire: str) -> Steps[None]:
    """LiteLLM turns marks into billed explicit caches on Gemini: never let that happen implicitly (every
    message is copied first: any may carry marks)."""
    body = work.body
    body.pop("cache_control", None)
    work.own_tools()
    work.own_fields()
    for index in range(len(work.messages)):
        work.own(index)
        if index % CHUNK == CHUNK - 1:
            yield
    for index, group in enumerate(block_groups(body, wire)):
        for block in group:
            block.clear_mark()
        if index % CHUNK == CHUNK - 1:
            yield
    for index, message in enumerate(body.get("messages") or []):
        if isinstance(message, dict):
            message.pop("cache_control", None)
        if index % CHUNK == CHUNK - 1:
            yield


def optimize(
    body: dict[str, Any],
    wire: str,
    route: ModelConfig,
    config: PromptCacheConfig,
    previous: SessionState,
    session_key: str | None,
    now: float,
) -> Outcome:
    return finish(optimize_steps(body, wire, route, config, previous, session_key, now))


def optimize_steps(
    body: dict[str, Any],
    wire: str,
    route: ModelConfig,
    config: PromptCacheConfig,
    previous: SessionState,
    session_key: str | None,
    now: float,
    view: HistoryView | None = None,
    turn: Turn | None = None,
) -> Steps[Outcome]:
    """The request as it should go upstream, with diagnostics; `previous` is the session's state, `view`
    the request's shared message facts (gateway/history/: the digests other stages already took),
    `turn` what the line's previous request left in this process (only saves work: turns.py)."""
    shape = SHAPES[wire]
    # The facts of the caller's messages (already taken by earlier stages) hold for the copy's.
    facts = (yield from view.facts_steps(shape.messages(body))) if view is not None else None
    head = turn.prefix_of(wire, facts) if turn is not None else None
    copy = copy_of(body, shape)  # its tools: tools_part_steps gives new ones
    work = copy.body
    style = cache_style(route, config)
    parts = view or HistoryView()  # the facts of the body's tools and system prompt
    given = work.get("tools")  # the caller's (not copied): its facts are those of the body's tools
    tools_facts = parts.part_facts("tools", given)
    sent_tools, tools_part = yield from tools_part_steps(given, config.canonical_tools, tools_facts)
    if "tools" in work:
        work["tools"] = sent_tools
    at: list[int] = []  # the system messages' positions (read before any message is copied)
    if shape.system_messages:
        at = system_indexes(copy.messages, (len(head.facts), head.system) if head is not None else None)
    if config.relocate_volatile:  # the system prompt's text may be replaced, wherever the shape keeps it
        copy.own_fields()
    system = yield from shape.system_steps(work, copy.own, at)
    # One body field (the copy's is the caller's content, before any relocation): its facts are known.
    name = system.holders[0][1] if system.whole and system.holders and system.holders[0][1] in body else None
    system_facts = parts.part_facts(name, body[name]) if name is not None else None
    holders = _holders_facts(system, work, at, facts, parts) if system_facts is None else None
    held_facts = (yield from held.facts_steps(system, holders)) if holders is not None else None
    volatile = yield from _volatile_kinds(tools_part, system, system_facts, held_facts)
    moved = (yield from _take_volatile(work, shape, system)) if config.relocate_volatile else []
    # Recorded before the note is added: the note is not history, the next request will not repeat it.
    # The session's previous record only saves work (messages it already digested are not masked again).
    messages = shape.messages(work)
    digests = facts  # a relocation changed a message: its facts do not hold for the copy (its blocks' do)
    if moved or (facts is not None and len(facts) != len(messages)):
        digests = head = None
    tools, part = work.get("tools"), system.part()
    known = (len(head.facts), head.plain, head.masked) if head is not None else None
    system_hash = None
    if system_facts is not None and not moved:  # hashed once per content
        system_hash = yield from PartHash.of_known_steps(part, system_facts)
    elif held_facts is not None and not moved:
        system_hash = held_facts.hash
    record = yield from record_prefix_steps(
        route.name, tools, part, messages, previous.record, digests,
        tools_hash=tools_part.hash, system_hash=system_hash, head=known,
    )  # fmt: skip
    relocated = bool(moved)
    if relocated:
        shape.append_note(work, relocation_note(moved), copy.own)
    found = diagnose(previous.record, record) if session_key else PrefixBreak("no_session")
    static_changed = found.cause in STATIC_CAUSES or found.where in ("tools", "system")
    state = SessionState(
        last_seen=now,
        gaps=recent_gaps(previous.gaps, previous.last_seen, now),
        record=record,
        static_changes=previous.static_changes + 1 if static_changed else 0,
    )
    outcome = Outcome(work, style, found, state, volatile=volatile, relocated=relocated)
    run = None
    if style is CacheStyle.ANTHROPIC and config.breakpoints:
        if shape.marks:
            surveyed = head.survey if head is not None else None
            system_at = at if shape.system_messages else None
            static = _static_digest(tools_facts, config, shape, body, system_facts, relocated)
            run = yield from _place_marks(
                outcome, copy, wire, route, config, previous, facts, surveyed, system_at, static
            )
        else:  # the body has no field for marks (docs/prompt-cache.md, per wire)
            outcome.skipped = f"{wire}_wire"
    elif style is CacheStyle.GEMINI and not config.gemini_explicit_cache and shape.marks:
        yield from _strip_marks(copy, wire)
    _session_keys(outcome, shape, route, config, session_key)
    if digests is not None:  # the record's digests are the caller's messages' (as `at` is their positions)
        outcome.prefix = Prefix(digests, record.plain, record.masked, at, run)
    return outcome
