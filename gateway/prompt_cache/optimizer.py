"""One request through the optimizer: a new body (the caller's is never touched) and what was done."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.prompt_cache.breakpoints import Limits, Placement, plan_breakpoints
from gateway.prompt_cache.canonical import canonical_tools
from gateway.prompt_cache.layout import Block, prompt_blocks
from gateway.prompt_cache.min_tokens import min_cacheable_tokens
from gateway.prompt_cache.prefix import PrefixBreak, diagnose, record_prefix, serialize
from gateway.prompt_cache.providers import CacheStyle, cache_style
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.session_key import session_cache_key
from gateway.prompt_cache.system_text import append_note, system_fields, system_part
from gateway.prompt_cache.tokens import prefix_tokens
from gateway.prompt_cache.ttl import Ttl, choose_ttl, recent_gaps
from gateway.prompt_cache.volatile import find_spans, relocation_note, replace_spans

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


def _copy(body: dict[str, Any]) -> dict[str, Any]:
    """A deep copy at JSON speed: every change lands on it, the caller's body stays as it came."""
    copied: dict[str, Any] = orjson.loads(orjson.dumps(body))
    return copied


def _ends_with_assistant(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") == "assistant"


def _take_volatile(body: dict[str, Any], wire: str) -> list[str]:
    """Replace the system prompt's volatile spans by placeholders; their values, in order. Nothing is
    taken when no note can follow the newest turn (a request ending with an assistant prefill)."""
    if _ends_with_assistant(body):
        return []
    values: list[str] = []
    for text_field in system_fields(body, wire):
        replaced, spans = replace_spans(text_field.text, len(values) + 1)
        if spans:
            text_field.replace(replaced)
            values += [span.value for span in spans]
    return values


def _common_blocks(blocks: list[Block], found: PrefixBreak) -> int:
    """How many leading blocks the previous request shares with this one."""
    if found.cause in ("first_request", "model_changed") or found.where == "tools":
        return 0
    if found.where == "system":
        return sum(1 for b in blocks if b.section == "tools")
    if found.message_index is None:
        return len(blocks)
    return sum(1 for b in blocks if b.message is None or b.message < found.message_index)


def _place_marks(
    outcome: Outcome, wire: str, route: ModelConfig, config: PromptCacheConfig, previous: SessionState
) -> None:
    body = outcome.body
    blocks = prompt_blocks(body, wire)
    if not blocks:
        return
    client = {i: block.mark for i, block in enumerate(blocks) if block.mark is not None}
    automatic = isinstance(body.get("cache_control"), dict) if wire == "anthropic" else False
    outcome.client_marks = len(client) + int(automatic)
    last = len(blocks) - (2 if outcome.relocated else 1)
    if automatic:
        client.setdefault(len(blocks) - 1, body["cache_control"])
    outcome.ttl = choose_ttl(outcome.state.gaps, config)
    if config.skip_unstable_prefix and outcome.state.static_changes >= 2:
        outcome.skipped = "unstable_prefix"
    else:
        limits = Limits(
            max_marks=config.max_breakpoints - (outcome.client_marks - len(client)),
            # An intermediate mark must sit within the lookback of the entry it reads.
            every=min(config.intermediate_every_blocks, config.lookback_blocks - 1),
            min_tokens=config.min_tokens if config.min_tokens is not None else min_cacheable_tokens(route),
        )
        statics = [i for i, b in enumerate(blocks) if b.section != "messages"]
        common = _common_blocks(blocks, outcome.prefix_break)
        anchor = max((p for p in previous.marks if p < common), default=None)
        outcome.placements = plan_breakpoints(
            prefix_tokens(blocks, limits.min_tokens),
            [b.markable for b in blocks],
            client,
            static_end=statics[-1] if statics else None,
            last=last if last >= 0 else None,
            anchor=anchor,
            ttl=outcome.ttl,
            limits=limits,
        )
        for placement in outcome.placements:
            mark = {"type": "ephemeral", "ttl": "1h"} if placement.ttl == "1h" else {"type": "ephemeral"}
            blocks[placement.position].set_mark(mark)
    outcome.state.marks = sorted({*client, *(p.position for p in outcome.placements)})


def _session_keys(
    outcome: Outcome, wire: str, route: ModelConfig, config: PromptCacheConfig, session_key: str | None
) -> None:
    body = outcome.body
    if wire != "openai":
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


def _strip_marks(body: dict[str, Any], wire: str) -> None:
    """LiteLLM turns marks into billed explicit caches on Gemini: never let that happen implicitly."""
    body.pop("cache_control", None)
    for block in prompt_blocks(body, wire):
        block.clear_mark()
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            message.pop("cache_control", None)


def optimize(
    body: dict[str, Any],
    wire: str,
    route: ModelConfig,
    config: PromptCacheConfig,
    previous: SessionState,
    session_key: str | None,
    now: float,
) -> Outcome:
    """The request as it should go upstream, with diagnostics; `previous` is the session's state."""
    work = _copy(body)
    style = cache_style(route, config)
    if config.canonical_tools and isinstance(work.get("tools"), list):
        work["tools"] = canonical_tools(work["tools"])
    volatile = sorted(
        {span.kind for f in system_fields(work, wire) for span in find_spans(f.text)}
        | ({span.kind for span in find_spans(serialize(work["tools"]).decode())} if work.get("tools") else set())
    )
    moved = _take_volatile(work, wire) if config.relocate_volatile else []
    # Recorded before the note is added: the note is not history, the next request will not repeat it.
    record = record_prefix(route.name, work.get("tools"), system_part(work, wire), work.get("messages") or [])
    relocated = bool(moved)
    if relocated:
        append_note(work, wire, relocation_note(moved))
    found = diagnose(previous.record, record) if session_key else PrefixBreak("no_session")
    static_changed = found.cause in STATIC_CAUSES or found.where in ("tools", "system")
    state = SessionState(
        last_seen=now,
        gaps=recent_gaps(previous.gaps, previous.last_seen, now),
        record=record,
        static_changes=previous.static_changes + 1 if static_changed else 0,
    )
    outcome = Outcome(work, style, found, state, volatile=volatile, relocated=relocated)
    if style is CacheStyle.ANTHROPIC and config.breakpoints:
        _place_marks(outcome, wire, route, config, previous)
    elif style is CacheStyle.GEMINI and not config.gemini_explicit_cache:
        _strip_marks(work, wire)
    _session_keys(outcome, wire, route, config, session_key)
    return outcome
