"""Every public import path of the installed LangGraph has its counterpart under agent_runtime: the same
module path (``langgraph.X`` -> ``agent_runtime.X``) and the same names, so LangGraph code runs with only
the import renamed. Walked: every public module of the ``langgraph`` and ``langgraph-prebuilt``
distributions, and ``langgraph.checkpoint.memory`` (LangGraph's other checkpoint modules are the saver
library itself, which agent_runtime graphs accept as is: test_langgraph_savers.py). Public: no part of
the path or name starts with ``_``; a module's ``__all__`` where it defines one, else the classes and
functions it defines."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import warnings
from types import ModuleType

# LangGraph names agent_runtime does not have, and why (module -> names; "*": the whole module).
KNOWN_MISSING: dict[str, dict[str, str]] = {}

_EXTRA_MODULES = ("langgraph.checkpoint.memory",)


def _public_modules() -> list[str]:
    names = set(_EXTRA_MODULES)
    for dist in ("langgraph", "langgraph-prebuilt"):
        for file in importlib.metadata.files(dist) or ():
            parts = file.with_suffix("").parts
            if file.suffix != ".py" or parts[0] != "langgraph":
                continue
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            if not any(p.startswith("_") for p in parts):
                names.add(".".join(parts))
    return sorted(names)


def _public_names(module: ModuleType) -> list[str]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return [n for n in declared if not n.startswith("_")]
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    ]


def _missing() -> dict[str, list[str]]:
    missing: dict[str, list[str]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated LangGraph modules warn when imported
        for name in _public_modules():
            theirs = importlib.import_module(name)
            known = KNOWN_MISSING.get(name, {})
            ours_name = "agent_runtime" + name.removeprefix("langgraph")
            try:
                ours = importlib.import_module(ours_name)
            except ModuleNotFoundError as exc:
                if exc.name is None or not ours_name.startswith(exc.name):
                    raise
                if "*" not in known:
                    missing[name] = ["<module>"]
                continue
            absent = [n for n in _public_names(theirs) if not hasattr(ours, n) and n not in known]
            if absent:
                missing[name] = absent
    return missing


def test_every_public_langgraph_import_path_exists_under_agent_runtime() -> None:
    assert _missing() == {}


def test_known_missing_names_are_still_missing() -> None:
    """The known-missing list shrinks as names are implemented: one that now exists must leave it."""
    present = []
    for module, names in KNOWN_MISSING.items():
        try:
            ours = importlib.import_module("agent_runtime" + module.removeprefix("langgraph"))
        except ModuleNotFoundError:
            continue
        present += [f"{module}.{n}" for n in names if n != "*" and hasattr(ours, n)]
    assert present == []
