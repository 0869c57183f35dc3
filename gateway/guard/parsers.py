"""Per-replica incremental parsing: each session keeps a StepParser that only reads new messages.

Decisions never depend on how much of the history a replica parsed: detectors read the tail, and the
session's position is the number of messages in the request. So a replica that first sees a session
mid-way parses only the tail the detectors need (``tail_start``), starting at an assistant turn so
no step is cut in half; later requests extend that parser. Bounded LRU: an evicted session is re-parsed
from its tail.

A request's work grows with its new messages, not with its history: the parser feeds only what is new
(each message's hashes taken once per content: gateway/history/steps.py), and the history's tool calls
and the bytes held are counted as they are fed. The parser goes on only when the request repeats what
it was fed from the tail's start on; a history edited there, cut, branched or compacted by the client
is parsed again from its tail. An edit before the tail cannot change the steps that decide (steps from
an assistant message on depend only on the messages from there) and is not looked for. A request whose
bytes repeat the session's previous body has each message's facts without serializing its history
(gateway/history/prefix.py): the parser keeps the facts of the messages it was fed, and the same facts
(content-keyed, so the same bytes) prove the repeat with one comparison of references and no look at
any message; otherwise (another wire's converted history, a body not proved) the messages are compared.

Each entry also derives, once per step as steps become final, what every request needs of them: their
call keys counted (``CallRepeats``: a request whose newest call repeats nothing skips the detectors and
the tail) and the admin view's encoding of the last ``STEPS_SHOWN`` of them.

Work and memory stay bounded whatever a caller sends: a parser never holds more than ``3 * keep``
messages (when a request would take it past that, it restarts from the request's tail, which decides
the same), finding the tail walks back at most ``keep`` messages more, and the cache is bounded by
entries and by the bytes the parsers hold on to, per tenant and in total (gateway/bounded.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_runtime.guard import CallRepeats, Step, StepKind, StepParser
from gateway.bounded import Caps, TenantLRU
from gateway.config.guard import GuardConfig, GuardMemoryConfig
from gateway.guard.state import STEPS_SHOWN, step_view
from gateway.history import HistoryView
from gateway.history.prefix import FACT_BYTES
from gateway.history.steps import parts_of
from gateway.metrics import GatewayMetrics

Message = Mapping[str, Any]
StepView = bytes  # a step as the admin view shows it (``step_view``)


def tail_start(messages: Sequence[Message], keep: int) -> int:
    """Index of the assistant message that starts the last ``keep`` messages (or 0); when none is found
    within ``keep`` messages more, the last ``keep`` messages as they are (a tail of user turns holds no
    step to cut in half, and walking further would make the work grow with the history)."""
    tail = max(0, len(messages) - keep)
    start, floor = tail, max(0, tail - keep)
    while start > floor and messages[start].get("role") != "assistant":
        start -= 1
    return start if start == 0 or messages[start].get("role") == "assistant" else tail


def history_tool_calls(fmt: str, messages: Sequence[Message]) -> int:
    """Tool calls the assistant made in the whole history (cheap: no parsing, no hashing)."""
    count = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        if fmt == "openai":
            count += len(message.get("tool_calls") or [])
        elif isinstance(content := message.get("content"), list):
            count += sum(1 for block in content if isinstance(block, Mapping) and block.get("type") == "tool_use")
    return count


def tail_steps(steps: Sequence[Step], tool_calls: int) -> list[Step]:
    """The shortest tail of ``steps`` holding ``tool_calls`` tool calls (all of them if fewer)."""
    seen = 0
    for index in range(len(steps) - 1, -1, -1):
        if steps[index].kind is StepKind.TOOL_CALL:
            seen += 1
            if seen >= tool_calls:
                return list(steps[index:])
    return list(steps)


@dataclass(eq=False)
class _Parsed:
    parser: StepParser
    offset: int  # index of the first message fed to the parser
    tool_calls: int  # in the history up to the last message fed (``history_tool_calls``)
    bytes: int = 0  # JSON bytes of the messages fed (what the entry keeps alive)
    repeats: CallRepeats = field(default_factory=CallRepeats)  # the parser's final steps, counted
    # The admin view of the last final steps (``step_view``), each encoded once.
    shown: deque[StepView] = field(default_factory=lambda: deque(maxlen=STEPS_SHOWN))
    shown_upto: int = 0  # final steps the view has seen

    def catch_up(self) -> None:
        """Count and encode the steps that became final since the last request (only those)."""
        final = self.parser.final_count
        if final > self.repeats.fed:
            self.repeats.feed(self.parser.final_since(self.repeats.fed))
        if final > self.shown_upto:
            self.shown.extend(map(step_view, self.parser.final_since(max(self.shown_upto, final - STEPS_SHOWN))))
            self.shown_upto = final


@dataclass(frozen=True, eq=False)
class SessionSteps:
    """A session's steps as parsed for one request."""

    steps: list[Step]
    tool_calls: int  # in the whole history
    final: int  # steps[:final] are complete; the later ones (the newest turn) may still change
    shown: tuple[bytes, ...]  # ``step_view`` of the last of steps[:final]
    # steps[:final] counted (``CallRepeats.quiet``): valid until the session's next request is parsed
    repeats: CallRepeats

    def view_steps(self) -> list[bytes]:
        """``step_view`` of the last STEPS_SHOWN steps."""
        return [*self.shown, *map(step_view, self.steps[self.final :])][-STEPS_SHOWN:]


