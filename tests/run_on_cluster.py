"""The whole suite against a fresh 3-master Redis Cluster: `python tests/run_on_cluster.py [pytest args]`
(`make test-cluster`). Starts the cluster (redis-server processes on loopback, tests/deploy/processes.py),
runs pytest with CACHEGATE_TEST_REDIS set to it (tests/redis_target.py), tears the cluster down and exits
with pytest's status. Every test runs there: none is skipped for the cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(args: list[str]) -> int:
    sys.path.insert(0, str(REPO))  # run as a script: `tests` is a package of the checkout
    from tests.deploy.processes import redis_cluster
    from tests.redis_target import TARGET_ENV

    with tempfile.TemporaryDirectory(prefix="cachegate-cluster-") as logs, redis_cluster(Path(logs)) as url:
        print(f"{TARGET_ENV}={url}", flush=True)
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
        return subprocess.run(pytest, cwd=REPO, env={**os.environ, TARGET_ENV: url}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
