"""Python workers lead in-process on the Rust worker (docs/python.md, "Python workers"), against real
PostgreSQL, pgbouncer and a network partition from the Rust test harness (the `testbed` example
of lockward-pg, which scripts/test builds)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

import psycopg
import pytest

import lockward

REPO = Path(__file__).resolve().parents[2]
HARBOR = REPO / "examples" / "harbor" / "lockward.toml"
ROLLUP = "ADVISORY_LOCK_INVOICE_ROLLUP"
WORKER_PROC = Path(__file__).with_name("worker_proc.py")
REQUIRED = bool(os.environ.get("LOCKWARD_REQUIRE_ALL_TESTS") or os.environ.get("CI"))


def skip_or_fail(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"{why} (LOCKWARD_REQUIRE_ALL_TESTS or CI is set, so this is no skip)")
    pytest.skip(why)


class Testbed:
    """A rig of the Rust test harness: started with its words, its JSON description read, kept
    up until closed."""

    __test__ = False  # not a test class, for pytest

    def __init__(self, *words: str) -> None:
        binary = Path(os.environ.get("LOCKWARD_TESTBED", REPO / "target/debug/examples/testbed"))
        if not binary.is_file():
            skip_or_fail(
                f"{binary} is not built (cargo build -p lockward-pg --features testing --example testbed)"
            )
        self.process = subprocess.Popen(
            [str(binary), *words], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            pytest.fail(f"testbed {' '.join(words)} exited with {self.process.returncode}")
        self.info: dict[str, Any] = json.loads(line)
        if "skip" in self.info:
            self.close()
            skip_or_fail(self.info["skip"])

    def say(self, command: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        assert json.loads(self.process.stdout.readline()) == "ok"

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def database() -> Iterator[str]:
    """The URL of a database of this test's own."""
    bed = Testbed("database")
    yield bed.info["url"]
    bed.close()


@pytest.fixture
def registry() -> lockward.Registry:
    return lockward.Registry.load(HARBOR)