def memory_caps(config: GuardMemoryConfig, max_sessions: int) -> Caps:
    return Caps(
        max_entries=max_sessions,
        max_bytes=config.parser_cache_bytes,
        max_entries_per_tenant=min(config.parser_cache_sessions_per_tenant, max_sessions),
        max_bytes_per_tenant=min(config.parser_cache_bytes_per_tenant, config.parser_cache_bytes),
    )


class SessionParsers:
    """Steps of each session's history, parsed incrementally (one parser per session, LRU-bounded by
    sessions and bytes, per tenant and in total). Session keys are "tenant:session" (ctx.session_key)."""

    def __init__(
        self,
        max_sessions: int,
        memory: GuardMemoryConfig | None = None,
        on_evict: Callable[[str, str], None] | None = None,
    ) -> None:
        self.max_sessions = max_sessions
        self._parsed: TenantLRU[_Parsed] = TenantLRU(memory_caps(memory or GuardMemoryConfig(), max_sessions), on_evict)

    @classmethod
    def create(cls, config: GuardConfig, metrics: GatewayMetrics) -> SessionParsers:
        """Sized by the global guard policy; evictions counted as cache="guard_parsers"."""
        evictions = metrics.memory_evictions
        return cls(config.parser_cache_sessions, config.memory, lambda _, r: evictions.labels("guard_parsers", r).inc())

    def __len__(self) -> int:
        return len(self._parsed)

    @property
    def bytes(self) -> int:
        """Bytes of the messages the cached parsers hold (what keeps their entries alive)."""
        return self._parsed.bytes

    def tenant_usage(self, tenant: str) -> tuple[int, int]:
        return self._parsed.tenant_usage(tenant)

    def steps(
        self, session: str, fmt: str, messages: Sequence[Message], keep: int, view: HistoryView | None = None
    ) -> tuple[list[Step], int]:
        """The steps of (at least the last ``keep`` messages of) ``messages``, and the tool calls of the
        whole history. ``view``: the request's history view (its messages' facts)."""
        parsed = self.parse(session, fmt, messages, keep, view)
        return parsed.steps, parsed.tool_calls

    def parse(
        self, session: str, fmt: str, messages: Sequence[Message], keep: int, view: HistoryView | None = None
    ) -> SessionSteps:
        """``steps``, with the counts and views kept alongside (work: the new messages and steps only)."""
        view = view or HistoryView()
        # Each message's facts, when the request has them without serializing its history (its bytes
        # repeat the session's previous body): content-keyed, so equal facts vouch for equal messages.
        known = view.known_facts(messages)
        parsed = self._parsed.get(session)
        start = tail_start(messages, keep)
        if (
            parsed is None
            or parsed.parser.format != fmt
            or not parsed.offset < len(messages) <= parsed.offset + 3 * keep
            or not parsed.parser.extends(
                messages[parsed.offset :],
                max(start - parsed.offset, 0),
                known[parsed.offset :] if known is not None else None,
            )
        ):
            parsed = _Parsed(StepParser(fmt), start, history_tool_calls(fmt, messages[:start]))
        fed = parsed.offset + parsed.parser.messages_seen
        new = messages[fed:]
        facts = known[fed:] if known is not None else [view.facts(message) for message in new]
        parsed.parser.feed(new, parts_of(view, fmt), facts if known is not None else None)
        parsed.tool_calls += history_tool_calls(fmt, new)
        # The facts kept as keys are the memo's, but kept alive here too (counted as prefix.py does).
        parsed.bytes += sum(fact.size for fact in facts) + (FACT_BYTES * len(facts) if known is not None else 0)
        self._parsed.put(session, session.split(":", 1)[0], parsed, parsed.bytes)
        parsed.catch_up()
        final = parsed.parser.final_count
        return SessionSteps(parsed.parser.steps, parsed.tool_calls, final, tuple(parsed.shown), parsed.repeats)

    def forget(self, session: str) -> None:
        self._parsed.pop(session)
