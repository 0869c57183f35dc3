"""Gateway side of the loop guard: the stage (gateway/stages/guard.py) feeds agent_runtime.guard.

One concept per module: ``policy`` (config -> core policy), ``parsers`` (per-replica incremental step
parsing), ``state`` (per-session strikes, counters and decisions in the shared store), ``nudge``
(a message for the model appended to the request), ``terminate`` (the opt-in terminate tool),
``reply`` (headers, stop replies, block errors), ``chanting`` (response-text checks), ``activity``
(sessions seen recently) and ``metrics``. See docs/loop-guard.md, section "Gateway".
"""
