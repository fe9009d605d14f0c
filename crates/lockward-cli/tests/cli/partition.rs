//! A silent partition of the leading `lockward run`, made for real (root only): the leader runs
//! in a network namespace of the test's own and reaches a throwaway cluster over a veth pair; the
//! cut drops every packet on both ends, without a reset, so the server sees a silent peer and
//! frees the lock only when its keepalive gives up on it. The command ignores SIGTERM and
//! lockward runs with its default options: the command must be dead before the other host, which
//! reaches the cluster over loopback, starts its own. A transaction-mode session cut off between
//! cycles is dropped by the server too.
//!
//! Run with `--nocapture` to see the figures (loss told, command killed, lock freed, next host
//! running, each after the cut): the README's partition bounds are these.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lockward_pg::Keepalive;
use lockward_pg::testing::{Cluster, Partition, Pgbouncer, Pooling, is_root, require_or_skip};
use rustix::process::{Pid, Signal, kill_process};

use crate::TestProject;

const LOCK: &str = "ADVISORY_LOCK_INVOICE_ROLLUP";
const EVERY: Duration = Duration::from_secs(1);

/// A `lockward run` of the heartbeat command, stopped on drop (SIGTERM, so that it kills its
/// command after the grace; SIGKILL should it not exit).
struct Host {
    child: Child,
    stderr: PathBuf,
}

impl Host {
    fn start(lockward: Command, project: &TestProject, url: &str, tag: &str) -> Self {
        Self::start_with(lockward, project, url, tag, &["--every", "1s"])
    }

    fn start_with(
        mut lockward: Command,
        project: &TestProject,
        url: &str,
        tag: &str,
        extra: &[&str],
    ) -> Self {
        let stderr = project.path().join(format!("lockward-{tag}.stderr"));
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/run/heartbeat.sh");
        let child = lockward
            .args(["run", "--lock", LOCK, "--database-url", url])
            .args(extra)
            .arg("--")
            .arg("sh")
            .arg(script)
            .arg(log_path(project))
            .arg(tag)
            .current_dir(project.path())
            .env_remove("DATABASE_URL")
            .env_remove("LOCKWARD_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("start lockward run");
        Self { child, stderr }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(pid) = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw) {
            let _ = kill_process(pid, Signal::TERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn log_path(project: &TestProject) -> PathBuf {
    project.path().join("beats.log")
}

/// One line the command wrote: `beat` or `term`, when (ns since the epoch), and which host's.
struct Line {
    kind: String,
    at: u128,
    tag: String,
}

fn lines(project: &TestProject) -> Vec<Line> {
    let text = std::fs::read_to_string(log_path(project)).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            // A line still being appended is read next time.
            let [kind, at, _pid, tag] = fields[..] else {
                return None;
            };
            Some(Line {
                kind: kind.to_owned(),
                at: at.parse().ok()?,
                tag: tag.to_owned(),
            })
        })
        .collect()
}

fn first(lines: &[Line], kind: &str, tag: &str) -> Option<u128> {
    lines
        .iter()
        .filter(|line| line.kind == kind && line.tag == tag)
        .map(|line| line.at)
        .min()
}

fn last(lines: &[Line], kind: &str, tag: &str) -> Option<u128> {
    lines
        .iter()
        .filter(|line| line.kind == kind && line.tag == tag)
        .map(|line| line.at)
        .max()
}

fn now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_nanos()
}

/// Seconds from `from` to `to` (ns since the epoch), for the figures.
fn after(from: u128, to: u128) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a figure in seconds")]
    let seconds = to.saturating_sub(from) as f64 / 1e9;
    format!("{seconds:.2} s")
}

