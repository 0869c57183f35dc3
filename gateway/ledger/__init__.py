"""The spend and request ledger: every request record in SQLite or PostgreSQL, kept for months (docs/ledger.md)."""

from gateway.ledger.ledger import Ledger, create_ledger
from gateway.ledger.queries import GROUPS, Filters

__all__ = ["GROUPS", "Filters", "Ledger", "create_ledger"]
