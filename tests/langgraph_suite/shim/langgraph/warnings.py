"""`langgraph.warnings`: LangGraph's deprecation warning categories (plain classes, no behaviour), so
modules that filter them (langgraph-prebuilt, the tests) import."""

from langgraph import _shim


class LangGraphDeprecationWarning(DeprecationWarning):
    pass


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    pass


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    pass


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    pass


__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
]
__getattr__ = _shim.module_getattr(__name__)