def holder_pids(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchall()
    return [row[0] for row in rows]


def terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def wait_for(what: str, condition: Callable[[], bool], limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {limit} s waiting for {what}")
        await asyncio.sleep(0.05)


async def terminate_the_holder_once_started(database: str, events: dict[str, Any]) -> None:
    """Once the job has said it started and its lock is held, terminates the lock's session
    (`pg_terminate_backend`), recording when in ``events["terminated"]``."""
    await wait_for("the job to hold the lock", lambda: "started" in events and holder_pids(database) != [])
    (pid,) = holder_pids(database)
    events["terminated"] = time.time()
    terminate(database, pid)


def runs(log: Path) -> list[dict[str, Any]]:
    """The finished runs the hosts' jobs recorded (one entry per run, at its end)."""
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [line for line in lines if line["event"] == "end"]


def started(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [line for line in lines if line["event"] == "start"]


class Host:
    """A process leading the rollup with worker_proc.py."""

    def __init__(self, url: str, log: Path, *extra: str, prefix: tuple[str, ...] = ()) -> None:
        self.process = subprocess.Popen(
            [*prefix, sys.executable, str(WORKER_PROC), str(HARBOR), url, str(log), *extra],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        assert self.process.wait(timeout=30) == 0


# --- construction ---------------------------------------------------------------------------


def test_a_worker_is_refused_at_construction_for_a_lock_the_registry_does_not_know(
    registry: lockward.Registry,
) -> None:
    with pytest.raises(KeyError, match="no lock named `ADVISORY_LOCK_NOPE`"):
        lockward.Worker(registry, "ADVISORY_LOCK_NOPE", every=60, database_url="postgres://x@h/db")
    with pytest.raises(KeyError, match="no lock with id 4242"):
        lockward.Worker(registry, 4242, every=60, database_url="postgres://x@h/db")
    with pytest.raises(KeyError, match="ADVISORY_LOCK_NOPE"):
        lockward.periodic(registry, "ADVISORY_LOCK_NOPE", every=60)


def test_a_retired_lock_and_settings_out_of_range_are_refused_with_the_rust_workers_message(
    registry: lockward.Registry,
) -> None:
    url = "postgres://x@h/db"
    with pytest.raises(ValueError, match="lock 1_001_003 is retired"):
        lockward.Worker(registry, 1_001_003, every=60, database_url=url)
    with pytest.raises(ValueError, match="a cancel grace of 10s does not fit"):
        lockward.Worker(registry, ROLLUP, every=60, database_url=url, grace=timedelta(seconds=10))
    with pytest.raises(ValueError, match="every must be a finite number"):
        lockward.Worker(registry, ROLLUP, every=-1, database_url=url)
    with pytest.raises(ValueError, match="pooler must be"):
        lockward.Worker(registry, ROLLUP, every=60, database_url=url, pooler="transaction")
    with pytest.raises(TypeError, match="every is a timedelta or a number of seconds"):
        lockward.Worker(registry, ROLLUP, every="60", database_url=url)  # type: ignore[arg-type]


def test_the_database_comes_from_database_url_when_not_given(
    registry: lockward.Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with pytest.raises(ValueError, match="no database"):
        lockward.Worker(registry, ROLLUP, every=60)
    monkeypatch.setenv("DATABASE_URL", "host=127.0.0.1 user=postgres dbname=postgres")
    worker = lockward.Worker(registry, ROLLUP, every=60)
    assert worker.key == 1_001_001
    assert worker.application_name.startswith("lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP ")


# --- one process ------------------------------------------------------------------------------


def test_a_worker_leads_each_cycle_with_a_rising_fencing_token_and_reports_it(
    registry: lockward.Registry, database: str
) -> None:
    reports: list[lockward.CycleReport] = []
    cycles: list[lockward.Cycle] = []

    async def job(cycle: lockward.Cycle) -> None:
        cycles.append(cycle)
        await asyncio.sleep(0.05)

    worker = lockward.Worker(
        registry, ROLLUP, every=0.5, database_url=database, ledger=True, on_cycle=reports.append
    )

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(job))
        await wait_for("three led cycles", lambda: len([r for r in reports if r.outcome == "led"]) >= 3)
        worker.stop()
        await run

    asyncio.run(main())
    tokens = [cycle.fencing_token for cycle in cycles]
    assert all(isinstance(token, int) for token in tokens) and tokens == sorted(set(tokens)), tokens
    first = cycles[0]
    assert first.start.tzinfo is not None and first.deadline - first.start == timedelta(seconds=0.5)
    led = [r for r in reports if r.outcome == "led"]
    assert [r.fencing_token for r in led[:3]] == tokens[:3]
    assert all(r.held is not None and r.held >= 0.05 for r in led)
    assert holder_pids(database) == [], "the lock is released when run returns"


def test_a_failing_job_is_reported_failed_with_its_error_and_the_schedule_goes_on(
    registry: lockward.Registry, database: str, caplog: pytest.LogCaptureFixture
) -> None:
    reports: list[lockward.CycleReport] = []
    calls = 0

    async def job(cycle: lockward.Cycle) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ValueError("the feed is empty")

    worker = lockward.Worker(
        registry, ROLLUP, every=0.3, database_url=database, ledger=True, on_cycle=reports.append
    )

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(job))
        await wait_for("a led cycle after the failure", lambda: any(r.outcome == "led" for r in reports))
        worker.stop()
        await run

    with caplog.at_level(logging.ERROR):
        asyncio.run(main())
    failed = [r for r in reports if r.outcome == "failed"]
    assert failed and failed[0].error == "ValueError: the feed is empty", reports
    assert any("the feed is empty" in str(record.exc_info) for record in caplog.records)


def test_a_worker_runs_again_after_a_run_ends_and_refuses_two_runs_at_once(
    registry: lockward.Registry, database: str
) -> None:
    reports: list[lockward.CycleReport] = []
    worker = lockward.Worker(registry, ROLLUP, every=0.3, database_url=database, on_cycle=reports.append)

    async def job(cycle: lockward.Cycle) -> None:
        await asyncio.sleep(0.01)

    async def lead_until(count: int) -> None:
        run = asyncio.ensure_future(worker.run(job))
        await wait_for(f"{count} led cycles", lambda: len([r for r in reports if r.outcome == "led"]) >= count)
        with pytest.raises(RuntimeError, match="running already"):
            await worker.run(job)
        worker.stop()
        await run

    asyncio.run(lead_until(1))
    asyncio.run(lead_until(2))


def test_a_job_that_is_no_coroutine_function_but_returns_an_awaitable_fails_with_advice(
    registry: lockward.Registry, database: str
) -> None:
    reports: list[lockward.CycleReport] = []
    worker = lockward.Worker(registry, ROLLUP, every=0.3, database_url=database, on_cycle=reports.append)

    async def work(cycle: lockward.Cycle) -> None:
        pass

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(lambda cycle: work(cycle)))
        await wait_for("a failed cycle", lambda: any(r.outcome == "failed" for r in reports))
        worker.stop()
        await run

    asyncio.run(main())
    failed = next(r for r in reports if r.outcome == "failed")
    assert failed.error is not None and "make it an `async def` function" in failed.error


def test_cancelling_the_task_running_the_worker_cancels_the_job_releases_the_lock_and_raises(
    registry: lockward.Registry, database: str
) -> None:
    seen: list[str | None] = []

    async def job(cycle: lockward.Cycle) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append(cycle.reason)
            raise

    worker = lockward.Worker(registry, ROLLUP, every=1, database_url=database)

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(job))
        await wait_for("the job to hold the lock", lambda: holder_pids(database) != [])
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    assert seen == ["the worker is shutting down"]
    assert holder_pids(database) == []


def test_terminating_the_lock_session_cancels_the_coroutine_within_a_second_with_the_reason(
    registry: lockward.Registry, database: str
) -> None:
    events: dict[str, Any] = {}

    async def job(cycle: lockward.Cycle) -> None:
        events.setdefault("started", time.time())
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError as error:
            events["cancelled"] = time.time()
            events["reason"] = cycle.reason
            events["message"] = str(error)
            raise

    reports: list[lockward.CycleReport] = []
    worker = lockward.Worker(registry, ROLLUP, every=1, database_url=database, on_cycle=reports.append)

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(job))
        await terminate_the_holder_once_started(database, events)
        await wait_for("the job to be cancelled", lambda: "cancelled" in events, limit=5)
        await wait_for("the lost cycle's report", lambda: any(r.outcome == "lost" for r in reports), limit=5)
        worker.stop()
        await run

    asyncio.run(main())
    reaction = events["cancelled"] - events["terminated"]
    assert reaction < 1.0, f"cancelled {reaction:.3f} s after pg_terminate_backend"
    assert events["reason"].startswith("the lock was lost: "), events
    assert events["message"] == events["reason"]


