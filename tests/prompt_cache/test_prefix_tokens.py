"""Prefix token counts for the cache minimum: the byte bound gives the same answer as counting."""

from __future__ import annotations

import random

from gateway.prompt_cache.layout import Block
from gateway.prompt_cache.tokens import PrefixTokens, count_tokens

WORDS = ["def", "files", "the", "résumé", "日本語", "🙂", "0x1f", "tests/test_a.py", "\n", "    ", "{}", "Ω"]


def text_block(text: str) -> Block:
    return Block(section="messages", message=0, holder={"type": "text", "text": text})


def random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 120)))


def test_every_prefix_is_judged_against_the_minimum_as_exact_counts_judge_it() -> None:
    rng = random.Random(7)
    for _ in range(300):
        enough = rng.choice([64, 256, 1024])
        blocks = [text_block(random_text(rng)) for _ in range(rng.randint(1, 12))]
        tokens = PrefixTokens(enough)
        for block in blocks:
            tokens.add(block)
        exact = 0
        for end, block in zip(tokens.ends, blocks, strict=True):
            exact += count_tokens(block.text())
            assert (end >= enough) == (exact >= enough), (enough, [b.text() for b in blocks])


def test_a_prompt_under_the_minimum_is_not_encoded() -> None:
    count_tokens.cache_clear()
    tokens = PrefixTokens(1024)
    for text in ["You are a careful coding agent.", "Step 1 of task 7: list the files.", "Done: a.py, b.py."]:
        tokens.add(text_block(text))
    assert count_tokens.cache_info().misses == 0
    assert all(end < 1024 for end in tokens.ends)
