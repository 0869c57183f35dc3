"""A session's token counts, shared by the replicas that answer it.

Counting tokens is the one part of compaction that costs the history's size: the engine counts every
message once, when the session's bound first crosses a threshold (engine.py `_count_loose`), and
remembers the counts with the messages' facts (gateway/history/). Those are per process, so with N
replicas answering one session in turn, each one counted the whole history again. The counts a replica
takes are kept in the shared store as one record per session (content digest and count of each
message), written with the request's next round trip; a replica about to count reads that record first
(one read, only then) and counts only the messages it does not hold. A count depends only on the
message's content and the encoding, so a record is valid for any history that holds the same messages.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from gateway.history import MessageFacts
from gateway.history.facts import DIGEST_SIZE
from gateway.state import Op, StateStore
from gateway.state.request import RequestStore

ENTRY = struct.Struct(f"<{DIGEST_SIZE}sI")  # a message's content digest and its count
MAX_ENTRIES = 4_096  # the newest messages' counts (~80 KB): older ones are counted again if ever needed


def counts_key(session: str, encoding: str) -> str:
    return f"cg:cmp:tok:{encoding}:{session}"


def shared(store: StateStore) -> bool:
    """Whether other replicas see this store (a memory store: the facts already hold every count)."""
    return store.backend != "memory"


async def take(store: StateStore, session: str, encoding: str, facts: Sequence[MessageFacts]) -> int:
    """Fill in the counts of `facts` that the session's record holds; how many it filled."""
    raw = await store.get(counts_key(session, encoding))
    if not raw or len(raw) % ENTRY.size:
        return 0
    known = dict(ENTRY.iter_unpack(raw))
    filled = 0
    for fact in facts:
        count = known.get(fact.digest)
        if count is not None and encoding not in fact.tokens:
            fact.tokens[encoding] = count
            filled += 1
    return filled


def share(store: RequestStore, session: str, encoding: str, facts: Sequence[MessageFacts], ttl_s: float) -> None:
    """Record the counts of the history's counted messages, with the request's next round trip."""
    entries = [ENTRY.pack(fact.digest, count) for fact in facts if (count := fact.tokens.get(encoding)) is not None]
    if entries:
        record = b"".join(entries[-MAX_ENTRIES:])
        store.defer([Op("set", counts_key(session, encoding), ttl_s=ttl_s, values=(record,))])
