"""Check a semantic-cache candidate before serving it: the prompts must agree on the facts an answer hangs on.

Embeddings score "Is 7 prime?" and "Is 8 prime?" (or "X is a tributary of Y" / "Y is a tributary of X")
as near-identical, so after the vector lookup ``verify(cached_prompt, new_prompt)`` rejects the
candidate when any of these differ between the two prompts (checked in this order; the first
failure is the reason):

1. ``identifiers`` - code identifiers, compared as sets, case-sensitive: backticked spans, snake_case,
   camelCase / PascalCase with an inner capital, dotted names (``os.path.join``, ``file.py``),
   calls (``foo()``) and ``C#`` / ``C++``.
2. ``numbers`` - quantities, compared as multisets of (value, unit): digits (``1,000``, ``3.5``,
   ``5km``, ``$5``, ``50%``, ``1st``, ``20s``), written numbers (``twenty-five``, ``two hundred``,
   ``third``, ``1.5 million``, ``twenties``), the unit right after a number (``km`` = ``kilometres``,
   ``%`` = ``percent``) and month names (``Oct.`` = ``October``), so a date matches only when day, month
   and year all agree whatever the format ("18 October 2007" = "October 18, 2007").
   They must also come in the same order, month names aside: "serves 4 ... for 6 people" and "serves 6
   ... for 4 people" have the same numbers in other roles (a paraphrase that moves a clause with a
   number is a miss).
3. ``operators`` - comparison and assignment operators (``<``, ``>=``, ``==``, ``!=``, ``=``), as
   multisets: ``x > 0`` and ``x < 0`` differ by one character.
4. ``negation`` - the number of negation cues: not, no, never, n't, cannot, without, none, nobody,
   nothing, nowhere, neither, nor, lack(s/ed/ing), fail(s/ed/ing), unable, refuse(s/d/ing)
   ("detected" / "failed to detect").
5. ``opposite`` - a word in one prompt whose opposite is in the other (add/remove, enable/disable,
   before/after, up/down, buy/sell, client/server, ...; inflections included) while neither prompt has
   both: it reverses what is asked or reported while keeping every other word.
6. ``entities`` - named entities: every capitalised token that does not start a sentence in one prompt
   (proper nouns, acronyms; a possessive "'s" dropped) must occur somewhere in the other prompt, in
   any case ("Kandahar Province" / "province of Kandahar"); a token that starts a sentence is exempt
   because its capital says nothing.
7. ``entity order`` - the order of the named entities that both prompts mention (each entity at its
   first mention); swapping two of them ("A is a tributary of B" vs "B is a tributary of A") changes
   who does what while keeping every word.
8. ``word pairing`` - content words (lower-cased; stop words and digits dropped) that are neighbours
   in one prompt and both occur in the other must be neighbours there too, in the same order. A
   paraphrase rewords or moves whole phrases, which keeps such pairs; swapping roles or modifiers
   ("many lands and lucrative offices" vs "lucrative lands and many offices", "current summer league"
   vs "summer collegiate league") makes a new pair out of words both prompts have. It also rejects
   some true paraphrases (a word inserted between two shared words, a clause moved to the other end,
   "twenty-five" for "25"): a miss, the safe side. Looser variants (ignoring inserted words, a
   one-word gap, numbers as placeholders) served 2-5 points fewer PAWS paraphrases at the same
   wrong-answer rate.

Everything is lexical and takes well under a millisecond; it errs towards a miss, which costs one
provider call, never a wrong answer.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from gateway.semantic.opposites import opposite_pair, stem


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str | None = None


ACCEPT = Verdict(True)

# -- tokens ---------------------------------------------------------------------------------------------

_BACKTICKED = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]+"  # snake_case, _private, CONSTANT_NAME
    r"|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with an inner capital
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?=\(|\b)(?!\.\w)"  # dotted.name
    r")(?:\(\))?"
    r"|\b[A-Za-z_][A-Za-z0-9_]*\(\)"  # call()
    r"|\b[A-Za-z](?:#|\+\+)"  # C#, C++, F#: one letter apart from C, and a word tokenizer drops the rest
)
# A possessive "'s" stays off the word ("Scarborough's" -> "Scarborough"); "n't" stays on for negation.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:st|nd|rd|th|s)?|[A-Za-z]+(?:['’](?!s\b)[A-Za-z]+)?|[$€£%]")
_SENTENCE_END = re.compile(r"[.!?:;\"“”()\[\]\n]\s*$")

_SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_ORDINAL = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90, "hundredth": 100,
    "thousandth": 1000, "millionth": 1_000_000,
}  # fmt: skip
# "in your 20s" / "in your twenties": a decade is its first year, as "20s" parses to 20.
_DECADES = {
    "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
    "eighties": 80, "nineties": 90,
}  # fmt: skip
_SCALE = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_UNITS = {
    "%": "%", "percent": "%", "pct": "%", "km": "km", "kilometre": "km", "kilometres": "km",
    "kilometer": "km", "kilometers": "km", "m": "m", "metre": "m", "metres": "m", "meter": "m",
    "meters": "m", "cm": "cm", "mm": "mm", "mi": "mi", "mile": "mi", "miles": "mi", "ft": "ft",
    "foot": "ft", "feet": "ft", "inch": "in", "inches": "in", "kg": "kg", "kilogram": "kg",
    "kilograms": "kg", "g": "g", "gram": "g", "grams": "g", "lb": "lb", "lbs": "lb", "pound": "lb",
    "pounds": "lb", "l": "l", "litre": "l", "litres": "l", "liter": "l", "liters": "l", "ml": "ml",
    "s": "s", "sec": "s", "second": "s", "seconds": "s", "ms": "ms", "min": "min", "minute": "min",
    "minutes": "min", "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "day",
    "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "usd": "usd",
    "dollar": "usd", "dollars": "usd", "$": "usd", "eur": "eur", "euro": "eur", "euros": "eur",
    "€": "eur", "gbp": "gbp", "£": "gbp", "degrees": "deg", "c": "c", "f": "f", "x": "x", "times": "x",
}  # fmt: skip
_NEGATIONS = {
    "not", "no", "never", "cannot", "without", "none", "nobody", "nothing", "nowhere", "neither",
    "nor", "lack", "lacks", "lacked", "lacking", "fail", "fails", "failed", "failing", "unable", "refuse",
    "refuses", "refused", "refusing",
}  # fmt: skip
_STOP_WORDS = frozenset(
    """a an the and or but if then than so as of in on at by for from to into onto with within about
    after before during since until while over under between through across along around against among
    is are was were be been being am do does did done has have had having will would shall should can
    could may might must it its it's this that these those there here which who whom whose what when
    where why how he she they we you i me him her them us my your his their our also very more most
    much many some such only just both each all any other another same own too again further once
    not no never nor""".split()  # noqa: SIM905 - a long word list reads better as text
)


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    sentence_start: bool


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    for match in _TOKEN.finditer(text):
        before = text[: match.start()]
        initial = not before.strip() or bool(_SENTENCE_END.search(before))
        out.append(_Token(match.group(), match.start(), initial))
    return tuple(out)


# -- extractors -----------------------------------------------------------------------------------------


def identifiers(text: str) -> set[str]:
    """Code identifiers: backticked spans plus snake_case, camelCase, dotted and call()-style names."""
    found = {span.strip() for span in _BACKTICKED.findall(text)}
    found.update(match.group().removesuffix("()") for match in _IDENTIFIER.finditer(text))
    return {name for name in found if not re.fullmatch(r"(?:[A-Z]\.)+[A-Z]?", name)}  # U.S. is no code


def _digit_value(token: str) -> tuple[float, str | None]:
    suffix = re.search(r"(st|nd|rd|th|s)$", token)
    body = token[: suffix.start()] if suffix else token
    # "1,000" groups thousands; "3,5" is a European decimal only when it cannot be a group.
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", body):
        body = body.replace(",", "")
    body = body.replace(",", ".")
    if body.count(".") > 1:  # a version or a dotted date: keep it as an exact string
        return float("nan"), body
    # Long integers (ids, serial numbers) keep every digit; a float would round them.
    return float(body), (body.lstrip("0") or "0") if "." not in body and len(body) > 15 else None


def quantities(text: str) -> list[tuple[str, str]]:
    """Numbers with their unit, as (value, unit) pairs in text order; month names count as ('month', n)."""
    tokens = [t.text for t in _tokens(text)]
    lowered = [t.lower() for t in tokens]
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        word = lowered[i]
        value: float | None = None
        exact: str | None = None
        consumed = 1
        if word[0].isdigit():
            value, exact = _digit_value(word)
        elif word in _SMALL or word in _ORDINAL or word in _DECADES:
            value, consumed = _written_number(lowered, i)
        elif word in _MONTHS and (word != "may" or tokens[i] == "May") and tokens[i][0].isupper():
            found.append(("month", str(_MONTHS[word])))
            i += 1
            continue
        if value is None:
            i += 1
            continue
        # "1.5 million", "3 thousand"
        while i + consumed < len(tokens) and lowered[i + consumed] in _SCALE:
            value *= _SCALE[lowered[i + consumed]]
            consumed += 1
        unit = ""
        if i > 0 and lowered[i - 1] in {"$", "€", "£"}:
            unit = _UNITS[lowered[i - 1]]
        elif i + consumed < len(tokens) and lowered[i + consumed] in _UNITS:
            unit = _UNITS[lowered[i + consumed]]
        found.append((exact or f"{value:.17g}", unit))
        i += consumed
    return found


def _written_number(words: list[str], i: int) -> tuple[float, int]:
    """Parse 'twenty five', 'two hundred and six', 'third' starting at words[i]."""
    total, current, j = 0, 0, i
    while j < len(words):
        w = words[j]
        if w in _SMALL:
            current += _SMALL[w]
        elif w in _ORDINAL or w in _DECADES:
            current += _ORDINAL.get(w) or _DECADES[w]
            j += 1
            break
        elif w in _SCALE and j > i:
            current = max(current, 1) * _SCALE[w]
            if _SCALE[w] >= 1000:
                total, current = total + current, 0
        elif w == "and" and j > i and j + 1 < len(words) and words[j + 1] in _SMALL:
            pass
        else:
            break
        j += 1
    return float(total + current), j - i


_OPERATOR = re.compile(r"[<>!=]=|[<>]|(?<![<>!=])=(?!=)")


def operators(text: str) -> list[str]:
    """Comparison and assignment operators, sorted (an arrow's '>' counts too: "->" is rarely reworded)."""
    return sorted(_OPERATOR.findall(text))


def negation_count(text: str) -> int:
    tokens = [t.text.lower() for t in _tokens(text)]
    cues = sum(1 for t in tokens if t in _NEGATIONS)
    return cues + sum(1 for t in tokens if t.endswith(("n't", "n’t")))


def _is_entity(token: _Token) -> bool:
    word = token.text
    # "I" is capitalised everywhere: "How do I ..." and "How can one ..." name no different things.
    return word[0].isupper() and not token.sentence_start and word.lower() not in _MONTHS and word != "I"


def entities(text: str) -> list[str]:
    """Capitalised tokens that do not start a sentence, in order of first mention."""
    seen: dict[str, None] = {}
    for token in _tokens(text):
        if _is_entity(token):
            seen.setdefault(token.text, None)
    return list(seen)


def _mentions(text: str, names: set[str]) -> list[str]:
    """The given entities in order of first mention, sentence starts included."""
    return list(dict.fromkeys(t.text for t in _tokens(text) if t.text in names))


def content_words(text: str) -> list[str]:
    """Lower-cased non-stop words in order, numbers excluded (they have their own check)."""
    return [
        t.text.lower()
        for t in _tokens(text)
        if t.text[0].isalpha() and t.text.lower() not in _STOP_WORDS and len(t.text) > 1
    ]


# -- checks ---------------------------------------------------------------------------------------------


def _missing_entity(source: str, other: str) -> str | None:
    # Case-insensitive: "Province of Kandahar" / "Kandahar province" name the same place.
    words = {t.text.lower() for t in _tokens(other)}
    return next((e for e in entities(source) if e.lower() not in words), None)


def _order_flipped(first: list[str], second: list[str]) -> bool:
    """Whether two items that both lists share come in the opposite order in ``second``."""
    position = {item: i for i, item in enumerate(second)}
    shared = [item for item in first if item in position]
    return any(position[a] > position[b] for a, b in itertools.pairwise(shared))


def _without_months(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    # "21 January" / "January 21": a date's parts move freely, and its numbers are checked as a multiset.
    return [quantity for quantity in found if quantity[0] != "month"]


def _opposite(first: str, second: str) -> tuple[str, str] | None:
    return opposite_pair({stem(t.text) for t in _tokens(first)}, {stem(t.text) for t in _tokens(second)})


def _repaired(first: list[str], second: list[str]) -> tuple[str, str] | None:
    """A pair of neighbouring words in ``second`` that both occur in ``first`` but not side by side."""
    known = set(first)
    pairs = set(itertools.pairwise(first))
    return next((p for p in itertools.pairwise(second) if {*p} <= known and p not in pairs), None)


def verify(cached_prompt: str, new_prompt: str) -> Verdict:
    """Accept serving ``cached_prompt``'s answer for ``new_prompt`` only if the checks above all pass."""
    if cached_prompt == new_prompt:
        return ACCEPT
    if identifiers(cached_prompt) != identifiers(new_prompt):
        return Verdict(False, "identifiers differ")
    cached_numbers, new_numbers = quantities(cached_prompt), quantities(new_prompt)
    if sorted(cached_numbers) != sorted(new_numbers):
        return Verdict(False, "numbers differ")
    if _without_months(cached_numbers) != _without_months(new_numbers):
        return Verdict(False, "numbers in another order")
    if operators(cached_prompt) != operators(new_prompt):
        return Verdict(False, "operators differ")
    if negation_count(cached_prompt) != negation_count(new_prompt):
        return Verdict(False, "negation differs")
    opposite = _opposite(cached_prompt, new_prompt)
    if opposite:
        return Verdict(False, f"opposite words {opposite[0]!r} / {opposite[1]!r}")
    missing = _missing_entity(cached_prompt, new_prompt) or _missing_entity(new_prompt, cached_prompt)
    if missing:
        return Verdict(False, f"entity {missing!r} not in both")
    names = set(entities(cached_prompt)) | set(entities(new_prompt))
    if _order_flipped(_mentions(cached_prompt, names), _mentions(new_prompt, names)):
        return Verdict(False, "entity order differs")
    cached_words, new_words = content_words(cached_prompt), content_words(new_prompt)
    repaired = _repaired(cached_words, new_words) or _repaired(new_words, cached_words)
    if repaired:
        return Verdict(False, f"words {' '.join(repaired)!r} paired differently")
    return ACCEPT
