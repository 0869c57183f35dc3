"""Words whose swap reverses a request or a reported fact, for the verifier's ``opposite`` check.

A pair belongs here when replacing one word by the other, all else equal, asks for a different answer
in the prompts a gateway sees: code and operations (add/remove, enable/disable, client/server), data
(ascending/descending, before/after, min/max) and reported facts (up/down, buy/sell, won/lost). Words
are compared by a crude stem, so inflections match ("added" / "removing").
"""

from __future__ import annotations

from functools import lru_cache

_PAIRS = """
add remove, add delete, insert delete, create delete, create destroy, enable disable, include exclude,
including excluding, allow deny, allow block, accept reject, approve reject, grant revoke, before after,
older newer, oldest newest, old new, earlier later, earliest latest, first last, min max, minimum maximum,
ascending descending, asc desc, increase decrease, increase reduce, raise lower, raise cut, rise fall,
up down, upward downward, higher lower, highest lowest, high low, more fewer, more less, most least,
greater less, greater smaller, larger smaller, bigger smaller, big small, longer shorter, long short,
faster slower, fast slow, open close, start stop, start end, begin end, import export, upload download,
encode decode, encrypt decrypt, compress decompress, serialize deserialize, zip unzip, push pull, read write,
input output, true false, left right, above below, inside outside, inner outer, upper lower,
uppercase lowercase, public private, sync async, synchronous asynchronous, horizontal vertical,
horizontally vertically, show hide, lock unlock, install uninstall, mount unmount, connect disconnect,
subscribe unsubscribe, attach detach, merge split, join split, buy sell, bought sold, buyer seller, win lose,
won lost, winner loser, profit loss, gain loss, gains losses, surplus deficit, success failure, succeed fail,
pass fail, valid invalid, empty full, lazy eager, mutable immutable, static dynamic, local remote,
global local, internal external, absolute relative, positive negative, odd even, light dark, hot cold,
warm cool, wet dry, cheap expensive, easy hard, safe unsafe, legal illegal, yesterday tomorrow,
morning evening, north south, east west, men women, male female, parent child, client server, hire fire,
appear disappear, visible invisible, guilty innocent, convicted acquitted, forward backward, next previous,
top bottom, head tail, inbound outbound, incoming outgoing, ingress egress, credit debit, deposit withdraw,
borrow lend, borrower lender, employer employee, home away, sender receiver, producer consumer,
serial parallel, sequential parallel, sequentially parallel, fix introduce, support drop, allowed forbidden,
required optional, mandatory optional, inclusive exclusive, online offline, upstream downstream,
frontend backend, debug release, dev prod, development production, plus minus, add subtract, multiply divide,
maximize minimize, expand collapse, enter exit, arrive depart, arrival departure, exporter importer,
gained lost, rose fell, raised lowered, wider narrower, thicker thinner, heavier lighter, strongest weakest,
stronger weaker, strong weak
"""


def stem(word: str) -> str:
    """A crude stem: enough for 'added' / 'adds' / 'adding' / 'add' to meet, not a linguist's."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # stopped -> stopp -> stop
    return word.removesuffix("e") if len(word) > 3 else word


@lru_cache(maxsize=1)
def opposites() -> dict[str, frozenset[str]]:
    """Each stem's opposites (both directions)."""
    found: dict[str, set[str]] = {}
    for pair in _PAIRS.replace("\n", " ").split(","):
        if not pair.strip():
            continue
        first, second = (stem(word) for word in pair.split())
        found.setdefault(first, set()).add(second)
        found.setdefault(second, set()).add(first)
    return {word: frozenset(others) for word, others in found.items()}


def opposite_pair(first: set[str], second: set[str]) -> tuple[str, str] | None:
    """A stem of ``first`` whose opposite is a stem of ``second``, neither being in both: (word, opposite)."""
    table = opposites()
    for word in first - second:
        for other in table.get(word, ()):
            if other in second and other not in first:
                return word, other
    return None
