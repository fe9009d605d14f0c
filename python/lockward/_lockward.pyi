"""Type stubs of the extension module; everything here is re-exported by ``lockward``."""

from os import PathLike
from typing import Any, Awaitable, Callable, Sequence, final

__version__: str

@final
class Label:
    """A secondary location that explains a finding ("first registered here")."""

    @property
    def path(self) -> str:
        """The file, relative to the registry's directory, with ``/`` separators."""
    @property
    def line(self) -> int | None:
        """The 1-based line, or None for a whole file."""
    @property
    def column(self) -> int | None:
        """The 1-based column in characters, or None for a whole file."""
    @property
    def message(self) -> str:
        """What this location has to do with the finding."""

@final
class Finding:
    """One problem found by a check: the shape every lockward check reports."""

    @property
    def code(self) -> str:
        """The stable kebab-case code (``duplicate-id``, ``plugin-collides-with-core``)."""
    @property
    def severity(self) -> str:
        """``error``, ``warning`` or ``note``."""
    @property
    def message(self) -> str:
        """What is wrong, in one sentence."""
    @property
    def path(self) -> str:
        """The file, relative to the registry's directory, with ``/`` separators."""
    @property
    def line(self) -> int | None:
        """The 1-based line, or None for a finding about a whole file."""
    @property
    def column(self) -> int | None:
        """The 1-based column in characters, or None for a finding about a whole file."""
    @property
    def help(self) -> str | None:
        """What to do about it, when there is advice."""
    @property
    def source_line(self) -> str | None:
        """The text of the line the finding points at, when the file could be read."""
    @property
    def labels(self) -> list[Label]:
        """Other locations that explain this one."""
    def to_dict(self) -> dict[str, Any]:
        """The finding as ``lockward check --format json`` and ``lockward plugins --format json``
        print it."""

@final
class Lock:
    """One registered id, as ``lockward list --format json`` shows it."""

    @property
    def id(self) -> int:
        """The id's value."""
    @property
    def literal(self) -> str:
        """The id as written in the registry (``1_001_001``, ``0x6E697374``)."""
    @property
    def kind(self) -> str:
        """``constant``, ``external``, ``named`` (a lock taken by name), ``handover``, ``retired`` or ``reserved``."""
    @property
    def constant(self) -> str | None:
        """The constant's name, for constants and externals (None for a literal at a call site)."""
    @property
    def owner(self) -> str | None:
        """``core``, ``plugin:NAME``, or None for retired and reserved ids."""
    @property
    def worker(self) -> str | None:
        """The background worker that holds it."""
    @property
    def key(self) -> str:
        """``exact`` (one bigint key) or ``family`` (the first int4 of a pair)."""
    @property
    def defined_in(self) -> list[str]:
        """The files that define the id: the constants file for a constant, the listed files for
        an external, none otherwise."""
    @property
    def reason(self) -> str | None:
        """Why a retired id was retired, or what a reserved id is reserved for."""

@final
class AdmittedPlugin:
    """A plugin that passed admission; pass it in ``loaded=`` when admitting the next one."""

    @property
    def name(self) -> str:
        """The plugin's name."""
    @property
    def ids(self) -> list[int]:
        """The ids it declared, in the order declared."""
    @property
    def manifest(self) -> str:
        """Where its ids were declared: the manifest's path (relative to the registry's directory
        when it is under it), or the ``source`` given to ``admit_ids``."""

@final
class Registry:
    """A registry that passed every rule of ``lockward.toml``."""

    @staticmethod
    def load(path: str | PathLike[str]) -> Registry:
        """Reads and validates the registry at ``path``.

        Raises :class:`lockward.RegistryError` carrying every finding when the file breaks a
        rule, and the :class:`OSError` ``open`` would raise when it cannot be read
        (:class:`FileNotFoundError` for a missing one).
        """
    @property
    def project(self) -> str:
        """The project's name (``[project] name``)."""
    @property
    def path(self) -> str:
        """The registry file, as an absolute path."""
    @property
    def next_free_id(self) -> int | None:
        """One more than the highest id the registry file records inside core's block, or None
        when the block is used up. ``lockward list`` prints the figure that also counts the plugin
        manifests' ids and other git branches' reservations."""
    @property
    def core_constants(self) -> int:
        """How many ``constant`` entries the registry has."""
    @property
    def warnings(self) -> list[Finding]:
        """The findings that do not make the registry invalid (a core constant outside the block)."""
    def lock(self, key: str | int) -> Lock:
        """The entry for a constant name or an id; raises KeyError when there is none."""
    def locks(self) -> list[Lock]:
        """Every entry, sorted by numeric id."""
    def admit(
        self, path: str | PathLike[str], loaded: Sequence[AdmittedPlugin] = ()
    ) -> AdmittedPlugin:
        """Admits the plugin whose manifest is at ``path``, held to the registry and to the
        plugins in ``loaded``.

        The manifest is TOML, or JSON when its name ends in ``.json``; its table is the
        registry's ``[plugins] table``. Raises :class:`lockward.PluginRefused` with every reason
        when the plugin is refused.
        """
    def admit_ids(
        self,
        name: str,
        ids: Sequence[int],
        loaded: Sequence[AdmittedPlugin] = (),
        source: str | None = None,
    ) -> AdmittedPlugin:
        """Admits a plugin from its name and ids, as a host that read the plugin's manifest itself
        holds them; ``source`` names where the host read them, in findings and messages.

        Raises :class:`lockward.PluginRefused` with every reason when the plugin is refused.
        """

