"""Checks `cachegate serve` makes before it says it is listening: each failure is one line for the operator,
not a traceback from inside the server."""

from __future__ import annotations

import asyncio
import errno
import re
import socket

from redis.exceptions import RedisError

from gateway.state.clients import redis_client


class PortUnavailable(Exception):
    """The address cannot be listened on; the text says why and what to do."""


def check_port_free(host: str, port: int) -> None:
    """Bind the address as the server will (SO_REUSEADDR, as uvicorn does) and let it go again."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortUnavailable(
                    f"port {port} on {host} is already in use: stop what listens there, or pick another port "
                    "(--port, or `make serve PORT=...`)"
                ) from None
            raise PortUnavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def redis_unreachable(url: str, timeout_s: float) -> str | None:
    """None if Redis answers a PING; else one line naming the URL (without its password). The gateway still
    starts: every Redis operation falls back per process until Redis answers."""

    async def ping() -> None:
        client = redis_client(url, max(timeout_s, 1.0))
        try:
            await client.ping()
        finally:
            await client.aclose()

    try:
        asyncio.run(ping())
    except (RedisError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return (
            f"Redis at {without_password(url)} is unreachable ({reason}); serving with per-process state "
            "(sessions, limits, caches) until it answers"
        )
    return None


def without_password(url: str) -> str:
    """redis://user:secret@host:6379/0 -> redis://user:***@host:6379/0 (for a message or a log)."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
