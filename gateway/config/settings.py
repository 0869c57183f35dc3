"""All gateway settings in one typed place: a YAML file, overridden by CACHEGATE_* environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from gateway.config.alerts import AlertsConfig
from gateway.config.aliases import resolve, unknown_targets
from gateway.config.ledger import LedgerConfig
from gateway.config.loading import read_config
from gateway.config.mcp import McpConfig
from gateway.config.models import ModelConfig
from gateway.config.policy import PolicyConfig
from gateway.config.pools import PoolsConfig
from gateway.config.request_log import RequestLogConfig
from gateway.config.tenants import TenantConfig
from gateway.config.tracing import TracingConfig

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "default.yaml"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CACHEGATE_", env_nested_delimiter="__", extra="forbid")

    host: str = "127.0.0.1"
    port: int = 4000
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("redis_url", "CACHEGATE_REDIS_URL", "REDIS_URL")
    )
    redis_timeout_s: float = Field(
        default=0.25, description="Per-operation Redis timeout before fallback, on the time the event loop could run"
    )
    admin_keys: list[str] = Field(default_factory=list, description="Hashed admin keys: 'sha256:<hex>'")
    max_body_bytes: int = 8 * 1024 * 1024
    keep_alive_s: int = Field(
        default=75,
        gt=0,
        description="Seconds an idle client connection stays open. Longer than the balancer's or client's own "
        "idle timeout (nginx: 60 s), so they close it first: a server closing a connection the client has just "
        "reused resets that request",
    )
    stream_drain_s: float = Field(
        default=300.0,
        ge=0,
        description="Seconds a stream whose client left is still read from the provider, so that what the "
        "provider generated is charged; past it the gateway stops reading and charges an estimate",
    )
    stream_drain_bytes: int = Field(
        default=16 * 1024 * 1024, ge=0, description="Bytes such a stream is still read, past which likewise"
    )
    cors_origins: list[str] = Field(default_factory=list, description="Empty: CORS closed")
    embedded_simulator: bool = Field(default=False, description="Mount the provider simulator at /sim")
    simulator_latency: Literal["none", "realistic"] = "none"
    simulator_replay_file: Path | None = Field(default=None, description="Agent traces the simulator replays")
    simulator_record_requests: bool = Field(
        default=False, description="Keep recent upstream bodies for GET /sim/sim/requests (tests only)"
    )
    metrics_tokens: list[str] = Field(
        default_factory=list,
        description="Hashed bearer tokens for GET /metrics ('sha256:<hex>'; admin keys work too). "
        "Empty: /metrics is open on a loopback bind only",
    )
    models: list[ModelConfig] = Field(default_factory=list)
    model_aliases: dict[str, str] = Field(
        default_factory=dict,
        description="Requested model name or glob pattern -> route name ({'claude-opus-*': 'claude-sonnet-4-5', "
        "'*': 'gpt-4o-mini'}); tenants' own model_aliases are read first (gateway/config/aliases.py)",
    )
    pools: PoolsConfig = Field(default_factory=PoolsConfig, description="Deployment pools (docs/pools.md)")
    tenants: list[TenantConfig] = Field(default_factory=list)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    request_log: RequestLogConfig = Field(default_factory=RequestLogConfig)
    ledger: LedgerConfig = Field(default_factory=LedgerConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    mcp: McpConfig = Field(default_factory=McpConfig, description="Upstream MCP servers behind /mcp")
    alerts: AlertsConfig = Field(default_factory=AlertsConfig, description="Alert webhooks (docs/alerts.md)")
    log_level: str = "info"
    config_watch_s: float = Field(
        default=1.0,
        ge=0,
        description="Seconds between checks of the config file's modification time; a change reloads its "
        "tenants, policy, models and model_aliases (as SIGHUP does). 0: no watch",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls))

    @model_validator(mode="after")
    def _check_routes(self) -> Settings:
        names = [m.name for m in self.models]
        # Entries sharing a name are one pool of deployments; their ids must tell them apart.
        ids = [(m.name, m.deployment_id) for m in self.models if m.deployment_id is not None]
        duplicates = {f"{name}: {id_}" for name, id_ in ids if ids.count((name, id_)) > 1}
        if duplicates:
            raise ValueError(f"duplicate deployment ids: {sorted(duplicates)}")
        for model in self.models:
            unknown = [f for f in model.fallbacks if f not in names]
            if unknown:
                raise ValueError(f"model {model.name!r} has unknown fallbacks {unknown}")
        for tenant in self.tenants:
            unknown = [n for n, pools in tenant.fallbacks.items() for f in [n, *pools] if f not in names]
            if unknown:
                raise ValueError(f"tenant {tenant.name!r} has fallbacks naming unknown models {unknown}")
        routes = set(names)
        for owner, aliases in [("model_aliases", self.model_aliases)] + [
            (f"tenant {t.name!r} model_aliases", t.model_aliases) for t in self.tenants
        ]:
            unknown = unknown_targets(aliases, routes)
            if unknown:
                raise ValueError(f"{owner} map to unknown models {unknown}")
        return self

    def model_by_name(self, name: str) -> ModelConfig | None:
        """The route with exactly this public name (fallbacks, summarizers: no aliases); for a pool, its
        first deployment, which stands for the pool until the router picks one (gateway/pools/)."""
        return next((m for m in self.models if m.name == name), None)

    @property
    def routes(self) -> list[ModelConfig]:
        """One entry per public name (a pool's first deployment), in configuration order."""
        firsts: dict[str, ModelConfig] = {}
        for model in self.models:
            firsts.setdefault(model.name, model)
        return list(firsts.values())

    def route_for(self, requested: str, tenant: TenantConfig | None = None) -> ModelConfig | None:
        """The route serving a model name a client sent: a route's own name, else the tenant's aliases,
        else the global ones (exact name, then the longest matching pattern). None: no route."""
        routes = {m.name: m for m in self.routes}
        maps = [tenant.model_aliases] if tenant is not None else []
        name = resolve(requested, routes, *maps, self.model_aliases)
        return routes.get(name) if name is not None else None


def load_settings(path: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings from a YAML file (the embedded default when none is given); env vars and overrides win."""
    config_file = Path(path) if path else DEFAULT_CONFIG
    config = read_config(config_file)  # ConfigError (one line: file, line, field) for every mistake
    config.check_known_keys(Settings)

    class FileSettings(Settings):
        model_config = SettingsConfigDict(**{**Settings.model_config, "yaml_file": str(config_file)})

    try:
        return FileSettings(**overrides)
    except ValidationError as exc:
        raise config.validation_error(exc) from None
