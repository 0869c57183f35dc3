"""Anthropic's explicit prompt caching (cache_control breakpoints).

Rules simulated:
- The prompt is a sequence of blocks in the order tools -> system -> messages (each content block, a
  string system or string content is one block). Only blocks marked with `cache_control` are
  breakpoints; a top-level `cache_control` adds an automatic breakpoint on the last block.
- At most 4 breakpoints (a 5th is a 400); 1h breakpoints must not come after 5m ones (400).
- A breakpoint reads the longest cached prefix ending at itself or at one of the 19 blocks before it
  (20 blocks examined); entries exist only where earlier requests put a breakpoint.
- A breakpoint whose prefix is shorter than the model's minimum (`prompt_cache_min_tokens` in LiteLLM's
  cost map, default 1024) is silently not cached.
- Each written segment (from the end of the previous cached part to the breakpoint) is billed with its
  breakpoint's TTL; reading refreshes the entry's TTL. Entries become readable only once the writing
  response has started (see `commit`), so parallel identical requests all pay the write.
- `cache_control` itself is not part of the prefix (moving a mark does not invalidate anything);
  `tool_choice` is hashed in front of the messages, so changing it invalidates the messages only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from gateway.sim.errors import invalid_request
from gateway.sim.tokens import ANTHROPIC_ENCODING, count_tokens

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
DEFAULT_MIN_TOKENS = 1024
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}

Ttl = Literal["5m", "1h"]


@dataclass(frozen=True)
class PromptBlock:
    digest: bytes  # identity of the prefix ending with this block
    end_tokens: int  # tokens of the prefix ending with this block
    ttl: Ttl | None  # breakpoint TTL, None when the block is not a breakpoint


@dataclass
class AnthropicCachePlan:
    total_tokens: int
    read_tokens: int = 0
    write_5m_tokens: int = 0
    write_1h_tokens: int = 0
    writes: list[tuple[bytes, float]] = field(default_factory=list)

    @property
    def uncached_tokens(self) -> int:
        return self.total_tokens - self.read_tokens - self.write_5m_tokens - self.write_1h_tokens


def _block_text(block: dict[str, Any]) -> str:
    """Serialized block without its cache_control mark (marks are not part of the prompt)."""
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, ensure_ascii=False)


def _spoken_text(block: dict[str, Any]) -> str:
    """What the model reads of a block (token counts); tool definitions are read as their JSON."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"{block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        return str(content or "")
    return _block_text(block)


def _as_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _ttl(block: dict[str, Any]) -> Ttl | None:
    mark = block.get("cache_control")
    if not isinstance(mark, dict):
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def prompt_blocks(body: dict[str, Any]) -> list[PromptBlock]:
    """The request as chained prefix blocks; raises a 400 for breakpoint rules the real API enforces."""
    tools = [("tool", tool) for tool in body.get("tools") or []]
    system = [("system", block) for block in _as_blocks(body.get("system"))]
    raw = tools + system
    for message in body.get("messages", []):
        raw += [(str(message.get("role")), block) for block in _as_blocks(message.get("content"))]
    ttls = [_ttl(block) for _, block in raw]
    if isinstance(body.get("cache_control"), dict) and raw:
        ttls[-1] = ttls[-1] or ("1h" if body["cache_control"].get("ttl") == "1h" else "5m")
    _check_breakpoints([ttl for ttl in ttls if ttl is not None])

    hasher = hashlib.blake2b(digest_size=16)
    blocks, end_tokens = [], 0
    for position, ((role, block), ttl) in enumerate(zip(raw, ttls, strict=True)):
        if position == len(tools) + len(system):
            hasher.update(json.dumps(body.get("tool_choice"), sort_keys=True).encode())
        hasher.update((role + _block_text(block)).encode())
        end_tokens += count_tokens(_spoken_text(block), ANTHROPIC_ENCODING)
        blocks.append(PromptBlock(hasher.copy().digest(), end_tokens, ttl))
    return blocks


def _check_breakpoints(ttls: list[Ttl]) -> None:
    if len(ttls) > MAX_BREAKPOINTS:
        raise invalid_request(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(ttls)}."
        )
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        raise invalid_request(
            "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
            "Note that blocks are processed in the following order: `tools`, `system`, `messages`."
        )


@lru_cache(maxsize=1)
def _cost_map() -> dict[str, Any]:
    """LiteLLM's bundled model cost map, read as JSON (importing litellm costs seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def min_cacheable_tokens(model: str, overrides: dict[str, int]) -> int:
    if model in overrides:
        return overrides[model]
    info = _cost_map().get(model) or _cost_map().get(f"anthropic/{model}") or {}
    return int(info.get("prompt_cache_min_tokens") or DEFAULT_MIN_TOKENS)


class AnthropicPromptCache:
    """Cache entries per namespace (API key and model): prefix digest -> (expiry, TTL)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, str], dict[bytes, tuple[float, float]]] = {}

    def _live(self, entries: dict[bytes, tuple[float, float]], digest: bytes, now: float) -> bool:
        entry = entries.get(digest)
        return entry is not None and entry[0] > now

    def plan(self, namespace: tuple[str, str], blocks: list[PromptBlock], min_tokens: int) -> AnthropicCachePlan:
        """Read the longest reachable entry (refreshing it), then bill writes up to each later breakpoint."""
        entries = self._entries.setdefault(namespace, {})
        now = self._clock()
        plan = AnthropicCachePlan(total_tokens=blocks[-1].end_tokens if blocks else 0)
        breakpoints = [i for i, block in enumerate(blocks) if block.ttl is not None]
        read_at = -1
        for position in breakpoints:
            for candidate in range(position, max(position - LOOKBACK_BLOCKS, -1), -1):
                if self._live(entries, blocks[candidate].digest, now):
                    read_at = max(read_at, candidate)
                    break
        if read_at >= 0:
            digest = blocks[read_at].digest
            ttl_s = entries[digest][1]
            entries[digest] = (now + ttl_s, ttl_s)
            plan.read_tokens = blocks[read_at].end_tokens
        cached_until = plan.read_tokens
        for position in breakpoints:
            block = blocks[position]
            if position <= read_at or block.end_tokens < min_tokens or block.ttl is None:
                continue
            written = block.end_tokens - cached_until
            if block.ttl == "1h":
                plan.write_1h_tokens += written
            else:
                plan.write_5m_tokens += written
            plan.writes.append((block.digest, TTL_SECONDS[block.ttl]))
            cached_until = block.end_tokens
        return plan

    def commit(self, namespace: tuple[str, str], plan: AnthropicCachePlan) -> None:
        """Make the plan's writes readable; called once the response has started."""
        entries = self._entries.setdefault(namespace, {})
        now = self._clock()
        for digest in [d for d, (expires, _) in entries.items() if expires <= now]:
            del entries[digest]
        for digest, ttl_s in plan.writes:
            entries[digest] = (now + ttl_s, ttl_s)

    def clear(self) -> None:
        self._entries.clear()
