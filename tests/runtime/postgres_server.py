"""A private PostgreSQL server for one test module: initdb in a temp dir, on a free loopback port, gone
afterwards (as tests/deploy/processes.py's redis_server). .ci/run installs postgresql."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.deploy.processes import free_port, spawned


def _bindir() -> Path:
    found = shutil.which("initdb") or max(glob.glob("/usr/lib/postgresql/*/bin/initdb"), default=None)
    assert found, "the PostgreSQL tests need postgresql's initdb and postgres (.ci/run installs them)"
    return Path(found).parent


def _as_server_user() -> list[str]:
    """PostgreSQL refuses to run as root: there, run it as the `postgres` user the package creates."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _answers(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with psycopg.connect(url, connect_timeout=1):
                return True
        except psycopg.OperationalError:
            return False

    return ready


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yields the connection URL of a fresh, empty PostgreSQL (trust auth, loopback only)."""
    bindir, prefix = _bindir(), _as_server_user()
    with tempfile.TemporaryDirectory(prefix="pgtest-") as tmp:
        root = Path(tmp)
        data = root / "data"
        if prefix:
            user = pwd.getpwnam("postgres")
            os.chown(root, user.pw_uid, user.pw_gid)
        user_name = "postgres" if prefix else pwd.getpwuid(os.geteuid()).pw_name
        subprocess.run(
            [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", user_name, "-A", "trust", "--no-sync"],
            check=True,
            capture_output=True,
        )
        port = free_port()
        argv = [*prefix, str(bindir / "postgres"), "-D", str(data), "-p", str(port)]
        argv += ["-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={root}", "-c", "fsync=off"]
        url = f"postgresql://{user_name}@127.0.0.1:{port}/postgres"
        with spawned(f"postgres-{port}", argv, root) as server:
            server.wait_until(_answers(url))
            yield url
