"""Model aliases: any model name a client sends -> a configured route name.

A map's keys are exact names (`claude-opus-5-5`) or glob patterns (`claude-opus-*`, `gpt-*`, `*`; `*`
matches any run of characters, `?` one character), its values are route names (`models[].name`).
One map is read as: the exact key first, then the longest matching pattern (ties: the first written).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

WILDCARDS = frozenset("*?[")


def is_pattern(key: str) -> bool:
    return any(c in WILDCARDS for c in key)


def lookup(aliases: Mapping[str, str], name: str) -> str | None:
    """The route name `aliases` maps `name` to, or None."""
    exact = aliases.get(name)
    if exact is not None:
        return exact
    best: tuple[int, str] | None = None
    for key, target in aliases.items():
        if is_pattern(key) and fnmatchcase(name, key) and (best is None or len(key) > best[0]):
            best = (len(key), target)
    return best[1] if best else None


def resolve(name: str, routes: Mapping[str, object], *maps: Mapping[str, str]) -> str | None:
    """The route name serving a requested model: a route's own name first, then each alias map in
    order (the tenant's before the global one). None: no route answers to this name."""
    if name in routes:
        return name
    for aliases in maps:
        target = lookup(aliases, name)
        if target is not None:
            return target
    return None


def unknown_targets(aliases: Mapping[str, str], routes: Mapping[str, object] | set[str]) -> list[str]:
    """The alias targets that are not route names (a configuration error)."""
    return sorted({target for target in aliases.values() if target not in routes})
