"""Periodic jobs led from Python: the Rust worker's runtime, driven from asyncio.

The worker itself (taking the lock at each boundary, watching its session, the ledger, the
pooler proof, collisions, metrics) is ``lockward_pg::Worker``, running on threads of its own.
What lives here is the Python side of each cycle: the job's task on the caller's loop (or its
thread, for a blocking job), cancelled when the Rust worker says the lock is lost.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import functools
import inspect
import logging
import os
import threading
from typing import Any, Awaitable, Callable, Optional, Union

from lockward._errors import LockLost
from lockward._lockward import CycleReport, Registry, _Cycle, _Worker

#: A duration: a :class:`datetime.timedelta`, or a number of seconds.
Seconds = Union[datetime.timedelta, float, int]
#: A job: ``async def job(cycle)``, or a plain ``def job(cycle)`` run in a thread.
Job = Callable[["Cycle"], Union[Awaitable[None], None]]

_log = logging.getLogger("lockward.worker")


def _seconds(value: Seconds, what: str) -> float:
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} is a timedelta or a number of seconds, not {type(value).__name__}")
    return float(value)


def _utc(epoch: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)


class Cycle:
    """One cycle this process leads, as its job sees it.

    An ``async`` job is cancelled when the lock is lost (``asyncio.CancelledError`` at its next
    ``await``, with :attr:`reason` set). A blocking job runs in a thread, which Python cannot
    stop: it watches :attr:`lost` or calls :meth:`check` at safe points, and must return within
    the worker's ``grace`` (cooperative cancellation).
    """

    __slots__ = ("_deadline", "_fencing_token", "_inner", "_lost", "_reason", "_start")

    def __init__(self, inner: _Cycle, every: float) -> None:
        self._inner = inner
        self._reason: Optional[str] = None
        self._start = _utc(inner.start)
        self._deadline = self._start + datetime.timedelta(seconds=every)
        self._fencing_token: Optional[int] = inner.fencing_token
        self._lost = threading.Event()

    @property
    def start(self) -> datetime.datetime:
        """The cycle's wall-clock boundary (UTC), the same on every host."""
        return self._start

    @property
    def deadline(self) -> datetime.datetime:
        """The next boundary: the job should be done by then."""
        return self._deadline

    @property
    def fencing_token(self) -> Optional[int]:
        """The ledger's fencing token for this acquisition (None without ``ledger=True``): it
        rises at every acquisition, so a store can refuse writes carrying an older one."""
        return self._fencing_token

    @property
    def lost(self) -> threading.Event:
        """Set when the lock is lost or the worker shuts down: a blocking job waits on it or
        checks it (``cycle.lost.is_set()``)."""
        return self._lost

    @property
    def reason(self) -> Optional[str]:
        """Why the cycle was cancelled (the lock lost, and how; or the worker shutting down),
        once it was; else None."""
        return self._reason

    def check(self) -> None:
        """Raises :class:`lockward.LockLost` once the cycle is cancelled: a blocking job calls it
        where it can stop safely."""
        if self.lost.is_set():
            raise LockLost(self._reason or "the cycle was cancelled")

    def _cancel(self, reason: str) -> None:
        self._reason = reason
        self._lost.set()

    def __repr__(self) -> str:
        state = f", lost={self._reason!r}" if self.lost.is_set() else ""
        return f"Cycle(start={self.start.isoformat()}, fencing_token={self.fencing_token}{state})"


def _in_thread(job: Job, cycle: Cycle) -> None:
    """A blocking job, in an executor thread."""
    result = job(cycle)
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if close is not None:
            close()  # never awaited: no "coroutine was never awaited" warning on top
        raise TypeError(
            "the job returned an awaitable, so it ran in a thread as a blocking job: make it an "
            "`async def` function for it to run on the loop"
        )


