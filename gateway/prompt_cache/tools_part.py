"""The request's tools as the optimizer uses them: as sent upstream (canonical when configured), their
prefix hash and the volatile kinds in them, remembered by the tools' content (issue 28).

An agent sends the same tools on every request of a session (a coding CLI's are tens of kilobytes):
sorting them into canonical form, serializing them twice (hash, volatile scan) and hashing them again
is derived once per distinct tools, found by the tools' facts (gateway/history/view.py `part_facts`: no
serialization when the session's previous body vouches for them). A request then costs one parse: each
gets tools objects of its own, read from the JSON kept (marks are placed on them).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.history import MessageFacts
from gateway.pacing import Steps
from gateway.prompt_cache.canonical import canonical_tools_steps
from gateway.prompt_cache.prefix import PartHash, serialize
from gateway.prompt_cache.volatile import spans_steps

KNOWN_TOOLS = 256  # distinct tool lists remembered (a deployment's agents use a handful)
KNOWN_MAX_BYTES = 1 << 20  # larger tool lists are derived on every request rather than held


@dataclass(frozen=True, slots=True)
class ToolsPart:
    sent: bytes  # the JSON of the tools as sent (canonical when configured)
    hash: PartHash
    kinds: frozenset[str]  # volatile kinds in the tools


_known: OrderedDict[bytes, ToolsPart] = OrderedDict()


def _derive(tools: Any, canonical: bool) -> Steps[tuple[Any, ToolsPart]]:
    if canonical and isinstance(tools, list):
        tools = yield from canonical_tools_steps(tools)
    data = serialize(tools)
    kinds = frozenset(span.kind for span in (yield from spans_steps(data.decode()))) if tools else frozenset()
    part_hash = yield from PartHash.of_data_steps(data)
    return tools, ToolsPart(orjson.dumps(tools), part_hash, kinds)


def tools_part_steps(tools: Any, canonical: bool, facts: MessageFacts) -> Steps[tuple[Any, ToolsPart]]:
    """(the tools to send, their part) for the request's `tools` (None when the body has none), whose
    facts are `facts`; the tools returned are a new object, never `tools` (the caller's: marks are placed
    on the new one)."""
    if facts.size > KNOWN_MAX_BYTES:
        return (yield from _derive(orjson.loads(orjson.dumps(tools)), canonical))
    key = facts.digest + (b"canonical" if canonical else b"as-sent")
    known = _known.get(key)
    if known is not None:
        _known.move_to_end(key)
        return orjson.loads(known.sent), known
    sent, part = yield from _derive(orjson.loads(orjson.dumps(tools)), canonical)
    _known[key] = part
    if len(_known) > KNOWN_TOOLS:
        _known.popitem(last=False)
    return sent, part
