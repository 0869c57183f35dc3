"""The settings that change without a restart (tenants, the global policy, models with their prices, model
aliases), and checking a change of them before it is taken: a mistake is one ConfigError line naming where
and which field, and the settings in force stay as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.config.loading import ConfigError, parse_config
from gateway.config.models import ModelConfig
from gateway.config.policy import PolicyConfig
from gateway.config.settings import Settings
from gateway.config.tenants import TenantConfig


class LiveConfig(BaseModel):
    """A change of the live sections; a section left out stays as it is."""

    model_config = ConfigDict(extra="forbid")

    tenants: list[TenantConfig] | None = None
    policy: PolicyConfig | None = None
    models: list[ModelConfig] | None = None
    model_aliases: dict[str, str] | None = Field(default=None)


LIVE_SECTIONS = tuple(LiveConfig.model_fields)
LIVE_NAMES = ", ".join(LIVE_SECTIONS)


def parse_live(text: str, source: str) -> LiveConfig:
    """A change written as YAML or JSON; ConfigError (`source:line: field: message`) for any mistake."""
    config = parse_config(text, Path(source))
    for key in config.data:
        if key in Settings.model_fields and key not in LIVE_SECTIONS:
            raise ConfigError(f"{config.where((key,))}: {key}: changes only on a restart (live: {LIVE_NAMES})")
    config.check_known_keys(LiveConfig)
    try:
        return LiveConfig.model_validate(config.data)
    except ValidationError as exc:
        raise config.validation_error(exc) from None


def with_live(settings: Settings, change: LiveConfig, source: str) -> Settings:
    """`settings` with the sections `change` names replaced, checked as a whole (fallbacks and aliases name
    configured models); ConfigError if they do not hold together."""
    update = {name: getattr(change, name) for name in LIVE_SECTIONS if getattr(change, name) is not None}
    try:  # validated again as a whole: the checks across sections (Settings._check_routes) run
        return Settings.model_validate({**dict(settings), **update})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise ConfigError(f"{source}: {str(error['msg']).removeprefix('Value error, ')}") from None


def live_document(settings: Settings) -> dict[str, Any]:
    """The live sections in force, as a document parse_live reads back (key hashes and env var names only)."""
    return {name: _dumped(getattr(settings, name)) for name in LIVE_SECTIONS}


def _dumped(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, list):
        return [_dumped(item) for item in value]
    return value


def file_sections(settings: Settings) -> LiveConfig:
    """The live sections of settings loaded from a file, as a change."""
    return LiveConfig.model_validate({name: getattr(settings, name) for name in LIVE_SECTIONS})