async fn wait_until(what: &str, limit: Duration, mut condition: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition().await {
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A namespace cut off by `cut()`, a cluster listening on its veth too, a connection to the
/// cluster, the example project, and the URL a host in the namespace reaches the cluster by.
struct Rig {
    partition: Partition,
    cluster: Cluster,
    admin: tokio_postgres::Client,
    project: TestProject,
    through_veth: String,
}

impl Rig {
    async fn new() -> Self {
        let partition = Partition::create().expect("network namespace and veth pair");
        let cluster = Cluster::start_also_on(partition.host_addr().into()).await;
        let admin = lockward_pg::connect(&cluster.url("postgres"), "partition test")
            .await
            .expect("connect to the cluster");
        let through_veth = format!(
            "postgres://postgres@{}:{}/postgres",
            partition.host_addr(),
            cluster.addr().port()
        );
        Self {
            partition,
            cluster,
            admin,
            project: TestProject::harbor(),
            through_veth,
        }
    }
}

/// The backend pids holding an advisory lock in the connection's database (the pgbouncer tests'
/// databases share a cluster with every other test).
async fn holders(admin: &tokio_postgres::Client) -> Vec<i32> {
    admin
        .query(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .expect("query pg_locks")
        .iter()
        .map(|row| row.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_partitioned_leaders_command_is_killed_before_another_host_takes_over() {
    if !is_root() {
        require_or_skip("a real partition needs root (a network namespace and a veth pair)");
        return;
    }
    let Rig {
        partition,
        cluster,
        admin,
        project,
        through_veth,
    } = Rig::new().await;
    let leader = Host::start(
        partition.command(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &through_veth,
        "leader",
    );
    wait_until(
        "the leader's command",
        Duration::from_secs(20),
        async || first(&lines(&project), "beat", "leader").is_some(),
    )
    .await;
    let held_by = holders(&admin).await;
    assert_eq!(held_by.len(), 1, "the leader holds the lock");
    let standby = Host::start(
        Command::new(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &cluster.url("postgres"),
        "standby",
    );
    wait_until(
        "the standby's lock session",
        Duration::from_secs(20),
        async || {
            let row = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lockward:%'",
                &[],
            )
            .await
            .expect("pg_stat_activity");
            row.get::<_, i64>(0) == 2
        },
    )
    .await;

    let cut = now();
    partition.cut().expect("cut the link");
    let mut freed = None;
    // Generous: the figures, not this limit, are what the README states.
    wait_until(
        "the standby's command",
        Duration::from_secs(30),
        async || {
            if freed.is_none() && !holders(&admin).await.contains(&held_by[0]) {
                freed = Some(now());
            }
            first(&lines(&project), "beat", "standby").is_some()
        },
    )
    .await;
    // Whatever the leader's command still had to write is written by now.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let lines = lines(&project);
    let told = first(&lines, "term", "leader");
    let killed = last(&lines, "beat", "leader").expect("the leader's beats");
    let next = first(&lines, "beat", "standby").expect("the standby's beats");
    eprintln!(
        "partition of the leader, after the cut: loss told (SIGTERM) {}, command killed (last \
         beat) {}, lock freed by the server {}, next host running {}",
        told.map_or_else(|| "never".to_owned(), |at| after(cut, at)),
        after(cut, killed),
        freed.map_or_else(|| "not seen".to_owned(), |at| after(cut, at)),
        after(cut, next),
    );
    assert!(
        told.is_some(),
        "the leader's command never got SIGTERM; leader's stderr:\n{}",
        leader.stderr()
    );
    assert!(
        killed < next,
        "the partitioned leader's command still ran {} after the next host's started; \
         leader's stderr:\n{}",
        after(next, killed),
        leader.stderr()
    );
    // The documented bound: the server frees the lock within the keepalive bound of the
    // leader's last packet, the other host takes it at its next boundary, and its command is
    // up within a second of that.
    let bound = Keepalive::default().bound() + EVERY + Duration::from_secs(1);
    assert!(
        next - cut <= bound.as_nanos(),
        "the next host ran {} after the cut, beyond the bound of {bound:?}; standby's stderr:\n{}",
        after(cut, next),
        standby.stderr()
    );
}

#[test]
fn a_grace_that_would_outlast_a_partitioned_leaders_lock_is_refused_with_exit_2() {
    // `--grace 10s` was the default: after a partition the command got SIGKILL 12.6 s after the
    // cut, 3.8 s into the next host's run.
    let project = TestProject::harbor();
    let run = project.run(&[
        "run",
        "--lock",
        LOCK,
        "--every",
        "1s",
        "--database-url",
        "postgres://nobody@127.0.0.1:1/none",
        "--grace",
        "10s",
        "--",
        "true",
    ]);
    assert_eq!(run.code, 2, "stderr:\n{}", run.stderr);
    assert!(
        run.stderr.contains("`--grace 10s` is too long")
            && run.stderr.contains("`--grace` may be at most 3s"),
        "stderr:\n{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_drops_a_silently_partitioned_transaction_mode_session_between_cycles() {
    // In transaction mode the keepalive was `SET LOCAL` in the lock transaction only: a session
    // outside it (a standby, or a leader between cycles) that went silent kept its server
    // backend for the system's default of about two hours.
    if !is_root() {
        require_or_skip("a real partition needs root (a network namespace and a veth pair)");
        return;
    }
    let Rig {
        partition,
        cluster: _cluster,
        admin,
        project,
        through_veth,
    } = Rig::new().await;
    // The session opens before the first boundary, an hour away: it only ever sits idle.
    let host = Host::start_with(
        partition.command(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &through_veth,
        "idle",
        &["--every", "1h", "--transaction"],
    );
    let backend = async || -> Option<i32> {
        admin
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'lockward:%'",
                &[],
            )
            .await
            .expect("pg_stat_activity")
            .map(|row| row.get(0))
    };
    let mut pid = None;
    wait_until("the lock session", Duration::from_secs(20), async || {
        pid = backend().await;
        pid.is_some()
    })
    .await;

    let cut = now();
    partition.cut().expect("cut the link");
    // Generous, against the two hours it took; the figure printed is what the README states.
    wait_until(
        "the server to drop the silent session",
        Duration::from_secs(30),
        async || backend().await != pid,
    )
    .await;
    eprintln!(
        "partition of an idle transaction-mode session: dropped by the server {} after the cut",
        after(cut, now())
    );
    drop(host);
}

/// The URL a host in the namespace reaches the database through `bouncer` by.
fn through_pgbouncer(partition: &Partition, bouncer: &Pgbouncer) -> String {
    let (database, user) = bouncer.database_and_user();
    format!(
        "postgres://{user}@{}:{}/{database}",
        partition.host_addr(),
        bouncer.port()
    )
}

/// When the server frees the lock of a leader partitioned from its pooler (pgbouncer in session
/// pooling, the leader in a network namespace, pgbouncer and the server on loopback), with
/// pgbouncer's `settings`: `Held` when it still holds it after `limit`, `Skipped` when pgbouncer is
/// not installed (said on stderr; a failure under `LOCKWARD_REQUIRE_ALL_TESTS=1`).
async fn freed_behind_pgbouncer(settings: &str, limit: Duration) -> Freed {
    let partition = Partition::create().expect("network namespace and veth pair");
    let db = lockward_pg::testing::TestDb::new().await;
    let Some(bouncer) =
        Pgbouncer::start_on(&db, Pooling::Session, Some(partition.host_addr()), settings)
    else {
        return Freed::Skipped;
    };
    let url = through_pgbouncer(&partition, &bouncer);
    let admin = db.connect().await;
    let project = TestProject::harbor();
    // pgbouncer in session pooling gives the run a server session of its own: told so.
    let leader = Host::start_with(
        partition.command(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &url,
        "leader",
        &["--every", "1s", "--pooler", "session"],
    );
    wait_until(
        "the leader's command",
        Duration::from_secs(20),
        async || first(&lines(&project), "beat", "leader").is_some(),
    )
    .await;
    let held_by = holders(&admin).await;
    assert_eq!(
        held_by.len(),
        1,
        "the leader holds the lock: {}",
        leader.stderr()
    );
    let cut = Instant::now();
    partition.cut().expect("cut the link");
    while cut.elapsed() < limit {
        if !holders(&admin).await.contains(&held_by[0]) {
            return Freed::After(cut.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Freed::Held
}

/// What became of a partitioned leader's lock behind pgbouncer.
#[derive(Debug, PartialEq, Eq)]
enum Freed {
    After(Duration),
    Held,
    Skipped,
}

/// Behind a pooler the keepalive the lock session sets reaches the pooler-to-server socket, not
/// the leader's: the server keeps a partitioned leader's lock for as long as the pooler keeps
/// its client, unless the pooler watches its client sockets itself. The README's figures for
/// both cases come from here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_pgbouncer_a_partitioned_leaders_lock_is_freed_only_when_pgbouncer_watches_its_clients()
 {
    if !is_root() {
        require_or_skip("a real partition needs root (a network namespace and a veth pair)");
        return;
    }
    let limit = Duration::from_secs(20);
    let watched = match freed_behind_pgbouncer(
        "tcp_keepalive = 1\ntcp_keepidle = 5\ntcp_keepintvl = 1\ntcp_keepcnt = 3\n\
         tcp_user_timeout = 8000",
        limit,
    )
    .await
    {
        Freed::After(watched) => watched,
        Freed::Held => {
            panic!(
                "with pgbouncer's tcp_* settings the lock was still held {limit:?} after the cut"
            )
        }
        Freed::Skipped => return,
    };
    let unwatched = freed_behind_pgbouncer("", limit).await;
    eprintln!(
        "partition of a leader behind pgbouncer, after the cut: lock freed by the server after \
         {watched:?} with pgbouncer's tcp_* settings; {unwatched:?} ({limit:?} at most) with its \
         defaults"
    );
    assert!(
        watched <= Keepalive::default().bound() + Duration::from_secs(2),
        "freed after {watched:?}"
    );
    assert_eq!(
        unwatched,
        Freed::Held,
        "without them pgbouncer keeps the silent client, and the server its lock"
    );
}

/// After a partition behind pgbouncer's defaults leadership came back in 1 of 7 runs: pgbouncer
/// keeps the silent leader's client, the server its session and the lock; the reconnected leader
/// found its own identity holding the lock and skipped, and the standby said nothing. Now the
/// standby says so once the holder has been quiet past its bound, and the leader, back after the
/// heal, ends its own earlier session: someone leads within the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_partition_behind_a_default_pgbouncer_leadership_comes_back_once_healed() {
    if !is_root() {
        require_or_skip("a real partition needs root (a network namespace and a veth pair)");
        return;
    }
    let partition = Partition::create().expect("network namespace and veth pair");
    let db = lockward_pg::testing::TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start_on(&db, Pooling::Session, Some(partition.host_addr()), "")
    else {
        return;
    };
    let url = through_pgbouncer(&partition, &bouncer);
    let admin = db.connect().await;
    let project = TestProject::harbor();
    let pooled = ["--every", "1s", "--pooler", "session"];
    let leader = Host::start_with(
        partition.command(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &url,
        "leader",
        &pooled,
    );
    wait_until(
        "the leader's command",
        Duration::from_secs(20),
        async || first(&lines(&project), "beat", "leader").is_some(),
    )
    .await;
    // The standby reaches pgbouncer over loopback, which the cut does not touch.
    let standby = Host::start_with(
        Command::new(env!("CARGO_BIN_EXE_lockward")),
        &project,
        &url,
        "standby",
        &pooled,
    );
    let held_by = holders(&admin).await;
    assert_eq!(
        held_by.len(),
        1,
        "the leader holds the lock: {}",
        leader.stderr()
    );

    let cut = now();
    partition.cut().expect("cut the link");
    // Past the standby's bound for a quiet holder (twice the probe's interval and timeout).
    let quiet = Duration::from_secs(10);
    tokio::time::sleep(quiet).await;
    assert_eq!(
        holders(&admin).await,
        held_by,
        "pgbouncer's defaults keep the silent leader's session, and its lock"
    );
    let said = standby.stderr();
    assert!(
        said.contains("the lock is held by a session that has sent nothing for several periods"),
        "the standby said nothing of the quiet holder in {quiet:?}; its stderr:\n{said}"
    );
    let healed = now();
    partition.heal().expect("heal the link");
    // Reconnecting waits out the backoff (10 s at most, with jitter) and perhaps an attempt
    // begun during the cut (the connect timeout, 5 s), then a period to find the old session and
    // end it, a period to lead, and a second for the command to beat.
    let bound = Duration::from_secs(12 + 5 + 2 + 1);
    let mut led_after = None;
    wait_until(
        "a command after the heal",
        bound + Duration::from_secs(10),
        async || {
            led_after = lines(&project)
                .iter()
                .filter(|line| line.kind == "beat" && line.at > healed)
                .map(|line| line.at)
                .min();
            led_after.is_some()
        },
    )
    .await;
    let led_after = led_after.expect("a beat after the heal");
    eprintln!(
        "partition behind pgbouncer's defaults, healed {} after the cut: led again {} after the \
         heal",
        after(cut, healed),
        after(healed, led_after)
    );
    assert!(
        led_after - healed <= bound.as_nanos(),
        "led again {} after the heal, beyond the bound of {bound:?}; leader's stderr:\n{}",
        after(healed, led_after),
        leader.stderr()
    );
    assert!(
        leader
            .stderr()
            .contains("this worker's own earlier lock session still held the lock"),
        "the leader ended its own earlier session; its stderr:\n{}",
        leader.stderr()
    );
    let lines = lines(&project);
    let killed = last(&lines, "beat", "leader").filter(|at| *at < healed);
    let next = first(&lines, "beat", "standby");
    if let (Some(killed), Some(next)) = (killed, next) {
        assert!(
            killed < next,
            "the partitioned leader's command overlapped the standby's"
        );
    }
}
