"""Redis clients by URL: one server, a Redis Cluster, or a master found through Sentinel."""

from __future__ import annotations

from typing import cast
from urllib.parse import unquote

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.sentinel import Sentinel

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
SENTINEL_SCHEMES = {"redis+sentinel": False, "rediss+sentinel": True}  # -> TLS to the master
SENTINEL_PORT = 26379


def redis_client(url: str, timeout_s: float) -> aioredis.Redis:
    """A client for `redis://` / `rediss://` (one server); `redis+cluster://host:port` / `rediss+cluster://`
    (a Redis Cluster, discovered from that node: every operation that touches several keys names them with
    one hash tag, `{tenant}`, so it runs on one slot); or `redis+sentinel://[:password@]host:port[,host:port]
    /service[/db]` (the master Sentinel names for `service`, found again after a failover)."""
    scheme, _, rest = url.partition("://")
    if scheme in CLUSTER_SCHEMES:
        cluster = RedisCluster.from_url(
            f"{CLUSTER_SCHEMES[scheme]}://{rest}", socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        return cast(aioredis.Redis, cluster)  # the same command API, routed by key slot
    if scheme in SENTINEL_SCHEMES:
        return sentinel_master(rest, timeout_s, tls=SENTINEL_SCHEMES[scheme])
    return aioredis.Redis.from_url(
        url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, health_check_interval=30
    )


def sentinel_master(location: str, timeout_s: float, *, tls: bool) -> aioredis.Redis:
    """`[:password@]host:port[,host:port]/service[/db]`: a client of the service's current master."""
    credentials, _, address = location.rpartition("@")
    hosts, _, path = address.partition("/")
    service, _, db = path.partition("/")
    if not service or not hosts:
        raise ValueError("a Sentinel URL names its sentinels and the master: redis+sentinel://host:26379/mymaster")
    timeouts = {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
    sentinel = Sentinel([_node(host) for host in hosts.split(",")], sentinel_kwargs=timeouts)
    password = unquote(credentials.partition(":")[2]) or None
    return sentinel.master_for(
        service, db=int(db or 0), password=password, ssl=tls, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
    )


def _node(host: str) -> tuple[str, int]:
    name, _, port = host.rpartition(":") if ":" in host else (host, "", str(SENTINEL_PORT))
    return name, int(port)
