"""A PostgreSQL server of the suite's own, like tests/redis_target.py's Redis: initdb into a temporary
folder and `pg_ctl start` on a free loopback port (no socket file, trust authentication for its one user),
stopped and deleted afterwards. As root (CI), the server runs as the `postgres` user the Debian package
creates: PostgreSQL refuses to run as root. `fresh_database` gives each test an empty database on it."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.ports import spawn_port

USER = "cachegate"
START_TIMEOUT_S = 60


def postgres_bin() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


def _run(argv: list[str], owner: str | None) -> None:
    prefix = ["runuser", "-u", owner, "--"] if owner else []
    subprocess.run(prefix + argv, check=True, capture_output=True, timeout=START_TIMEOUT_S)


@contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL server (database `postgres`), gone when the block exits."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)")
    owner = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="cachegate-pg-"))
    data, port = folder / "data", spawn_port()
    if owner:
        shutil.chown(folder, owner)
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off"
    try:
        _run([str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"], owner)
        _run(
            [str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"], owner
        )
        try:
            yield f"postgresql://{USER}@127.0.0.1:{port}/postgres"
        finally:
            _run([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], owner)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new empty database on the server at `server_url`; its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())  # a name of our own making: no parameter for it
    return server_url.rsplit("/", 1)[0] + f"/{name}"
