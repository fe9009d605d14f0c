"""harbor's search reindex: a periodic task of the API service, led by one API process per cycle.

Every API process runs it; lockward elects the one that leads each cycle on the registered lock
`ADVISORY_LOCK_SEARCH_REINDEX`, records the cycle in the ledger, and cancels the task (at its
next `await`) when that process loses the lock. Run it with `DATABASE_URL` set:

    python services/api/search_reindex.py
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from datetime import timedelta
from pathlib import Path

import lockward

REGISTRY = lockward.Registry.load(Path(__file__).resolve().parents[2] / "lockward.toml")
# Five minutes, unless the operator says otherwise.
EVERY = timedelta(seconds=float(os.environ.get("HARBOR_REINDEX_EVERY_SECONDS", "300")))

log = logging.getLogger("harbor.search_reindex")


@lockward.periodic(REGISTRY, "ADVISORY_LOCK_SEARCH_REINDEX", every=EVERY, ledger=True)
async def reindex(cycle: lockward.Cycle) -> None:
    """Rebuilds the search index in batches; the fencing token goes with each write, so the index
    refuses a batch from a leader that has since lost the lock."""
    for batch in range(3):
        await write_batch(batch, cycle.fencing_token)
    log.info("reindexed for the cycle of %s (fencing token %s)", cycle.start.isoformat(), cycle.fencing_token)


async def write_batch(batch: int, fencing_token: int | None) -> None:
    """Stands in for a batch written to the search index."""
    await asyncio.sleep(0.01)


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    # SIGTERM (a deploy) and Ctrl-C stop it: the running cycle's task is cancelled and awaited,
    # and the lock released, before the process exits.
    for stop in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(stop, reindex.stop)
    await reindex.run()


if __name__ == "__main__":
    asyncio.run(main())
