"""Cache expiry rules with a controlled clock (TTL cannot be waited out over HTTP in a test)."""

from __future__ import annotations

from typing import Any

from gateway.sim.anthropic_cache import AnthropicPromptCache, prompt_blocks
from gateway.sim.openai_cache import OpenAIPromptCache
from tests.sim.conftest import long_text


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _anthropic_body(ttl: str | None) -> dict[str, Any]:
    mark: dict[str, Any] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {
        "system": [{"type": "text", "text": long_text(1500), "cache_control": mark}],
        "messages": [{"role": "user", "content": "q"}],
    }


def test_anthropic_5m_entry_expires_and_reads_refresh_it() -> None:
    clock = Clock()
    cache = AnthropicPromptCache(clock)
    blocks = prompt_blocks(_anthropic_body(None))
    namespace = ("key", "claude-sonnet-4-5")
    cache.commit(namespace, cache.plan(namespace, blocks, 1024))
    clock.now = 240.0
    assert cache.plan(namespace, blocks, 1024).read_tokens > 0  # read at 4 min: refreshed to 9 min
    clock.now = 480.0
    assert cache.plan(namespace, blocks, 1024).read_tokens > 0
    clock.now = 481.0 + 300.0
    assert cache.plan(namespace, blocks, 1024).read_tokens == 0


def test_anthropic_1h_entry_outlives_5m() -> None:
    clock = Clock()
    cache = AnthropicPromptCache(clock)
    blocks = prompt_blocks(_anthropic_body("1h"))
    namespace = ("key", "claude-sonnet-4-5")
    plan = cache.plan(namespace, blocks, 1024)
    assert plan.write_1h_tokens > 0 and plan.write_5m_tokens == 0
    cache.commit(namespace, plan)
    clock.now = 3000.0
    assert cache.plan(namespace, blocks, 1024).read_tokens == plan.write_1h_tokens


def test_openai_idle_ttl_and_24h_retention() -> None:
    clock = Clock()
    cache = OpenAIPromptCache(clock)
    tokens = list(range(2000))
    namespace = ("key", "gpt-4o-mini")
    cache.commit(namespace, cache.plan(namespace, tokens, 600.0))
    clock.now = 500.0
    assert cache.plan(namespace, tokens, 600.0).cached_tokens == 1920  # 1024 + 7 * 128
    clock.now = 1200.0
    assert cache.plan(namespace, tokens, 600.0).cached_tokens == 0
    cache.commit(namespace, cache.plan(namespace, tokens, 86400.0))
    clock.now = 1200.0 + 80000.0
    assert cache.plan(namespace, tokens, 86400.0).cached_tokens == 1920


def test_moving_a_mark_does_not_change_the_prefix() -> None:
    marked = prompt_blocks(_anthropic_body(None))
    unmarked = prompt_blocks({**_anthropic_body(None), "system": [{"type": "text", "text": long_text(1500)}]})
    assert [b.digest for b in marked] == [b.digest for b in unmarked]
