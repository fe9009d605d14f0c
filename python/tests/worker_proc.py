"""One host of a periodic task, for the tests that need several processes: it leads
``ADVISORY_LOCK_INVOICE_ROLLUP`` of the registry given, and its job records each run it makes as a
JSON line (its pid, the cycle, when it started and ended, by the job's own clock, and whether it
was cancelled and why). SIGTERM stops it as a shutdown does.

    python worker_proc.py REGISTRY DATABASE_URL LOG [--every S] [--work S] [--ledger] [--sync]
                          [--metrics PORT] [--host NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import threading
import time

import lockward


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("registry")
    parser.add_argument("database_url")
    parser.add_argument("log")
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--work", type=float, default=0.3)
    parser.add_argument("--ledger", action="store_true")
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("--metrics", type=int)
    parser.add_argument("--host")
    args = parser.parse_args()
    lock = threading.Lock()

    def record(entry: dict[str, object]) -> None:
        with lock, open(args.log, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    def entry(cycle: lockward.Cycle, started: float) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "cycle": cycle.start.timestamp(),
            "fencing_token": cycle.fencing_token,
            "started": started,
        }

    async def work(cycle: lockward.Cycle) -> None:
        started = time.time()
        record({**entry(cycle, started), "event": "start"})
        try:
            await asyncio.sleep(args.work)
        except asyncio.CancelledError:
            record({**entry(cycle, started), "event": "end", "ended": time.time(),
                    "cancelled": True, "reason": cycle.reason})
            raise
        record({**entry(cycle, started), "event": "end", "ended": time.time(), "cancelled": False})

    def blocking(cycle: lockward.Cycle) -> None:
        started = time.time()
        record({**entry(cycle, started), "event": "start"})
        lost = cycle.lost.wait(args.work)
        record({**entry(cycle, started), "event": "end", "ended": time.time(), "cancelled": lost,
                "reason": cycle.reason})

    if args.metrics is not None:
        lockward.serve_metrics(args.metrics, periods=[args.every])
    registry = lockward.Registry.load(args.registry)
    worker = lockward.Worker(
        registry,
        "ADVISORY_LOCK_INVOICE_ROLLUP",
        every=args.every,
        database_url=args.database_url,
        ledger=args.ledger,
        host=args.host,
    )

    async def run() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        print("ready", flush=True)
        await worker.run(blocking if args.sync else work)

    asyncio.run(run())


if __name__ == "__main__":
    main()
