"""Typed configuration (pydantic-settings + YAML). See README 'Configuration'."""

from gateway.config.models import ModelConfig
from gateway.config.policy import PolicyConfig, effective_policy
from gateway.config.settings import Settings, load_settings
from gateway.config.tenants import TenantConfig, hash_key

__all__ = [
    "ModelConfig",
    "PolicyConfig",
    "Settings",
    "TenantConfig",
    "effective_policy",
    "hash_key",
    "load_settings",
]
