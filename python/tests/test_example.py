"""The example project's Python periodic task (examples/harbor/services/api/search_reindex.py),
run as an operator runs it, against a database of its own."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from test_worker import REPO, Testbed

EXAMPLE = REPO / "examples" / "harbor" / "services" / "api" / "search_reindex.py"


def test_the_harbor_search_reindex_leads_its_cycles_into_the_ledger_and_stops_on_sigterm() -> None:
    bed = Testbed("database")
    try:
        env = {**os.environ, "DATABASE_URL": bed.info["url"], "HARBOR_REINDEX_EVERY_SECONDS": "0.5"}
        process = subprocess.Popen(
            [sys.executable, str(EXAMPLE)], env=env, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 30
        rows = 0
        while rows < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
            with psycopg.connect(bed.info["url"], autocommit=True) as conn:
                exists = conn.execute("SELECT to_regclass('lockward_ledger') IS NOT NULL").fetchone()
                if exists and exists[0]:
                    count = conn.execute(
                        "SELECT count(*) FROM lockward_ledger WHERE lock_key = '1001006' AND outcome = 'done'"
                    ).fetchone()
                    rows = count[0] if count else 0
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        bed.close()
    assert process.returncode == 0, stderr
    assert rows >= 3, stderr
    assert stderr.count("harbor.search_reindex: reindexed for the cycle of") >= 3, stderr
    assert "worker stopped" in stderr


def test_the_example_passes_mypy_strict() -> None:
    mypy = shutil.which("mypy", path=os.path.dirname(sys.executable))
    if mypy is None:
        pytest.fail("mypy is not installed in the test environment (scripts/test installs it)")
    result = subprocess.run(
        [mypy, "--strict", "--no-incremental", str(EXAMPLE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
