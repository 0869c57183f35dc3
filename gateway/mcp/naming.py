"""Public tool names: '<server>__<tool>', so one endpoint can list every upstream's tools without clashes.

Server names hold no '__' (gateway/config/mcp.py), so the first '__' of a public name ends the server's.
"""

from __future__ import annotations

SEPARATOR = "__"


def public_name(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{tool}"


def split_name(name: str) -> tuple[str, str] | None:
    """(server, upstream tool name), or None when the name has no server prefix."""
    server, separator, tool = name.partition(SEPARATOR)
    return (server, tool) if separator and server and tool else None
