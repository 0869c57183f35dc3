"""Volatile content (timestamps, dates, UUIDs, request ids): it changes on every request and silently
defeats every prefix cache when it sits in the prefix.

One regex call holds the interpreter for its whole run (~0.15 us a character: 0.6 s for a 4 MB system
prompt), so texts longer than WINDOW are scanned a window at a time (step generators, gateway/compaction/
pacing.py), each window reading up to OVERLAP characters past its end to finish a span that starts in it.
That equals one scan of the whole text unless a span, or the lookahead deciding one, runs longer than
OVERLAP characters across a window's end (no timestamp, date, UUID or request id does).

Most text holds no span, and the combined pattern tries its ~15 alternatives at every position, so a scan
first finds the runs that can hold one (`_matches`, ~5x less work on agent histories; issue 28) and the
pattern runs over those only, with the same matches as a scan of the whole text.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from gateway.pacing import CHUNK, Steps, finish

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


WINDOW = 65_536  # characters one regex call scans (~10 ms)
OVERLAP = 4_096  # characters a window may read past its end to finish a span that starts in it


# Every span is a run of _INSIDE characters (all a span can hold, and all a lookahead deciding one reads),
# so the characters outside split the text into runs that a match never crosses. Every span holds an
# anchor, a piece that every match of its alternative contains: a time's "d:dd", a date's "d-dd-d" or
# "d/d" or month name, an epoch's ten digits, a UUID's "-hhhh-", a request id's prefix or "id:" / "id=".
# An epoch's and a prefix's anchor hold where its alternative's `\b` does (no word character before), and
# a prefix's needs the id's 8 characters after it: JSON keys ("tool_call_id") and an agent's short call
# ids ("call_12") hold none, so most agent messages have no run to scan.
# Only the runs holding an anchor are scanned with the pattern (a bare digit, in every line number of a
# tool's output, is not one); a run's neighbours are outside characters (not word characters), so the
# pattern's word boundaries and lookaheads decide there as in the whole text.
_INSIDE = r"\w\s.:+/,=-"
_MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_ID_PREFIXES = ("req", "request", "msg", "trace", "span", "run", "chatcmpl", "call")
# A prefix's last letter first: one test for the many "_" of code that follow none.
_ID_PREFIX_ENDS = "".join(sorted({prefix[-1] for prefix in _ID_PREFIXES}))
_ID_PREFIX_BEHIND = "|".join(f"(?<={prefix}.)(?<![\\w]{prefix}.)" for prefix in _ID_PREFIXES)
_ANCHOR = (
    rf"[\d_d-](?:(?<=[\d])(?=:[\d][\d]|-[\d][\d]-[\d]|/[\d]|,? [\d]{{4}}| {_MONTH})|(?<=1)(?<![\w]1)(?=[6-9][\d]{{8}})"
    r"|(?<=-)(?=[0-9a-fA-F]{4}-)|(?<=id)(?=[\s]*[:=])"
    rf"|(?<=[{_ID_PREFIX_ENDS}][_-])(?:{_ID_PREFIX_BEHIND})(?=[0-9A-Za-z]{{8}}))"
)
# An ASCII text's classes spelled out (the same characters as \w, \s and \d in that range): the scan
# tests them as one bitmap instead of Unicode categories, twice as fast. (So the classes above are
# written in brackets: the spelling replaces them as a bracket's contents.)
_ASCII_CLASSES = {r"\w": "0-9A-Za-z_", r"\s": "\t-\r\x1c-\x20", r"\d": "0-9"}


def _run_patterns(classes: dict[str, str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(an anchor and the rest of its run, a run of inside characters) under these class spellings."""
    inside, anchor = _INSIDE, _ANCHOR
    for name, spelled in classes.items():
        inside, anchor = inside.replace(name, spelled), anchor.replace(name, spelled)
    return re.compile(f"{anchor}[{inside}]*"), re.compile(f"[{inside}]*")


_UNICODE_RUNS = _run_patterns({})
_ASCII_RUNS = _run_patterns(_ASCII_CLASSES)


