"""Configuration: YAML file, environment overrides, per-model and per-tenant policy, hashed keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.config import PolicyConfig, Settings, effective_policy, hash_key, load_settings
from gateway.config.loading import ConfigError


def test_embedded_default_loads() -> None:
    settings = load_settings()
    assert settings.embedded_simulator and settings.redis_url is None
    assert {m.name for m in settings.models} >= {"gpt-4o-mini", "claude-sonnet-4-5"}
    assert settings.tenants[0].keys == [hash_key("sk-cachegate-dev")]


def test_yaml_then_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "port: 5000\nredis_url: redis://example:6379/0\nmodels:\n"
        "  - {name: m, provider: openai, model: gpt-4o-mini, api_key_env: OPENAI_KEY}\n"
    )
    assert load_settings(config).port == 5000
    monkeypatch.setenv("CACHEGATE_PORT", "5001")
    monkeypatch.setenv("REDIS_URL", "redis://other:6379/1")
    settings = load_settings(config)
    assert settings.port == 5001 and settings.redis_url == "redis://other:6379/1"


def test_keys_must_be_hashed() -> None:
    with pytest.raises(ValidationError, match="hashed"):
        Settings.model_validate({"tenants": [{"name": "t", "keys": ["sk-plain"]}]})


def test_unknown_fallback_rejected() -> None:
    with pytest.raises(ValidationError, match="fallbacks"):
        Settings.model_validate({"models": [{"name": "a", "provider": "openai", "model": "x", "fallbacks": ["nope"]}]})


def test_policy_overrides_merge_in_order() -> None:
    base = PolicyConfig()
    merged = effective_policy(
        base, {"guard": {"enabled": False}}, {"guard": {"enabled": True}, "compaction": {"enabled": False}}
    )
    assert merged.guard.enabled and not merged.compaction.enabled and merged.response_cache.enabled


def test_missing_config_file() -> None:
    with pytest.raises(ConfigError, match=r"^/nonexistent/cachegate.yaml: no such config file$"):
        load_settings("/nonexistent/cachegate.yaml")
