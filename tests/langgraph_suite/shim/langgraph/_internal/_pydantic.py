"""`langgraph._internal._pydantic` -> agent_runtime.core.models."""

from agent_runtime.core.models import create_model, is_supported_by_pydantic
from langgraph import _shim

__all__ = ["create_model", "is_supported_by_pydantic"]
__getattr__ = _shim.module_getattr(__name__)
