"""Putting checked settings in force on one replica: every object built from the live sections is rebuilt
first, then all of them are assigned with no await between, so no request's step sees half a change."""

from __future__ import annotations

import logging

from gateway.auth import config_keys
from gateway.config import Settings
from gateway.pools.model import build_pools
from gateway.services import Services

log = logging.getLogger("cachegate.live")


def put_in_force(services: Services, settings: Settings, source: str) -> None:
    keys, pools = config_keys(settings.tenants), build_pools(settings.models)
    tenants = {tenant.name: tenant for tenant in settings.tenants}
    services.settings = settings
    services.router.settings = settings
    services.router.pools.pools = pools
    services.keys.keys = keys
    services.managed_keys.tenants = tenants
    services.managed_keys.version = None  # managed keys carry their tenant: reloaded on the next poll
    if services.budget_seeder is not None:
        services.budget_seeder.tenants = settings.tenants
    services.clear_policies()
    log.info("live config from %s in force: %d tenants, %d models", source, len(tenants), len(settings.models))
