"""Canonical requests, scopes, caller controls and entry decoding (pure functions, no servers)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import orjson
import pytest

from gateway.config.response_cache import ResponseCacheConfig
from gateway.errors import GatewayError
from gateway.history.view import HistoryView, RawHistory
from gateway.response_cache.controls import parse_controls
from gateway.response_cache.eligibility import decide
from gateway.response_cache.entry import CorruptEntry, Entry, decode_entry, encode_entry
from gateway.response_cache.keys import Place, canonical_request, exact_key, place_of, semantic_scope

USER = {"role": "user", "content": "hello"}


def key(wire: str, body: dict[str, Any]) -> str:
    return exact_key(wire, canonical_request(wire, body))


def test_omitted_sampling_params_key_as_provider_defaults() -> None:
    base = {"model": "m", "messages": [USER]}
    assert key("openai", base) == key("openai", {**base, "temperature": 1, "top_p": 1.0, "n": 1})
    assert key("openai", base) != key("openai", {**base, "temperature": 0})
    assert key("anthropic", {**base, "max_tokens": 5}) == key("anthropic", {**base, "max_tokens": 5, "temperature": 1})


def test_fields_that_cannot_change_the_answer_are_ignored() -> None:
    base = {"model": "m", "messages": [USER]}
    marked = {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}
    same = {**base, "messages": [marked], "stream": True, "user": "u1", "metadata": {"user_id": "x"}}
    assert key("anthropic", base) == key("anthropic", same)
    assert key("openai", base) != key("anthropic", base)
    assert key("openai", base) != key("openai", {**base, "max_tokens": 10})


def test_tools_and_system_key_by_their_canonical_content() -> None:
    """Keyed by a digest of their canonical form, taken once per content (issue 28): marks and a string
    system's shape do not matter, any other difference does, and a system never stands for tools."""
    tool = {"name": "Bash", "description": "Runs a command.", "input_schema": {"type": "object"}}
    base = {"model": "m", "max_tokens": 5, "messages": [USER], "tools": [tool], "system": "be brief"}
    same = {
        **base,
        "tools": [{**tool, "cache_control": {"type": "ephemeral"}}],
        "system": [{"type": "text", "text": "be brief"}],
    }
    assert key("anthropic", base) == key("anthropic", same)
    assert key("anthropic", base) != key("anthropic", {**base, "tools": [{**tool, "description": "Runs."}]})
    assert key("anthropic", base) != key("anthropic", {**base, "system": "be thorough"})
    assert key("anthropic", base) != key("anthropic", {**base, "tools": []})
    assert key("anthropic", {**base, "tools": "x"}) != key("anthropic", {**base, "system": "x", "tools": None})
    # Through a session's view (the facts the previous body vouches for): the keys of serializing them.
    raw = orjson.dumps(base)
    for _ in range(2):
        body = orjson.loads(raw)
        view = HistoryView(raw=RawHistory.of(raw, body, "messages"), session=("acme", "keys"))
        assert exact_key("anthropic", canonical_request("anthropic", body, None, view)) == key("anthropic", base)


def test_semantic_scope_separates_settings_and_history() -> None:
    def scope(body: dict[str, Any]) -> Any:
        return semantic_scope("openai", canonical_request("openai", {"model": "m", **body}))

    plain = scope({"messages": [USER]})
    assert plain.prompt == "hello"
    with_system = scope({"messages": [{"role": "system", "content": "be brief"}, USER]})
    with_history = scope(
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, USER]}
    )
    assert with_system.settings_hash != plain.settings_hash and with_system.history_hash == plain.history_hash
    assert with_history.history_hash != plain.history_hash and with_history.settings_hash == plain.settings_hash
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}
    assert scope({"messages": [image]}) is None
    assert scope({"messages": [USER, {"role": "assistant", "content": "prefill"}]}) is None


def test_controls_and_eligibility() -> None:
    policy = ResponseCacheConfig()
    body = {"model": "m", "messages": [USER]}
    scope = semantic_scope("openai", canonical_request("openai", body))
    default = decide("openai", body, scope, parse_controls({}), policy)
    assert default.serve and default.store and not default.semantic and default.semantic_skip == "temperature"
    opted = decide("openai", body, scope, parse_controls({"x-cachegate-cache-semantic": "on"}), policy)
    assert opted.semantic
    no_store = decide("openai", body, scope, parse_controls({"cache-control": "no-store"}), policy)
    assert not no_store.serve and not no_store.store
    controls = parse_controls({"cache-control": "max-age=0", "x-cachegate-cache-ttl": "999999"})
    assert controls.no_cache and decide("openai", body, scope, controls, policy).ttl_s == policy.max_ttl_s
    with pytest.raises(GatewayError):
        parse_controls({"x-cachegate-cache-namespace": "a:b"})


def test_entries_round_trip_and_reject_tampering() -> None:
    place = Place("ten:ant", "ns", "model/x")
    key = place.key("s", "abc")
    assert place_of(key) == place
    vector = np.arange(4, dtype=np.float32)
    entry = Entry(key, "openai", {"choices": []}, 0.5, time.time(), time.time() + 5, "p", "scope", vector)
    raw = encode_entry(entry)
    decoded = decode_entry(raw, key)
    assert decoded.prompt == "p" and np.array_equal(decoded.vector, vector)  # type: ignore[arg-type]
    for damaged, under in [(raw[:-2], key), (raw.replace(b'"p"', b'"q"'), key), (raw, place.key("s", "abd"))]:
        with pytest.raises(CorruptEntry):
            decode_entry(damaged, under)


def test_a_place_s_prefix_is_remembered_only_when_short() -> None:
    """Each request makes its place's prefix twice, so it is remembered; the model and namespace are the
    caller's, so a long one is made each time and never held."""
    from gateway.response_cache import keys

    short, long = Place("ten:ant", "ns", "model/x"), Place("t", "n" * 600, "m")
    before = keys._remembered.cache_info()
    assert short.prefix() == short.prefix() == "rc:ten%3Aant:ns:model%2Fx:"
    assert long.prefix() == f"rc:t:{'n' * 600}:m:" and place_of(long.key("x", "h")) == long
    after = keys._remembered.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) in ((1, 1), (2, 0))
