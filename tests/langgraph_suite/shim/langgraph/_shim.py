"""Machinery of the `langgraph` shim (see tests/langgraph_suite/README.md).

* `langgraph.checkpoint`, `langgraph.store`, `langgraph.cache` (the langgraph-checkpoint distribution)
  and `langgraph.prebuilt` (langgraph-prebuilt) are loaded from the real installation, except
  `langgraph.checkpoint.memory`, which is agent_runtime's in-memory checkpointer.
* A module that exists in this folder maps LangGraph names to agent_runtime.
* Any other `langgraph.*` module, and any name one of these modules lacks, resolves to a `Missing`
  stub: importing it works, using it raises `ShimMissing` naming the LangGraph API agent_runtime does
  not have. A test file that imports forty names thus still runs the tests that need none of them.
  With LANGGRAPH_SHIM_STRICT=1 a missing name or module raises ImportError instead.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

SHIM_DIR = os.path.dirname(os.path.abspath(__file__))
STRICT = os.environ.get("LANGGRAPH_SHIM_STRICT", "") not in ("", "0")
# Subpackages of other real distributions (langgraph-checkpoint, langgraph-prebuilt) that stay real.
REAL_SUBPACKAGES = ("checkpoint", "store", "cache", "prebuilt")
# Real modules replaced by a file of this folder: name -> file.
OVERRIDES = {"langgraph.checkpoint.memory": os.path.join(SHIM_DIR, "_checkpoint_memory.py")}
# Every Missing name that was used (raised), for the run's summary.
USED: dict[str, int] = {}


def _real_langgraph_dir() -> str:
    """The installed langgraph package folder (langgraph-checkpoint's files live in it)."""
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), "langgraph")
        if os.path.abspath(candidate) != SHIM_DIR and os.path.isdir(os.path.join(candidate, "checkpoint")):
            return os.path.abspath(candidate)
    raise ImportError("langgraph shim: the real langgraph-checkpoint package is not installed")


REAL_DIR = _real_langgraph_dir()


class ShimMissing(NotImplementedError):
    """A LangGraph API the shim does not map to agent_runtime was used."""


def _fail(name: str) -> ShimMissing:
    USED[name] = USED.get(name, 0) + 1
    return ShimMissing(f"agent_runtime has no {name}")


class Missing:
    """Stands for a LangGraph name agent_runtime lacks: any use raises ShimMissing."""

    __slots__ = ("_shim_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_shim_name", name)

    def __repr__(self) -> str:
        return f"<missing {self._shim_name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _fail(self._shim_name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise _fail(f"{self._shim_name}.{attr}")

    def __setattr__(self, attr: str, value: Any) -> None:
        raise _fail(f"{self._shim_name}.{attr}")

    def __getitem__(self, item: Any) -> Any:  # typing use (`Runtime[ContextT]`): still a stub
        return Missing(f"{self._shim_name}[...]")

    def __or__(self, other: Any) -> Any:  # typing use (`X | None`): still a stub
        return Missing(self._shim_name)

    __ror__ = __or__

    def __iter__(self) -> Any:
        raise _fail(self._shim_name)

    def __enter__(self) -> Any:
        raise _fail(self._shim_name)

    def __instancecheck__(self, obj: Any) -> bool:  # `isinstance(x, MissingClass)`: name what is missing
        raise _fail(self._shim_name)

    def __subclasscheck__(self, cls: Any) -> bool:
        raise _fail(self._shim_name)

    def __exit__(self, *exc: Any) -> None:
        return None

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        """`class X(MissingBase)` defines X; creating an X raises ShimMissing."""
        name = self._shim_name

        def __init__(obj: Any, *args: Any, **kwargs: Any) -> None:
            raise _fail(name)

        def __init_subclass__(cls: type, **kwargs: Any) -> None:
            return None

        base = type(
            f"Missing[{name}]",
            (),
            {"__init__": __init__, "__init_subclass__": classmethod(__init_subclass__), "_shim_missing": name},
        )
        return (base,)


def module_getattr(module_name: str) -> Callable[[str], Any]:
    """A module `__getattr__`: names this shim module does not define are Missing stubs."""

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {attr!r}")
        if STRICT:
            raise AttributeError(f"agent_runtime has no {module_name}.{attr}")
        return Missing(f"{module_name}.{attr}")

    return __getattr__


class _StubLoader(importlib.abc.Loader):
    """Creates a module whose every name is a Missing stub (a LangGraph module with no counterpart)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []  # a package: its submodules are stubs too
        module.__getattr__ = module_getattr(spec.name)  # type: ignore[method-assign]
        module._shim_stub = True  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class ShimFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("langgraph."):
            return None
        if fullname in OVERRIDES:
            return importlib.util.spec_from_file_location(fullname, OVERRIDES[fullname])
        parts = fullname.split(".")
        if parts[1] in REAL_SUBPACKAGES:
            if len(parts) == 2:
                return importlib.machinery.PathFinder.find_spec(fullname, [REAL_DIR])
            return None  # the real package's __path__ finds it
        parent = sys.modules.get(fullname.rpartition(".")[0])
        if parent is not None and parent.__dict__.get("_shim_stub", False):
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path or [SHIM_DIR])
        if spec is not None:
            return spec
        if STRICT:
            return None
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)


def install() -> None:
    if not any(isinstance(finder, ShimFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, ShimFinder())
