"""Cache keys: the canonical form of a request, its exact key, and the semantic scope of its last user turn.

The canonical request keeps everything that can change the answer (model, every message, system,
tools, tool choice, response format, sampling parameters, max tokens) and drops what cannot (stream
flags, user/metadata ids, prompt-cache hints, `cache_control` markers). Sampling parameters the caller
omitted are filled with the provider's defaults: an omitted temperature is 1, not 0. The headers sent on
to the provider (anthropic-beta, openai-beta, anthropic-version: gateway/wire/fields.py) select features
and versions, so they are part of the request too; other headers never reach the provider. Messages are
keyed by the digests of their canonical forms (`message_digest`), remembered per message content, so a
request costs its new messages' work, not its history's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import Any
from urllib.parse import quote, unquote

import orjson

from gateway.history import HistoryView
from gateway.pacing import finish
from gateway.wire.fields import forwarded_headers

# Body fields that never change the answer.
NON_SEMANTIC_FIELDS = frozenset(
    {
        "stream",
        "stream_options",
        "user",
        "metadata",
        "prompt_cache_key",
        "prompt_cache_retention",
        "store",
        "service_tier",
        "safety_identifier",
        "client_metadata",  # Codex: session, turn and window ids
    }
)
# Provider defaults, so an omitted parameter and its default value key alike.
SAMPLING_DEFAULTS: dict[str, dict[str, float]] = {
    "openai": {"temperature": 1.0, "top_p": 1.0, "n": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0},
    "anthropic": {"temperature": 1.0},
    "responses": {"temperature": 1.0, "top_p": 1.0},
    # Gemini's sampling parameters sit inside generationConfig, keyed as sent; its model is in the URL
    # (the route, part of every key's place). The semantic tier sits out: no `messages` to embed.
    "gemini": {},
}
# The wires whose requests this module can key.
CACHEABLE_WIRES = frozenset(SAMPLING_DEFAULTS)
# Request-level fields that shape the answer but are not the conversation.
SETTING_FIELDS_EXCLUDED = frozenset({"messages", "model"})
SYSTEM_ROLES = frozenset({"system", "developer"})
HEADERS_KEY = " headers"  # a space: never a body field name of either API
_RESPONSE_CACHE = attrgetter("response_cache")


def raw_digest(value: Any) -> bytes:
    """A stable 128-bit hash of a JSON-able value (key order does not matter)."""
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def digest(value: Any) -> str:
    return raw_digest(value).hex()


def _blocks(content: Any) -> Any:
    """Content as a list of blocks without cache_control: "hi" and [{type: text, text: hi}] are one prompt."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b for b in content]
    return content


def _message(message: dict[str, Any]) -> dict[str, Any]:
    canonical = {k: v for k, v in message.items() if k != "cache_control"}
    if "content" in canonical:
        canonical["content"] = _blocks(canonical["content"])
    return canonical


