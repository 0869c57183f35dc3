"""Counting tokens of caller text with tiktoken in bounded pieces.

tiktoken's cost grows faster than linearly with the length of one pre-tokenizer piece: a run of letters
with no space or punctuation is one piece, and 6 MB of random letters take 9+ s to encode in one call
(1 MB: 0.4 s). Text is therefore encoded in pieces of at most PIECE_CHARS characters, which keeps the
work linear (~0.1-1 us a character). A piece ends at a word boundary where a pre-tokenizer piece of every
OpenAI encoding (r50k/p50k, cl100k, o200k) ends too, so counts of real text are exact: no pattern puts a
letter or digit and a following ASCII character other than a letter, digit or apostrophe in one piece
(cl100k keeps a trailing space or newline apart from a word; o200k attaches only `'s`-style suffixes).
Text with no such boundary in half a piece (a hostile run of letters, CJK text without ASCII punctuation)
is cut there anyway: each such cut may move the count by a token (< 1 token in 2,000 characters).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import tiktoken

PIECE_CHARS = 4096  # 0.5-4 ms of encoding; the cost of one call grows with its longest run
# After a letter or digit, before an ASCII character that is not a letter, digit or apostrophe.
WORD_BOUNDARY = re.compile(r"(?<=[^\W_])(?=[\x00-\x26\x28-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f])")


def pieces(text: str) -> Iterator[str]:
    """`text` in consecutive pieces of at most PIECE_CHARS characters, cut at word boundaries."""
    start = 0
    while len(text) - start > PIECE_CHARS:
        end = start + PIECE_CHARS
        boundary = WORD_BOUNDARY.search(text, start + PIECE_CHARS // 2, end)
        cut = boundary.start() if boundary else end
        yield text[start:cut]
        start = cut
    yield text[start:]


def count_text(encoding: tiktoken.Encoding, text: str, enough: int | None = None) -> int:
    """Tokens of `text` (special-token text counted as plain text). With `enough`, counting stops once the
    count passes it: the answer is then only known to exceed `enough`, at a bounded cost."""
    total = 0
    for piece in pieces(text):
        # A numpy buffer, not a list of ints: the same tokens, without building thousands of objects.
        total += len(encoding.encode_to_numpy(piece, disallowed_special=()))
        if enough is not None and total > enough:
            break
    return total
