"""Canonical requests, scopes, caller controls and entry decoding (pure functions, no servers)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from gateway.config.response_cache import ResponseCacheConfig
from gateway.errors import GatewayError
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