@final
class CycleReport:
    """What one cycle came to, as this worker saw it: given to ``on_cycle``."""

    @property
    def outcome(self) -> str:
        """``led``, ``failed``, ``lost``, ``shut-down``, ``skipped``, ``collision``,
        ``already-run``, ``led-by-another-project`` or ``unavailable``."""
    @property
    def start(self) -> float:
        """The cycle's boundary, in seconds since the epoch."""
    @property
    def fencing_token(self) -> int | None:
        """The fencing token, when this worker led with a ledger."""
    @property
    def held(self) -> float | None:
        """How long this worker held the lock, in seconds, when it led."""
    @property
    def error(self) -> str | None:
        """The job's error (``failed``), why the lock was lost (``lost``), or the connection
        error (``unavailable``)."""
    @property
    def holder(self) -> str | None:
        """The ``application_name`` of the session that held the lock (``skipped``,
        ``collision``, ``led-by-another-project``)."""
    @property
    def project(self) -> str | None:
        """The other lockward project (``led-by-another-project``)."""

def serve_metrics(port: int, host: str = "127.0.0.1", periods: Sequence[float] = ()) -> None:
    """Serves this process's worker metrics (``lockward_worker_*``) for Prometheus at
    ``http://HOST:PORT/metrics``, as ``lockward run --metrics`` does, the hold-time histogram's
    buckets fitted to ``periods`` (seconds: the periods of the workers the process runs). Call
    it once."""

@final
class _Cycle:
    """One cycle this process leads, as the Rust worker hands it over (see ``lockward.Cycle``)."""

    @property
    def start(self) -> float:
        """The cycle's boundary, in seconds since the epoch."""
    @property
    def fencing_token(self) -> int | None:
        """The ledger's fencing token (None without a ledger)."""
    @property
    def cancelled(self) -> bool:
        """Whether the cycle was cancelled."""
    @property
    def reason(self) -> str | None:
        """Why it was cancelled, once it was."""
    def cancelled_wait(self) -> Awaitable[str]:
        """Resolves with the reason when the cycle is cancelled."""

@final
class _Run:
    """A worker's run in progress."""

    def stop(self) -> None:
        """Shuts the run down: the job is cancelled and awaited, the lock released."""
    def join(self) -> None:
        """Blocks (without the GIL) until the run has ended; raises ``PoolerRefused`` or
        ``DatabaseError`` when it stopped on an error."""

@final
class _Worker:
    """The Rust side of ``lockward.Worker``: the validated settings each run builds its worker
    from."""

    def __init__(
        self,
        registry: Registry,
        lock: str | int,
        *,
        every: float,
        database_url: str,
        ledger: bool,
        transaction: bool,
        pooler: str,
        member: int | None,
        grace: float | None,
        hold_at_least: float | None,
        host: str | None,
    ) -> None: ...
    @property
    def application_name(self) -> str:
        """The ``application_name`` the lock session sets."""
    @property
    def key(self) -> int | tuple[int, int]:
        """The advisory key: an int, or the pair ``(family, member)``."""
    def start(
        self,
        lead: Callable[[_Cycle], Awaitable[None]] | None,
        on_cycle: Callable[[CycleReport], None] | None,
    ) -> _Run:
        """Starts the worker on the runtime's threads; ``lead(cycle)`` runs each led cycle's job on
        the running loop (None: a no-op job of the Rust worker's own, for the benchmark)."""
    def stop(self) -> None:
        """Ends the run in progress as a shutdown does."""
