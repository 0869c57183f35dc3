# Copied verbatim from https://github.com/langchain-ai/langgraph (langgraph 1.2.24),
# libs/langgraph/tests/__init__.py; Copyright (c) 2024 LangChain, Inc.; MIT License, see
# tests/langgraph_suite/LICENSE. Source and provenance: tests/langgraph_suite/README.md.