def _matches(text: str, pos: int, endpos: int) -> Iterator[re.Match[str]]:
    """The matches of `_COMBINED.finditer(text, pos, endpos)`, the pattern run only over the runs that
    hold an anchor (see above)."""
    anchored_run, run = _ASCII_RUNS if text.isascii() else _UNICODE_RUNS
    backward = ""  # text[pos:endpos] reversed, taken at the first anchor: a run's start is found backwards
    cursor = pos
    while cursor < endpos:
        found = anchored_run.search(text, cursor, endpos)
        if found is None:
            return
        anchor = found.start()
        if not backward:
            backward = text[pos:endpos][::-1]
        behind = run.match(backward, endpos - anchor)  # the run's characters before the anchor (maybe none)
        start = anchor - (behind.end() - behind.start()) if behind else anchor
        yield from _COMBINED.finditer(text, max(cursor, start), found.end())
        cursor = found.end()


def _span(match: re.Match[str]) -> Span:
    return Span(match.lastgroup or "volatile", match.start(), match.end(), match.group())


def _windows(text: str) -> Iterator[list[Span]]:
    """The text's spans, one window's worth at a time (one window when the text fits in it)."""
    if len(text) <= WINDOW:
        yield [_span(match) for match in _matches(text, 0, len(text))]
        return
    position = 0
    while position < len(text):
        end = position + WINDOW
        found: list[Span] = []
        for match in _matches(text, position, min(end + OVERLAP, len(text))):
            if match.start() >= end:
                break
            found.append(_span(match))
        position = max(end, found[-1].end) if found else end
        yield found


# System prompts and tool lists come back on every request of every session (an agent CLI's are tens of
# kilobytes: ~10 ms of scanning each time); their spans are remembered by the text's digest. Bounded:
# entries, and only texts with few spans (a text of thousands of timestamps is scanned each time).
KNOWN_TEXTS = 1024
KNOWN_MAX_SPANS = 64
_known: OrderedDict[bytes, tuple[Span, ...]] = OrderedDict()


def spans_steps(text: str) -> Steps[list[Span]]:
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    known = _known.get(key)
    if known is not None:
        _known.move_to_end(key)
        return list(known)
    spans: list[Span] = []
    for found in _windows(text):
        spans += found
        yield
    if len(spans) <= KNOWN_MAX_SPANS:
        _known[key] = tuple(spans)
        if len(_known) > KNOWN_TEXTS:
            _known.popitem(last=False)
    return spans


def find_spans(text: str) -> list[Span]:
    return finish(spans_steps(text))


def mask_steps(text: str) -> Steps[str]:
    """The text with each volatile span replaced by its kind: equal masks, equal 'stable' content."""
    if len(text) <= WINDOW:
        return _masked(text)
    pieces: list[str] = []
    cursor = 0
    for found in _windows(text):
        for span in found:
            pieces += [text[cursor : span.start], f"<{span.kind}>"]
            cursor = span.end
        yield
    pieces.append(text[cursor:])
    return "".join(pieces)


def _masked(text: str) -> str:
    """`_COMBINED.sub` with each span's kind, from the matches of the runs that can hold one."""
    pieces: list[str] = []
    cursor = 0
    for match in _matches(text, 0, len(text)):
        pieces += [text[cursor : match.start()], f"<{match.lastgroup}>"]
        cursor = match.end()
    if not cursor:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def mask(text: str) -> str:
    return finish(mask_steps(text))


def placeholder(number: int) -> str:
    return f"[volatile-{number}]"


def replace_spans(text: str, first_number: int) -> tuple[str, list[Span]]:
    return finish(replace_spans_steps(text, first_number))


def replace_spans_steps(text: str, first_number: int) -> Steps[tuple[str, list[Span]]]:
    """Spans replaced by numbered placeholders (numbering continues across texts)."""
    spans = yield from spans_steps(text)
    pieces: list[str] = []
    cursor = 0
    for offset, span in enumerate(spans):
        pieces += [text[cursor : span.start], placeholder(first_number + offset)]
        cursor = span.end
        if offset % CHUNK == CHUNK - 1:
            yield
    pieces.append(text[cursor:])
    return "".join(pieces), spans


def relocation_note(values: list[str]) -> str:
    listed = "; ".join(f"{placeholder(n)} = {value}" for n, value in enumerate(values, start=1))
    return f"(Current values of the placeholders in the system prompt: {listed})"
