"""Step builders shared by the loop guard's tests."""

from __future__ import annotations

from agent_runtime.guard import Step, make_tool_step


def bash(command: str, output: str = "ok", *, code: int = 0) -> Step:
    """A `bash` tool call with its result in SWE-agent's `<returncode>` format."""
    return make_tool_step("bash", {"command": command}, f"<returncode>{code}</returncode>\n{output}")
