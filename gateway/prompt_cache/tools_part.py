"""The request's tools as the optimizer uses them: as sent upstream (canonical when configured), their
prefix hash and the volatile kinds in them, remembered by the tools' content (issue 28).

An agent sends the same tools on every request of a session (a coding CLI's are tens of kilobytes):
sorting them into canonical form, serializing them twice (hash, volatile scan) and hashing them again
is derived once per distinct tools, found by the tools' facts (gateway/history/view.py `part_facts`: no
serialization when the session's previous body vouches for them). The tools as sent are then one JSON
value shared by the requests that send them, never changed: a request's working copy copies the tools'
top levels before a mark lands on one (work.py `own_tools`), so remembered tools cost a list copy, not a
parse of tens of kilobytes; LiteLLM, which may change what it is given, gets a copy
(gateway/upstream/litellm_path.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from gateway.bounded import Caps, TenantLRU
from gateway.history import MessageFacts
from gateway.pacing import Steps
from gateway.prompt_cache.canonical import canonical_tools_steps
from gateway.prompt_cache.prefix import PartHash, serialize
from gateway.prompt_cache.volatile import spans_steps

KNOWN_TOOLS = 256  # distinct tool lists remembered (a deployment's agents use a handful)
KNOWN_MAX_BYTES = 1 << 20  # larger tool lists are derived on every request rather than held
# Their JSON bytes held in all (parsed, a few times that): callers choose the tools, so the count alone
# would let 256 lists of a megabyte each pin a gigabyte. Keyed by content, shared by every tenant.
KNOWN_BYTES = 16 << 20
SHARED = ""  # the one "tenant" of the map: an entry is content any caller may send


@dataclass(frozen=True, slots=True)
class ToolsPart:
    tools: Any  # the tools as sent (canonical when configured): shared by the requests, never changed
    hash: PartHash
    kinds: frozenset[str]  # volatile kinds in the tools


_known: TenantLRU[ToolsPart] = TenantLRU(Caps(KNOWN_TOOLS, KNOWN_BYTES, KNOWN_TOOLS, KNOWN_BYTES))


def _derive(tools: Any, canonical: bool) -> Steps[tuple[Any, ToolsPart]]:
    if canonical and isinstance(tools, list):
        tools = yield from canonical_tools_steps(tools)
    data = serialize(tools)
    kinds = frozenset(span.kind for span in (yield from spans_steps(data.decode()))) if tools else frozenset()
    part_hash = yield from PartHash.of_data_steps(data)
    return tools, ToolsPart(tools, part_hash, kinds)


def _listed(tools: Any) -> Any:
    """A request's own list of the shared tools (the tools themselves are copied only to be marked)."""
    return list(tools) if isinstance(tools, list) else tools


def tools_part_steps(tools: Any, canonical: bool, facts: MessageFacts) -> Steps[tuple[Any, ToolsPart]]:
    """(the tools to send, their part) for the request's `tools` (None when the body has none), whose
    facts are `facts`. The tools returned are never `tools` nor any of its objects (the caller's): a
    list of the request's own whose tools are shared (work.py `own_tools` copies them before a mark)."""
    if facts.size > KNOWN_MAX_BYTES:
        return (yield from _derive(orjson.loads(orjson.dumps(tools)), canonical))
    key = facts.digest.hex() + (":canonical" if canonical else ":as-sent")
    known = _known.get(key)
    if known is None:
        _, known = yield from _derive(orjson.loads(orjson.dumps(tools)), canonical)
        _known.put(key, SHARED, known, facts.size)
    return _listed(known.tools), known
