"""The spend and request ledger (gateway/ledger/): every request record in a database, for months."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

SCHEMES = ("sqlite://", "postgresql://", "postgres://")


class LedgerConfig(BaseModel):
    enabled: bool = True
    url: str = Field(
        default="sqlite:///cachegate-ledger.sqlite3",
        description="sqlite:///relative/path, sqlite:////absolute/path, sqlite:// (in memory: gone with the "
        "process) or postgresql://user:password@host:port/database",
        repr=False,  # may hold a password
    )
    retention_months: int = Field(default=13, ge=1, description="Whole calendar months kept before the current one")
    batch: int = Field(default=500, gt=0, description="Records written in one transaction at most")
    flush_ms: int = Field(default=200, gt=0, description="A record waits at most this long for its batch")
    queue: int = Field(default=50_000, gt=0, description="Records waiting to be written; beyond, dropped (counted)")
    seed_interval_s: float = Field(
        default=1.0, gt=0, description="How often each replica checks that Redis still holds the budget counters"
    )
    timeout_s: float = Field(default=5.0, gt=0, description="Connecting, and each statement, at most")

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, url: str) -> str:
        if not url.startswith(SCHEMES):
            raise ValueError(f"the ledger's url starts with one of {', '.join(SCHEMES)}")
        return url
