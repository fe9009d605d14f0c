"""lockward: keeps PostgreSQL advisory lock ids honest across a codebase and its plugins.

The registry and plugin admission of the ``lockward`` command, for Python hosts: check the
registry when the host is imported, refuse a colliding plugin when it is loaded::

    import lockward

    registry = lockward.Registry.load("lockward.toml")  # RegistryError(.findings) if invalid
    lock = registry.lock("ADVISORY_LOCK_INVOICE_ROLLUP")  # or registry.lock(1_001_001)
    billing = registry.admit("plugins/billing/plugin.toml")
    shipping = registry.admit_ids("shipping", [4_200_001], loaded=[billing])  # PluginRefused

Periodic jobs lead in-process on the Rust worker's runtime (README, "Python workers"): one
leader per cycle, the job cancelled when the lock is lost::

    @lockward.periodic(registry, "ADVISORY_LOCK_INVOICE_ROLLUP", every=timedelta(minutes=1))
    async def rollup(cycle: lockward.Cycle) -> None:
        ...  # cycle.fencing_token, cycle.start, cycle.deadline

    await rollup.run()

The ``lockward`` command itself is installed beside this package (the wheel's scripts); see
:func:`find_lockward_bin`.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from lockward._errors import (
    DatabaseError,
    LockLost,
    PluginRefused,
    PoolerRefused,
    RegistryError,
    WorkerError,
)
from lockward._lockward import (
    AdmittedPlugin,
    CycleReport,
    Finding,
    Label,
    Lock,
    Registry,
    __version__,
    serve_metrics,
)
from lockward._worker import Cycle, Periodic, Worker, periodic

__all__ = [
    "AdmittedPlugin",
    "Cycle",
    "CycleReport",
    "DatabaseError",
    "Finding",
    "Label",
    "Lock",
    "LockLost",
    "Periodic",
    "PluginRefused",
    "PoolerRefused",
    "Registry",
    "RegistryError",
    "Worker",
    "WorkerError",
    "__version__",
    "find_lockward_bin",
    "periodic",
    "serve_metrics",
]


def find_lockward_bin() -> str:
    """The path of the ``lockward`` command this package installed.

    Looks in the scripts directory of the environment the package is installed in (a virtual
    environment, a ``--user`` install, the system's); raises FileNotFoundError when it is not
    there.
    """
    name = "lockward" + (sysconfig.get_config_var("EXE") or "")
    schemes = [sysconfig.get_default_scheme()]
    if sys.platform != "win32":
        schemes.append("posix_user")
    else:
        schemes.append("nt_user")
    candidates = [os.path.join(sysconfig.get_path("scripts", scheme), name) for scheme in schemes]
    # A wheel installed with --target puts its scripts in a bin/ beside the package directory.
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(__file__)), "bin", name))
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"the lockward command is not installed; looked at: {', '.join(candidates)}")
