"""The pure parts of breakpoint planning: TTL from gaps, priorities under a tight budget, unmarkable blocks."""

from __future__ import annotations

from gateway.config.prompt_cache import PromptCacheConfig
from gateway.prompt_cache.breakpoints import Limits, plan_breakpoints
from gateway.prompt_cache.layout import anthropic_blocks
from gateway.prompt_cache.ttl import choose_ttl, recent_gaps

LIMITS = Limits(max_marks=4, every=15, min_tokens=0)


def test_ttl_from_the_longest_recent_gap() -> None:
    config = PromptCacheConfig()
    assert choose_ttl([], config) == "5m"
    assert choose_ttl([3.0, 200.0], config) == "5m"
    assert choose_ttl([3.0, 900.0, 4.0], config) == "1h"  # one long pause (a human review) is enough
    assert choose_ttl([7200.0], config) == "5m"  # nothing survives two hours: pay the cheaper write
    assert choose_ttl([900.0], PromptCacheConfig(ttl="5m")) == "5m"
    assert recent_gaps([1.0, 2.0, 3.0], last_seen=100.0, now=160.0) == [2.0, 3.0, 60.0]


def test_tight_budget_keeps_static_then_moving_then_intermediates() -> None:
    ends = list(range(0, 4000, 100))  # 40 blocks
    marks = plan_breakpoints(
        ends,
        [True] * 40,
        {5: {"type": "ephemeral"}, 6: {"type": "ephemeral"}},
        static_end=1,
        last=39,
        anchor=2,
        ttl="5m",
        limits=LIMITS,
    )
    assert [(m.kind, m.position) for m in marks] == [("static", 1), ("moving", 39)]
    roomy = plan_breakpoints(ends, [True] * 40, {}, static_end=1, last=39, anchor=2, ttl="5m", limits=LIMITS)
    assert [(m.kind, m.position) for m in roomy] == [
        ("static", 1),
        ("intermediate", 17),
        ("intermediate", 32),
        ("moving", 39),
    ]


def test_thinking_and_empty_blocks_never_carry_a_mark() -> None:
    body = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "thinking", "thinking": "t", "signature": "x"},
                    {"type": "text", "text": ""},
                ],
            },
        ],
    }
    blocks = anthropic_blocks(body)
    assert [b.markable for b in blocks] == [True, True, True, False, False]
    marks = plan_breakpoints(
        [5000] * 5, [b.markable for b in blocks], {}, static_end=0, last=4, anchor=None, ttl="1h", limits=LIMITS
    )
    assert [(m.kind, m.position, m.ttl) for m in marks] == [("static", 0, "1h"), ("moving", 2, "1h")]
