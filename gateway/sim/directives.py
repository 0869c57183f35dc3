"""`[[sim:...]]` directives: instructions to the simulator written in the last user message.

They are plain text, so they travel unchanged through any gateway, SDK or format conversion.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gateway.sim.settings import FaultKind

_DIRECTIVE = re.compile(r"\[\[sim:(\w+)\s*(.*?)\]\]", re.DOTALL)


@dataclass(frozen=True)
class Directives:
    tool: tuple[str, dict[str, Any]] | None = None  # [[sim:tool NAME {json args}]]
    text: str | None = None  # [[sim:text ...]]
    chant: int | None = None  # [[sim:chant N]]
    fault: FaultKind | None = None  # [[sim:fault 429|500|529|timeout|malformed_stream|disconnect]]
    tokens: int | None = None  # [[sim:tokens N]]
    # [[sim:loop NAME {json args}]]: the same tool call after every tool result, for as long as any user
    # message of the conversation holds it (an agent stuck in a loop; read by `loop_directive`).
    loop: tuple[str, dict[str, Any]] | None = None


def _tool(argument: str) -> tuple[str, dict[str, Any]]:
    name, _, raw_args = argument.partition(" ")
    args = json.loads(raw_args) if raw_args.strip() else {}
    if not isinstance(args, dict):
        raise ValueError("tool arguments must be a JSON object")
    return name, args


def parse_directives(text: str) -> Directives:
    """Directives found in `text`; malformed ones are ignored so that they read as ordinary text."""
    found: dict[str, Any] = {}
    for name, raw in _DIRECTIVE.findall(text):
        argument = raw.strip()
        try:
            if name in ("tool", "loop"):
                found[name] = _tool(argument)
            elif name == "text":
                found["text"] = argument
            elif name in ("chant", "tokens"):
                found[name] = int(argument)
            elif name == "fault":
                found["fault"] = FaultKind(argument)
        except ValueError:
            continue
    return Directives(**found)
