"""Volatile content (timestamps, dates, UUIDs, request ids): it changes on every request and silently
defeats every prefix cache when it sits in the prefix."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Order matters: the first alternative that matches at a position wins (a timestamp before its date).
PATTERNS: dict[str, str] = {
    "uuid": r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    "request_id": (
        r"\b(?:req|request|msg|trace|span|run|chatcmpl|call)[-_](?=[A-Za-z]*\d)[A-Za-z0-9]{8,}\b"
        r"|\b(?:request|trace|correlation)[ _-]?id\s*[:=]\s*[A-Za-z0-9._-]{6,}"
    ),
    "timestamp": (
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\s?UTC)?"
        r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]* \w{3,9}\.? \d{1,2},? "
        r"\d{1,2}:\d{2}(?::\d{2})?(?: [A-Z]{2,5})?(?: \d{4})?"
        r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"
        r"|\b1[6-9]\d{8}(?:\d{3})?\b"
    ),
    "date": (
        r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{4}\b"
        r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? \d{4}\b"
        r"|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* \d{4}\b"
    ),
}
_COMBINED = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in PATTERNS.items()))


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    start: int
    end: int
    value: str


def find_spans(text: str) -> list[Span]:
    return [
        Span(match.lastgroup or "volatile", match.start(), match.end(), match.group())
        for match in _COMBINED.finditer(text)
    ]


def mask(text: str) -> str:
    """The text with each volatile span replaced by its kind: equal masks, equal 'stable' content."""
    return _COMBINED.sub(lambda match: f"<{match.lastgroup}>", text)


def placeholder(number: int) -> str:
    return f"[volatile-{number}]"


def replace_spans(text: str, first_number: int) -> tuple[str, list[Span]]:
    """Spans replaced by numbered placeholders (numbering continues across texts)."""
    spans = find_spans(text)
    pieces: list[str] = []
    cursor = 0
    for offset, span in enumerate(spans):
        pieces += [text[cursor : span.start], placeholder(first_number + offset)]
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces), spans


def relocation_note(values: list[str]) -> str:
    listed = "; ".join(f"{placeholder(n)} = {value}" for n, value in enumerate(values, start=1))
    return f"(Current values of the placeholders in the system prompt: {listed})"
