"""Schema migrations: ordered SQL files per backend (migrations/<backend>/NNNN_name.sql), each applied once
and noted in the table `schema_migrations`. A dozen lines instead of a framework (Alembic would bring
SQLAlchemy for one table whose changes are plain DDL, and would need its own setup on every replica)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).parent / "migrations"
TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"  # noqa: E501


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    def statements(self) -> list[str]:
        """The file's statements (no semicolon inside one: plain DDL)."""
        lines = [line for line in self.sql.splitlines() if not line.lstrip().startswith("--")]
        return [statement.strip() for statement in "\n".join(lines).split(";") if statement.strip()]


def migrations(backend: str) -> list[Migration]:
    """The backend's migrations in version order."""
    found = []
    for path in sorted((FOLDER / backend).glob("*.sql")):
        version, _, name = path.stem.partition("_")
        found.append(Migration(int(version), name, path.read_text(encoding="utf-8")))
    return found


def pending(backend: str, applied: set[int]) -> list[Migration]:
    return [migration for migration in migrations(backend) if migration.version not in applied]
