"""`langgraph._internal._fields`: what a schema says about its fields (agent_runtime.core.fields)."""

from agent_runtime.core.fields import enhanced_type_hints as get_enhanced_type_hints
from agent_runtime.core.fields import field_default as get_field_default
from agent_runtime.core.fields import is_optional_type as _is_optional_type
from langgraph import _shim

__all__ = ["_is_optional_type", "get_enhanced_type_hints", "get_field_default"]
__getattr__ = _shim.module_getattr(__name__)
