"""The bottom layer: the values a graph holds (agent_runtime.core.types), its state schemas
(core.schema), the config keys of LangGraph's task protocol (core.protocol) and the config helpers
(core.run_config), pydantic models (core.models, core.fields) and LangGraph's deprecation warnings
(core.deprecation). Imports nothing above it (see docs/runtime.md, "Layout")."""