def answer_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The forwarded headers, normalised: a beta list is a set ("b, a" is "a,b")."""
    normalised = {}
    for name, value in forwarded_headers(headers).items():
        if name.endswith("-beta"):
            value = ",".join(sorted({part.strip() for part in value.split(",") if part.strip()}))
        normalised[name] = value
    return normalised


def message_digest(message: dict[str, Any]) -> bytes:
    """128 bits naming a message's canonical form (key order, marks and a string content's shape do not
    matter): two messages the provider reads alike digest alike."""
    return raw_digest(_message(message))


def _tools(tools: Any) -> Any:
    return [_message(t) if isinstance(t, dict) else t for t in tools] if isinstance(tools, list) else tools


# The body's large parts, keyed by the digest of their canonical form (taken once per content: an agent
# CLI sends tens of kilobytes of them, unchanged, on every request), and how each is made canonical.
PART_FORMS: dict[str, Callable[[Any], Any]] = {"system": _blocks, "tools": _tools}


def _part_digest(view: HistoryView, name: str, value: Any, form: Callable[[Any], Any]) -> str:
    """The digest of the canonical form of the body's part `name`, kept in the part's facts."""
    facts = view.part_facts(name, value)
    if facts.response_cache is None:
        facts.response_cache = raw_digest(form(value))
    return facts.response_cache.hex()


@dataclass(frozen=True, slots=True)
class CanonicalRequest:
    """A request as the cache keys it: its settings (every field but the messages, normalised), and its
    messages as digests of their canonical forms, taken once per message content (gateway/history/): an
    agent's request repeats the previous one's messages, so keying it serializes its new messages only."""

    settings: dict[str, Any]
    messages: list[bytes]  # each message's `message_digest`, in order
    history: list[dict[str, Any]]  # the messages (their roles, read only by the semantic tier)
    last: dict[str, Any] | None  # the last message's canonical form (the semantic tier reads its text)


def canonical_request(
    wire: str, body: dict[str, Any], headers: Mapping[str, str] | None = None, view: HistoryView | None = None
) -> CanonicalRequest:
    """`view`: the request's shared message facts, where the messages' digests are remembered."""
    settings: dict[str, Any] = {k: v for k, v in body.items() if k not in NON_SEMANTIC_FIELDS and k != "messages"}
    if sent := answer_headers(headers or {}):
        # Under a key no body field has; absent when none is sent.
        settings[HEADERS_KEY] = sent
    for name, default in SAMPLING_DEFAULTS.get(wire, {}).items():
        value = settings.get(name)
        settings[name] = float(value) if isinstance(value, int | float) else default
    view = view or HistoryView()
    for name, form in PART_FORMS.items():
        if name in settings:
            settings[name] = _part_digest(view, name, settings[name], form)
    history = body.get("messages")
    history = history if isinstance(history, list) else []
    known = finish(view.facts_steps(history))
    if not all(map(isinstance, history, repeat(dict))):  # never sent by a client the provider answers
        kept = [(m, f) for m, f in zip(history, known, strict=True) if isinstance(m, dict)]
        history, known = [m for m, _ in kept], [f for _, f in kept]
    digests = list(map(_RESPONSE_CACHE, known))  # in C: a request repeats its history's digests
    for index in compress(range(len(digests)), map(is_, digests, repeat(None))):
        digests[index] = known[index].response_cache = message_digest(history[index])
    return CanonicalRequest(settings, digests, history, _message(history[-1]) if history else None)


def exact_key(wire: str, canonical: CanonicalRequest) -> str:
    """blake2b-128 of the API shape, the settings and the messages' digests (fixed size, counted: the
    bytes name one request)."""
    hashed = hashlib.blake2b(digest_size=16)
    hashed.update(orjson.dumps([wire, canonical.settings, len(canonical.messages)], option=orjson.OPT_SORT_KEYS))
    hashed.update(b"".join(canonical.messages))
    return hashed.hexdigest()


def _text_only(content: Any) -> str | None:
    """The text of a content value, or None when it holds anything but text (images, tool results)."""
    parts = []
    for block in _blocks(content):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            return None
        parts.append(block["text"])
    return "\n".join(parts)


def carries_tool_results(wire: str, messages: list[dict[str, Any]]) -> bool:
    if wire == "openai":
        return any(m.get("role") in ("tool", "function") for m in messages)
    return any(
        isinstance(b, dict) and b.get("type") == "tool_result"
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
    )


@dataclass(frozen=True, slots=True)
class SemanticScope:
    """Where a last user turn may find its near-duplicates: same settings, same conversation before it."""

    prompt: str  # the last user turn, the only text embedded
    settings_hash: str  # system prompt + tools + response format + sampling params
    history_hash: str  # the conversation before the last user turn


def semantic_scope(wire: str, canonical: CanonicalRequest) -> SemanticScope | None:
    """None when the request does not end with a text-only user turn (nothing meaningful to embed)."""
    last = canonical.last
    if last is None or last.get("role") != "user":
        return None
    prompt = _text_only(last.get("content"))
    if not prompt or not prompt.strip():
        return None
    roles = [role if isinstance(role := m.get("role"), str) else None for m in canonical.history[:-1]]
    earlier = list(zip(canonical.messages[:-1], roles, strict=True))
    system = [message.hex() for message, role in earlier if role in SYSTEM_ROLES]
    settings = {k: v for k, v in canonical.settings.items() if k not in SETTING_FIELDS_EXCLUDED}
    return SemanticScope(
        prompt=prompt,
        settings_hash=digest([wire, settings, system]),
        history_hash=digest([message.hex() for message, role in earlier if role not in SYSTEM_ROLES]),
    )


# -- storage layout: rc:{tenant}:{namespace}:{model}:{tier}:{{hash}}, segments percent-encoded -------------
# The hash sits in braces, a Redis Cluster hash tag (percent-encoding leaves no other brace in a key): an
# entry and the keys that go with it (its flight lock: gateway/response_cache/coalesce.py) share a slot,
# so one script reads the one and takes the other, while entries spread over every slot.

EXACT_TIER, SEMANTIC_TIER = "x", "s"


def _segments(tenant: str, namespace: str, model: str) -> str:
    return "rc:" + "".join(quote(part, safe="") + ":" for part in (tenant, namespace, model))


# A few places serve most requests, and each request makes its key twice. The cache holds short ones only
# (namespace and model are the caller's: at most 4,096 entries of 512 characters).
_remembered = lru_cache(maxsize=4096)(_segments)
_REMEMBERED_CHARS = 512


@dataclass(frozen=True, slots=True)
class Place:
    """Whose entry it is: purges select by these."""

    tenant: str
    namespace: str
    model: str

    def key(self, tier: str, hashed: str) -> str:
        return f"{self.prefix()}{tier}:{{{hashed}}}"

    def prefix(self) -> str:
        short = len(self.tenant) + len(self.namespace) + len(self.model) <= _REMEMBERED_CHARS
        return (_remembered if short else _segments)(self.tenant, self.namespace, self.model)

    def matches(self, tenant: str | None, namespace: str | None, model: str | None) -> bool:
        return all(
            want is None or want == have
            for want, have in ((tenant, self.tenant), (namespace, self.namespace), (model, self.model))
        )


def place_of(key: str) -> Place | None:
    parts = key.split(":")
    if len(parts) != 6 or parts[0] != "rc":
        return None
    return Place(*(unquote(p) for p in parts[1:4]))


def purge_prefix(tenant: str | None, namespace: str | None) -> str:
    """The narrowest key prefix that holds every entry a purge selects."""
    if tenant is None:
        return "rc:"
    if namespace is None:
        return "rc:" + quote(tenant, safe="") + ":"
    return "rc:" + quote(tenant, safe="") + ":" + quote(namespace, safe="") + ":"


def tier_of(key: str) -> str | None:
    parts = key.split(":")
    return parts[4] if len(parts) == 6 and parts[0] == "rc" else None
