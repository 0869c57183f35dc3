"""Facts about a request's history, computed once per message content and shared by the stages.

`facts.py` holds the per-process memo (message content digest -> what the stages derived from it);
`view.py` is the per-request view the stages reach through `RequestContext.history`.
"""

from gateway.history.facts import MessageFacts, content_digest, memo, starts_with
from gateway.history.view import HistoryView

__all__ = ["HistoryView", "MessageFacts", "content_digest", "memo", "starts_with"]
