"""What leading a cycle costs from Python, printed in one run:

1. a led cycle whose job is a Python coroutine (``lockward.Worker``: try-lock, the job awaited on
   this asyncio loop through the bridge, unlock; session mode, no ledger);
2. the same cycle from Rust: the same worker, in the same process and runtime, with a no-op job of
   the Rust worker's own (no call into Python);
3. a bare ``SELECT 1`` round trip from psycopg (prepared), on a connection to the same server,
   at the same 5 ms cadence.

Each is the median over alternating rounds, so that all three see the same load; the hold time
of a led cycle runs from sending the try-lock to the unlock's answer (``CycleReport.held``).

    target/lockward-venv/bin/python python/bench/cycle.py [DATABASE_URL]

Measure with a release wheel (`pip install .`): the dev wheel scripts/test builds is an
unoptimised Rust build, about twice as slow on both sides.

Without a URL it starts a database of its own with the Rust test harness (the `testbed` example
of lockward-pg, which scripts/test builds).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import psycopg

import lockward

REPO = Path(__file__).resolve().parents[2]
EVERY = 0.005
ROUNDS = 6
PER_ROUND = 150


def until_next(every: float) -> None:
    now = time.time()
    time.sleep(every - now % every)


def select_one(url: str, samples: list[float]) -> None:
    with psycopg.connect(url, autocommit=True, prepare_threshold=0) as conn:
        conn.execute("SELECT 1", prepare=True).fetchone()
        for _ in range(PER_ROUND):
            until_next(EVERY)
            started = time.perf_counter()
            conn.execute("SELECT 1", prepare=True).fetchone()
            samples.append(time.perf_counter() - started)


async def no_op(cycle: lockward.Cycle) -> None:
    return None


async def led_cycles(registry: lockward.Registry, url: str, python: bool, samples: list[float]) -> None:
    held: list[float] = []

    def report(cycle: lockward.CycleReport) -> None:
        if cycle.outcome == "led" and cycle.held is not None:
            held.append(cycle.held)

    worker = lockward.Worker(
        registry,
        "ADVISORY_LOCK_INVOICE_ROLLUP",
        every=EVERY,
        database_url=url,
        hold_at_least=0,
        on_cycle=report,
    )
    if python:
        run = asyncio.ensure_future(worker.run(no_op))
    else:
        # The Rust worker's own no-op job: the same cycle, no call into Python.
        inner = worker._inner
        handle = inner.start(None, worker._report)
        loop = asyncio.get_running_loop()
        run = asyncio.ensure_future(loop.run_in_executor(None, handle.join))
    while len(held) < PER_ROUND:
        await asyncio.sleep(0.02)
    if python:
        worker.stop()
    else:
        handle.stop()
    await run
    samples.extend(held[:PER_ROUND])


def main(url: Optional[str]) -> None:
    bed = None
    if url is None:
        bed = subprocess.Popen(
            [str(REPO / "target/debug/examples/testbed"), "database"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert bed.stdout is not None
        url = json.loads(bed.stdout.readline())["url"]
    registry = lockward.Registry.load(REPO / "examples/harbor/lockward.toml")
    python: list[float] = []
    rust: list[float] = []
    baseline: list[float] = []
    try:
        for _ in range(ROUNDS):
            select_one(url, baseline)
            asyncio.run(led_cycles(registry, url, True, python))
            asyncio.run(led_cycles(registry, url, False, rust))
    finally:
        if bed is not None and bed.stdin is not None:
            bed.stdin.close()
            bed.wait()
    py, rs, base = (statistics.median(s) * 1000 for s in (python, rust, baseline))
    print(f"led cycle, a Python coroutine job (lockward.Worker), every 5 ms: median {py:.3f} ms")
    print(f"led cycle, the Rust worker's own no-op job, same process:      median {rs:.3f} ms")
    print(f"bare SELECT 1 from psycopg (prepared), same 5 ms cadence:      median {base:.3f} ms")
    print(
        f"ratio: {py / rs:.2f}x the same cycle from Rust, {py / base:.2f}x a SELECT 1 from psycopg "
        f"(a led cycle is two round trips, try-lock and unlock, and here one hop to asyncio and back)"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