async def _lead(job: Job, every: float, inner: _Cycle) -> None:
    """Runs ``job`` for one cycle until it returns or the Rust worker cancels the cycle."""
    cycle = Cycle(inner, every)
    loop = asyncio.get_running_loop()
    work: asyncio.Future[Any]
    if inspect.iscoroutinefunction(job) or inspect.iscoroutinefunction(
        getattr(job, "__call__", None)
    ):
        work = asyncio.ensure_future(job(cycle))  # type: ignore[arg-type]
    else:
        work = loop.run_in_executor(None, contextvars.copy_context().run, _in_thread, job, cycle)
    cancelled = asyncio.ensure_future(inner.cancelled_wait())
    try:
        await asyncio.wait({work, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        cancelled.cancel()
        raise
    if work.done():
        cancelled.cancel()
        if work.cancelled():
            raise asyncio.CancelledError("the job cancelled itself")
        error = work.exception()
        if error is not None:
            _log.error("the job failed in the cycle of %s", cycle.start.isoformat(), exc_info=error)
            raise error
        return
    reason = cancelled.result()
    cycle._cancel(reason)
    work.cancel(reason)
    try:
        await work
    except (asyncio.CancelledError, Exception):
        # Cancelled as asked, or failed on its way out: the cycle is lost either way.
        pass


class Worker:
    """Leads a periodic job on one registered lock, on whichever process takes it each cycle.

    Built from a loaded :class:`lockward.Registry` and a lock's constant name or id; refused at
    construction (``KeyError``) when the registry does not know the lock, and (``ValueError``)
    when no worker may hold it or a setting is out of range, with the Rust worker's message::

        worker = lockward.Worker(registry, "ADVISORY_LOCK_INVOICE_ROLLUP", every=timedelta(minutes=1))
        await worker.run(rollup)   # async def rollup(cycle: lockward.Cycle) -> None

    ``database_url`` is a URL or a libpq DSN (default: the ``DATABASE_URL`` environment
    variable). ``ledger=True`` records each cycle (``lockward_ledger``), hands the job a fencing
    token and runs each cycle at most once across hosts. ``transaction=True`` takes the lock inside
    a transaction the worker commits after the job (works behind transaction-pooling poolers; the
    job's own statements still use its own connections). ``pooler="session"`` says a session
    pooler or a proxy is in between. ``member`` is the member of a family lock. ``grace`` is how
    long a cancelled job has to return (default 4 s), ``hold_at_least`` how long past the
    boundary the lock is kept, ``host`` the host name the worker reports. ``on_cycle`` is called on
    the loop with each cycle's :class:`lockward.CycleReport`.
    """

    def __init__(
        self,
        registry: Registry,
        lock: Union[str, int],
        *,
        every: Seconds,
        database_url: Optional[str] = None,
        ledger: bool = False,
        transaction: bool = False,
        pooler: str = "none",
        member: Optional[int] = None,
        grace: Optional[Seconds] = None,
        hold_at_least: Optional[Seconds] = None,
        host: Optional[str] = None,
        on_cycle: Optional[Callable[[CycleReport], None]] = None,
    ) -> None:
        url = database_url if database_url is not None else os.environ.get("DATABASE_URL")
        if not url:
            raise ValueError(
                "no database: pass database_url= (a URL or a libpq DSN) or set DATABASE_URL"
            )
        self._every = _seconds(every, "every")
        self._inner = _Worker(
            registry,
            lock,
            every=self._every,
            database_url=url,
            ledger=ledger,
            transaction=transaction,
            pooler=pooler,
            member=member,
            grace=None if grace is None else _seconds(grace, "grace"),
            hold_at_least=None if hold_at_least is None else _seconds(hold_at_least, "hold_at_least"),
            host=host,
        )
        #: Called on the loop with each cycle's report.
        self.on_cycle = on_cycle

    @property
    def application_name(self) -> str:
        """The ``application_name`` the lock session sets (``lockward:PROJECT:CONSTANT PID@HOST``),
        what ``lockward live`` shows for the holder."""
        return self._inner.application_name

    @property
    def key(self) -> Union[int, tuple[int, int]]:
        """The advisory key the worker takes: an int, or the pair ``(family, member)``."""
        return self._inner.key

    async def run(self, job: Job) -> None:
        """Leads ``job`` each cycle this process wins, until :meth:`stop` (then it returns) or
        the task running it is cancelled (then the job is cancelled and awaited, the lock released,
        and ``CancelledError`` raised, as asyncio expects).

        Raises :class:`lockward.PoolerRefused` (before any job runs) when session mode cannot be
        proven to hold a session lock on this path, and :class:`lockward.DatabaseError` at once
        when the database turns the worker away for good (no such database, SQLSTATE 3D000; the
        role or its authentication, class 28). Any other database failure is retried at the
        following boundaries (reported ``unavailable``). A job's exception is logged and counted,
        and the schedule goes on.
        """
        lead = functools.partial(_lead, job, self._every)
        run = self._inner.start(lead, self._report if self.on_cycle is not None else None)
        loop = asyncio.get_running_loop()
        try:
            await asyncio.shield(loop.run_in_executor(None, run.join))
        except asyncio.CancelledError:
            run.stop()
            await loop.run_in_executor(None, run.join)
            raise

    def stop(self) -> None:
        """Ends a run as a shutdown does: the job is cancelled and awaited, the lock released, and
        :meth:`run` returns. Safe to call from any thread; does nothing when not running."""
        self._inner.stop()

    def _report(self, report: CycleReport) -> None:
        if self.on_cycle is None:
            return
        try:
            self.on_cycle(report)
        except Exception:
            _log.exception("on_cycle raised for %r", report)

    def __repr__(self) -> str:
        return f"Worker({self.application_name!r}, every={self._every}s)"


class Periodic:
    """A periodic job made by :func:`lockward.periodic`: the function, with the worker that leads
    it. Calling it calls the function; :meth:`run` leads it."""

    def __init__(self, function: Job, worker_for: Callable[[], Worker]) -> None:
        functools.update_wrapper(self, function)
        self._function = function
        self._worker_for = worker_for
        self._worker: Optional[Worker] = None

    @property
    def worker(self) -> Worker:
        """The worker (built at the first use, so ``DATABASE_URL`` may be set after the import)."""
        if self._worker is None:
            self._worker = self._worker_for()
        return self._worker

    def __call__(self, cycle: Cycle) -> Union[Awaitable[None], None]:
        return self._function(cycle)

    async def run(self) -> None:
        """Leads the job: :meth:`lockward.Worker.run`."""
        await self.worker.run(self._function)

    def stop(self) -> None:
        """Ends the run: :meth:`lockward.Worker.stop`."""
        if self._worker is not None:
            self._worker.stop()


def periodic(
    registry: Registry,
    lock: Union[str, int],
    *,
    every: Seconds,
    **settings: Any,
) -> Callable[[Job], Periodic]:
    """The common case of :class:`lockward.Worker`, as a decorator::

        @lockward.periodic(registry, "ADVISORY_LOCK_INVOICE_ROLLUP", every=timedelta(minutes=1))
        async def rollup(cycle: lockward.Cycle) -> None:
            ...

        await rollup.run()

    The lock is looked up at once (``KeyError`` at import when the registry does not know it);
    the worker, with the other settings of :class:`lockward.Worker`, is built when first used.
    """
    registry.lock(lock)

    def decorate(function: Job) -> Periodic:
        return Periodic(function, lambda: Worker(registry, lock, every=every, **settings))

    return decorate
