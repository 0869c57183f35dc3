"""Context compaction (reversible) and summarization (irreversible) of long agent histories.

See docs/compaction.md. The stage is gateway/stages/compaction.py; the retrieval endpoint
gateway/api/context_retrieval.py.
"""

from gateway.compaction.engine import Outcome, Run
from gateway.compaction.metrics import CompactionMetrics
from gateway.compaction.originals import Originals
from gateway.compaction.thresholds import Thresholds, context_window, resolve

__all__ = ["CompactionMetrics", "Originals", "Outcome", "Run", "Thresholds", "context_window", "resolve"]
