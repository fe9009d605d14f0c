"""The exceptions lockward raises; the extension module instantiates them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from lockward._lockward import Finding


class RegistryError(Exception):
    """A registry that cannot be read or breaks a rule.

    ``str()`` is the summary and then every finding, one ``path:line:col: severity[code]: message``
    line each (with the locations that explain it and the help indented below); ``findings`` holds
    them as :class:`lockward.Finding` objects, errors and warnings alike.
    """

    findings: list[Finding]

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class PluginRefused(RegistryError):
    """A plugin that admission refuses (the README's "Plugins" section): its ids collide with core's, are retired, were
    handed over to another plugin, are declared by a plugin loaded before, or lie in core's block
    without a handover; or its manifest is unreadable or malformed.

    ``str()`` names both sides of each collision and where each is declared; ``findings`` are the
    findings ``lockward plugins --format json`` prints for the same manifest.
    """


class WorkerError(Exception):
    """A worker that cannot lead: the base of :class:`PoolerRefused`, :class:`DatabaseError` and
    :class:`LockLost`."""


class PoolerRefused(WorkerError):
    """Session mode on a path that cannot hold a session lock (README, "Poolers").

    A session-level advisory lock belongs to one server backend; through transaction pooling it
    lands on a server connection other clients share. The worker proves its path at each session
    and refuses before any job runs; ``Worker.run`` raises this then. ``reason`` is what the
    worker found (the Rust worker's message). Use ``transaction=True`` behind such a pooler.
    """

    reason: str

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DatabaseError(WorkerError):
    """The database turned the worker away for good: ``Worker.run`` raises this before the first
    cycle when its one connection fails for the database's name (no such database, SQLSTATE
    ``3D000``) or the role and its authentication (class ``28``). A server that is down or
    unreachable is retried instead. ``sqlstate`` is the server's code, or None when it sent none.
    """

    sqlstate: str | None

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class LockLost(WorkerError):
    """The cycle's lock was lost (its session closed, was terminated or went silent) or the worker
    is shutting down: raised by :meth:`lockward.Cycle.check` in a blocking job, so that it stops at
    a safe point. ``reason`` says which.
    """

    reason: str

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
