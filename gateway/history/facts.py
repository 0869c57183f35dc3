"""What the stages derive from one message's content, remembered by a digest of that content.

Agents resend the whole history on every turn, so every message but the newest two was seen on the
previous request. Each stage used to serialize and hash every message again (token counting's memo key,
the prompt cache's per-message digests, ...). A message's facts depend only on its bytes: they are kept
here, one entry per distinct content, in a bounded LRU per process. Being keyed by content they are
valid on every replica without a round trip to shared state (a replica that never saw a message
computes its facts once). Losing an entry only costs its recomputation.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_runtime.guard import MessageParts
    from gateway.compaction.results import MessageResults
    from gateway.prompt_cache.survey import MessageBlocks

DIGEST_SIZE = 16  # 128 bits: a collision between two messages is not a practical concern
# Blocks a provider counts as an image, whatever their size (Chat's "image_url", Messages' "image" and
# "document", Responses' "input_image"): compaction counts each a flat number of tokens
# (gateway/compaction/tokens.py) and bounds a body's tokens with that count per mark (bounds.py).
IMAGE_TYPES = frozenset({"image", "image_url", "input_image", "document"})
_IMAGE_MARKS = tuple(b'"type":"%s"' % kind.encode() for kind in sorted(IMAGE_TYPES))
MEMO_SIZE = 50_000  # entries of ~550 bytes each (measured): ~27 MB at most (a SWE-bench session: ~100 messages)


def image_marks(data: bytes) -> int:
    """The image blocks in compact JSON (orjson's, as every message's facts are taken): each is an object
    whose "type" is one of IMAGE_TYPES, written `"type":"<kind>"` once (a quote inside a string is escaped,
    so no text counts). Byte scans in C: a message's images without walking its values."""
    return sum(map(data.count, _IMAGE_MARKS))


def content_digest(data: bytes, kind: bytes = b"") -> bytes:
    """SHA-256 (hardware-accelerated on current CPUs: twice BLAKE2b's speed here), truncated. `kind`: what
    the content is, when not a message (a body's tools, its system prompt): the same bytes in another role
    are another entry."""
    hashed = hashlib.sha256(kind)
    hashed.update(data)
    return hashed.digest()[:DIGEST_SIZE]


@dataclass(slots=True, eq=False)
class MessageFacts:
    """One message content's facts; a stage fills in its own field the first time it needs it. A body's
    other top-level values (its tools, a system prompt: `HistoryView.part_facts`) have facts of the same
    kind, filled in by the stages that read them."""

    digest: bytes
    size: int  # bytes of the message's JSON
    image_marks: int  # its image blocks (`image_marks`)
    # By tiktoken encoding name (a body part's: by "<how counted>:<encoding>", gateway/compaction/tokens.py)
    tokens: dict[str, int] = field(default_factory=dict)
    prompt_cache: tuple[bytes, bytes] | None = None  # (plain, masked) digests: gateway/prompt_cache/prefix.py
    compaction: MessageResults | None = None  # its tool calls and results: gateway/compaction/results.py
    response_cache: bytes | None = None  # digest of its canonical form: gateway/response_cache/keys.py
    prompt_blocks: MessageBlocks | None = None  # what its prompt blocks say: gateway/prompt_cache/survey.py
    guard: tuple[str, MessageParts] | None = None  # (format, its steps' parts): gateway/history/steps.py
    volatile: frozenset[str] | None = None  # volatile kinds in a system prompt: gateway/prompt_cache/optimizer.py


def starts_with(facts: Sequence[MessageFacts], prefix: list[MessageFacts]) -> bool:
    """Whether a history's facts begin with an earlier one's: the same facts objects in the same places
    (MessageFacts compare by identity, one per content), so the same messages, checked in C."""
    return len(prefix) <= len(facts) and facts[: len(prefix)] == prefix


class FactMemo:
    """Bounded LRU of MessageFacts by content digest (least recently used out first)."""

    def __init__(self, max_entries: int = MEMO_SIZE) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, MessageFacts] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def facts(self, data: bytes, kind: bytes = b"") -> MessageFacts:
        """The facts of the message whose JSON is `data` (`kind`: of the body part, see content_digest):
        remembered ones, else a new empty entry."""
        digest = content_digest(data, kind)
        found = self._entries.get(digest)
        if found is not None:
            self._entries.move_to_end(digest)
            return found
        found = self._entries[digest] = MessageFacts(digest, len(data), image_marks(data))
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return found


memo = FactMemo()  # one per process: every request and every stage share it