def test_a_blocking_job_in_a_thread_sees_cycle_lost_and_check_raises_lock_lost(
    registry: lockward.Registry, database: str
) -> None:
    events: dict[str, Any] = {}

    def job(cycle: lockward.Cycle) -> None:
        events["started"] = time.time()
        while not cycle.lost.wait(0.02):
            pass
        events["lost"] = time.time()
        try:
            cycle.check()
        except lockward.LockLost as error:
            events["raised"] = error.reason

    worker = lockward.Worker(registry, ROLLUP, every=1, database_url=database)

    async def main() -> None:
        run = asyncio.ensure_future(worker.run(job))
        await terminate_the_holder_once_started(database, events)
        await wait_for("the thread to see the loss", lambda: "raised" in events, limit=5)
        worker.stop()
        await run

    asyncio.run(main())
    assert events["lost"] - events["terminated"] < 1.0
    assert events["raised"].startswith("the lock was lost: ")


# --- several processes --------------------------------------------------------------------------


def overlaps(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The pairs of runs of different hosts whose intervals, as the jobs recorded them, overlap."""
    ordered = sorted(entries, key=lambda e: e["started"])
    return [
        (a, b)
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
        if a["pid"] != b["pid"] and b["started"] < a["ended"]
    ]


def test_two_processes_with_the_same_periodic_task_never_overlap_and_lead_each_cycle_once(
    database: str, tmp_path: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    hosts = [Host(database, log, "--every", "0.5", "--work", "0.2", "--ledger") for _ in range(2)]
    deadline = time.monotonic() + 30
    while len(runs(log)) < 8 and time.monotonic() < deadline:
        time.sleep(0.1)
    for host in hosts:
        host.stop()
    done = runs(log)
    assert len(done) >= 8, done
    cycles = [entry["cycle"] for entry in done]
    assert len(cycles) == len(set(cycles)), "each cycle is led once"
    assert overlaps(done) == []
    assert not any(entry["cancelled"] for entry in done)


def test_terminating_the_leaders_session_cancels_it_and_another_process_leads_the_next_cycle(
    database: str, tmp_path: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    hosts = [Host(database, log, "--every", "1", "--work", "30") for _ in range(2)]
    deadline = time.monotonic() + 20
    while not (started(log) and holder_pids(database)) and time.monotonic() < deadline:
        time.sleep(0.05)
    first = started(log)[0]
    (pid,) = holder_pids(database)
    terminated = time.time()
    terminate(database, pid)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
        runs(log) and any(s["pid"] != first["pid"] for s in started(log))
    ):
        time.sleep(0.05)
    for host in hosts:
        host.stop()
    lost = runs(log)[0]
    assert lost["pid"] == first["pid"] and lost["cancelled"], lost
    assert lost["ended"] - terminated < 1.0, f"cancelled {lost['ended'] - terminated:.3f} s after"
    assert lost["reason"].startswith("the lock was lost: ")
    nxt = [s for s in started(log) if s["pid"] != first["pid"]]
    assert nxt and nxt[0]["cycle"] > first["cycle"], started(log)


def test_a_silent_partition_cancels_the_job_before_the_server_frees_the_lock(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        skip_or_fail("a real partition needs root (a network namespace and a veth pair)")
    bed = Testbed("partition")
    try:
        log = tmp_path / "runs.jsonl"
        leader = Host(
            bed.info["through_veth"], log, "--every", "1", "--work", "60", "--host", "leader",
            prefix=tuple(bed.info["prefix"]),
        )
        deadline = time.monotonic() + 20
        while not started(log) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started(log), "the leader leads"
        standby = Host(bed.info["url"], log, "--every", "1", "--work", "60", "--host", "standby")
        time.sleep(1.5)
        bed.say("cut")
        cut = time.time()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
            s["pid"] == standby.process.pid for s in started(log)
        ):
            time.sleep(0.05)
        took_over = [s for s in started(log) if s["pid"] == standby.process.pid]
        assert took_over, "the standby took over once the server freed the lock"
        standby.stop()
        bed.say("heal")
        leader.stop()
    finally:
        bed.close()
    lost = [e for e in runs(log) if e["pid"] == leader.process.pid]
    assert lost and lost[0]["cancelled"], runs(log)
    gap = took_over[0]["started"] - lost[0]["ended"]
    print(
        f"partition: the leader's job cancelled {lost[0]['ended'] - cut:.2f} s after the cut, "
        f"the standby's started {took_over[0]['started'] - cut:.2f} s after it: overlap 0 s, "
        f"gap {gap:.2f} s"
    )
    assert gap > 0, f"the leader's job ended {-gap:.2f} s after the standby's started"
    assert lost[0]["ended"] - cut < 8, "cancelled within the keepalive bound"


# --- poolers, collisions, metrics ---------------------------------------------------------------


def test_session_mode_behind_transaction_pooling_raises_pooler_refused_before_any_job_runs(
    registry: lockward.Registry,
) -> None:
    bed = Testbed("pgbouncer", "transaction")
    try:
        ran: list[lockward.Cycle] = []

        async def job(cycle: lockward.Cycle) -> None:
            ran.append(cycle)

        worker = lockward.Worker(registry, ROLLUP, every=0.5, database_url=bed.info["pooler_url"])
        with pytest.raises(lockward.PoolerRefused) as refused:
            asyncio.run(asyncio.wait_for(worker.run(job), 30))
        assert ran == []
        assert refused.value.reason == str(refused.value)
        assert "session" in refused.value.reason
        # A run that ended on a refusal is over: running again is refused again, not "running".
        with pytest.raises(lockward.PoolerRefused):
            asyncio.run(asyncio.wait_for(worker.run(job), 30))

        # Transaction mode works through it.
        reports: list[lockward.CycleReport] = []
        transactional = lockward.Worker(
            registry, ROLLUP, every=0.5, database_url=bed.info["pooler_url"], transaction=True,
            on_cycle=reports.append,
        )

        async def lead_once() -> None:
            run = asyncio.ensure_future(transactional.run(job))
            await wait_for("a led cycle", lambda: any(r.outcome == "led" for r in reports))
            transactional.stop()
            await run

        asyncio.run(lead_once())
        assert ran
    finally:
        bed.close()


def test_a_database_that_does_not_exist_raises_database_error_with_its_sqlstate_at_once(
    registry: lockward.Registry, database: str
) -> None:
    ran: list[lockward.Cycle] = []

    async def job(cycle: lockward.Cycle) -> None:
        ran.append(cycle)

    missing = database.rsplit("/", 1)[0] + "/lockward_no_such_database"
    worker = lockward.Worker(registry, ROLLUP, every=0.5, database_url=missing)
    started = time.monotonic()
    with pytest.raises(lockward.DatabaseError) as error:
        asyncio.run(asyncio.wait_for(worker.run(job), 30))
    assert error.value.sqlstate == "3D000", error.value
    assert "lockward_no_such_database" in str(error.value)
    assert time.monotonic() - started < 10 and ran == []


def test_another_projects_worker_on_the_same_id_is_logged_as_a_collision(
    registry: lockward.Registry, database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "lockward.toml"
    other.write_text(
        '[project]\nname = "reports"\n\n[core]\nconstants = "locks.py"\n'
        "block = { start = 1_001_001, end = 1_001_999 }\n\n"
        '[[lock]]\nid = 1_001_001\nconstant = "ADVISORY_LOCK_REPORTS"\nworker = "reports"\n'
    )
    theirs = lockward.Worker(lockward.Registry.load(other), "ADVISORY_LOCK_REPORTS", every=1, database_url=database)
    reports: list[lockward.CycleReport] = []
    ours = lockward.Worker(registry, ROLLUP, every=1, database_url=database, on_cycle=reports.append)

    async def hold(cycle: lockward.Cycle) -> None:
        await asyncio.sleep(30)

    async def main() -> None:
        holding = asyncio.ensure_future(theirs.run(hold))
        await wait_for("the reports worker to hold 1_001_001", lambda: holder_pids(database) != [])
        running = asyncio.ensure_future(ours.run(hold))
        await wait_for("a collision", lambda: any(r.outcome == "collision" for r in reports))
        ours.stop()
        theirs.stop()
        await asyncio.gather(running, holding)

    with caplog.at_level(logging.INFO):
        asyncio.run(main())
    collision = next(r for r in reports if r.outcome == "collision")
    assert collision.holder is not None and collision.holder.startswith("lockward:reports:ADVISORY_LOCK_REPORTS ")
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("lockward_pg")]
    assert any("lockward:reports:ADVISORY_LOCK_REPORTS" in r.getMessage() for r in logged), [
        r.getMessage() for r in caplog.records
    ]


def test_the_workers_metrics_are_served_for_prometheus(database: str, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "runs.jsonl"
    host = Host(database, log, "--every", "0.5", "--work", "0.05", "--metrics", str(port))

    def led(text: str) -> float:
        for line in text.splitlines():
            if line.startswith(
                'lockward_worker_cycles_led_total{project="harbor",lock="ADVISORY_LOCK_INVOICE_ROLLUP"}'
            ):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    try:
        deadline = time.monotonic() + 20
        text = ""
        while led(text) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        host.stop()
    assert led(text) >= 2, text
    # The buckets are fitted to the 0.5 s period: a bound at each tenth of it.
    assert 'lockward_worker_hold_seconds_bucket{project="harbor",lock="ADVISORY_LOCK_INVOICE_ROLLUP",le="0.35"}' in text, text
    assert led(text) <= len(runs(log)), "a led cycle is one the job ran"
