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
_TOOLS = "langgraph-prebuilt's tool-calling nodes are not reimplemented (agent_runtime.prebuilt: create_react_agent)"
_PLATFORM = "LangGraph Platform (server, remote graphs, generative UI): no counterpart in an embedded runtime"
_TYPED_PARTS = "the TypedDicts naming v2 stream parts and debug payloads (typing only; the parts are produced)"
_DEBUG = "LangGraph's internal helpers of its debug stream (agent_runtime.engine.payloads builds the payloads)"
KNOWN_MISSING: dict[str, dict[str, str]] = {
    "langgraph.callbacks": {
        "get_async_graph_callback_manager_for_config": "graph lifecycle callbacks are run by agent_runtime.callbacks",
        "get_sync_graph_callback_manager_for_config": "graph lifecycle callbacks are run by agent_runtime.callbacks",
    },
    "langgraph.checkpoint.memory": {"PersistentDict": "InMemorySaver(factory=)'s on-disk dict; use SqliteCheckpointer"},
    "langgraph.graph.ui": {"*": _PLATFORM},
    "langgraph.managed.base": {"*": "LangGraph's managed-value protocol; agent_runtime's are markers in types.py"},
    "langgraph.prebuilt": {
        name: _TOOLS
        for name in (
            "ToolNode",
            "ToolCallTransformer",
            "tools_condition",
            "ValidationNode",
            "InjectedState",
            "InjectedStore",
            "ToolRuntime",
        )
    },
    "langgraph.prebuilt.chat_agent_executor": {
        "create_tool_calling_executor": _TOOLS,
        "AgentStatePydantic": _TOOLS,
        "AgentStateWithStructuredResponse": _TOOLS,
        "AgentStateWithStructuredResponsePydantic": _TOOLS,
    },
    "langgraph.prebuilt.interrupt": {"*": "Agent Inbox's TypedDicts (LangGraph Platform's human-in-the-loop UI)"},
    "langgraph.prebuilt.tool_node": {"*": _TOOLS},
    "langgraph.prebuilt.tool_validator": {"*": _TOOLS},
    "langgraph.pregel.debug": {
        name: _DEBUG
        for name in (
            "is_multiple_channel_write",
            "map_task_result_writes",
            "map_debug_task_results",
            "rm_pregel_keys",
            "map_debug_checkpoint",
            "tasks_w_writes",
            "get_colored_text",
            "get_bolded_text",
        )
    },
    "langgraph.pregel.protocol": {"PregelProtocol": "the abstract base of LangGraph's graphs and RemoteGraph"},
    "langgraph.pregel.remote": {"*": _PLATFORM},
    "langgraph.runtime": {"BaseUser": _PLATFORM},
    "langgraph.types": {
        **{
            name: _TYPED_PARTS
            for name in (
                "StreamPart",
                "ValuesStreamPart",
                "UpdatesStreamPart",
                "MessagesStreamPart",
                "CustomStreamPart",
                "CheckpointStreamPart",
                "TasksStreamPart",
                "DebugStreamPart",
                "TaskPayload",
                "TaskResultPayload",
                "CheckpointTask",
                "CheckpointPayload",
                "DebugPayload",
            )
        },
        "ensure_valid_checkpointer": "compile() checks (and adapts) checkpointers itself",
    },
    "langgraph.utils": {"*": "deprecated aliases of LangGraph internals, no public names"},
    "langgraph.utils.config": {"*": "deprecated aliases of LangGraph internals, no public names"},
    "langgraph.utils.runnable": {"*": "deprecated aliases of LangGraph internals, no public names"},
    "langgraph.version": {"*": "LangGraph's own package version"},
}

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


def _borrowed() -> list[str]:
    """Counterparts that are LangGraph's own objects re-exported (the drop-in must work without LangGraph)."""
    borrowed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _public_modules():
            try:
                ours = importlib.import_module("agent_runtime" + name.removeprefix("langgraph"))
            except ModuleNotFoundError:
                continue
            for attr in _public_names(importlib.import_module(name)):
                module = getattr(getattr(ours, attr, None), "__module__", None) or ""
                if module.split(".")[0] == "langgraph":
                    borrowed.append(f"{name}.{attr}")
    return borrowed


def _no_longer_missing() -> list[str]:
    """Known-missing names that now exist: the list must shrink as they are implemented."""
    present = []
    for module, names in KNOWN_MISSING.items():
        try:
            ours = importlib.import_module("agent_runtime" + module.removeprefix("langgraph"))
        except ModuleNotFoundError:
            continue
        present += [f"{module}.{n}" for n in names if n != "*" and hasattr(ours, n)]
    return present


def test_every_public_langgraph_import_path_exists_under_agent_runtime() -> None:
    assert _missing() == {}
    assert _borrowed() == []
    assert _no_longer_missing() == []
