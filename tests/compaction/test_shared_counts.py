"""A session's token counts as the replicas share them (gateway/compaction/shared_counts.py): a record
round-trips the counts by content digest, fills only the messages it knows, keeps the newest counts when a
history outgrows it, and a record that is not one (a foreign or truncated value) fills nothing."""

from __future__ import annotations

from gateway.compaction import shared_counts
from gateway.compaction.shared_counts import ENTRY, MAX_ENTRIES, counts_key
from gateway.history import MessageFacts
from gateway.history.facts import content_digest
from gateway.state import MemoryStore
from gateway.state.request import RequestStore

ENCODING = "o200k_base"


def facts(count: int, tag: str, counted: bool) -> list[MessageFacts]:
    made = [MessageFacts(content_digest(f"{tag} {n}".encode()), 10, 0) for n in range(count)]
    if counted:
        for number, fact in enumerate(made):
            fact.tokens[ENCODING] = 100 + number
    return made


async def test_counts_one_replica_shares_fill_another_replicas_facts_by_digest() -> None:
    store = RequestStore(MemoryStore())
    shared_counts.share(store, "acme:s", ENCODING, facts(5, "m", counted=True), 60)
    await store.flush()
    other = [*facts(5, "m", counted=False), *facts(2, "new", counted=False)]  # another replica's, 2 new
    assert await shared_counts.take(RequestStore(store.store), "acme:s", ENCODING, other) == 5
    assert [fact.tokens.get(ENCODING) for fact in other] == [100, 101, 102, 103, 104, None, None]
    assert await shared_counts.take(RequestStore(store.store), "acme:s", "cl100k_base", other) == 0


async def test_a_history_longer_than_the_record_keeps_its_newest_counts() -> None:
    store = RequestStore(MemoryStore())
    history = facts(MAX_ENTRIES + 3, "long", counted=True)
    shared_counts.share(store, "acme:long", ENCODING, history, 60)
    await store.flush()
    raw = await store.get(counts_key("acme:long", ENCODING))
    assert raw is not None and len(raw) == MAX_ENTRIES * ENTRY.size
    assert next(ENTRY.iter_unpack(raw))[0] == history[3].digest


async def test_a_value_that_is_no_record_fills_nothing() -> None:
    store = MemoryStore()
    for value in (b"x" * (ENTRY.size + 1), b""):
        await store.set(counts_key("acme:bad", ENCODING), value)
        assert await shared_counts.take(RequestStore(store), "acme:bad", ENCODING, facts(3, "m", False)) == 0
