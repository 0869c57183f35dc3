"""`langgraph.pregel._task_status` -> agent_runtime.engine.task_status (task status from saved writes)."""

from agent_runtime.engine.task_status import CONTROL_WRITES, TaskStatus, read_task_statuses
from langgraph import _shim

__all__ = ["CONTROL_WRITES", "TaskStatus", "read_task_statuses"]
__getattr__ = _shim.module_getattr(__name__)
