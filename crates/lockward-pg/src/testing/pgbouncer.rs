use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::server::TestDb;

/// How a [`Pgbouncer`] pools server connections (its `pool_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// `pool_mode = transaction`: a server connection per transaction, what most hosted
    /// PostgreSQL puts in front of the server.
    Transaction,
    /// Transaction pooling with `server_round_robin = 1` over 4 server connections: each
    /// transaction goes to the next of several server connections, as on a busy pooler, so
    /// that two consecutive statements of one client almost never share a server session.
    TransactionRoundRobin,
    /// `pool_mode = session`: a server connection per client connection.
    Session,
}

/// A real pgbouncer (the system's package: Debian's `pgbouncer`, 1.18 on bookworm) of the
/// test's own, on 127.0.0.1 and a free port, in front of a [`TestDb`]'s server, with
/// `auth_type = trust`. As root it runs as the `postgres` OS user (pgbouncer refuses root).
/// Stopped by its pid on drop, and by a watchdog shell should the test process die.
#[derive(Debug)]
pub struct Pgbouncer {
    dir: PathBuf,
    addr: SocketAddr,
    database: String,
    user: String,
    child: Child,
}

impl Pgbouncer {
    /// Starts pgbouncer in front of `db`'s server, pooling as `pooling`.
    ///
    /// When pgbouncer is not installed, returns `None` after saying so on stderr (the test is
    /// then skipped), or panics when `LOCKWARD_REQUIRE_ALL_TESTS=1` (CI: a missing
    /// prerequisite is a failure). Panics, with pgbouncer's log, when it does not start.
    pub fn start(db: &TestDb, pooling: Pooling) -> Option<Self> {
        Self::start_on(db, pooling, None, "")
    }

    /// As [`start`](Self::start), also listening on `also_on` (a [`Partition`](super::Partition)'s
    /// host end, say), with `settings` (lines of `pgbouncer.ini`'s `[pgbouncer]` section, such as
    /// its `tcp_*` keepalive settings) added.
    pub fn start_on(
        db: &TestDb,
        pooling: Pooling,
        also_on: Option<std::net::Ipv4Addr>,
        settings: &str,
    ) -> Option<Self> {
        let Some(binary) = binary() else {
            super::require_or_skip(
                "pgbouncer is not installed (Debian: apt-get install -y pgbouncer; scripts/test \
                 installs it when run as root)",
            );
            return None;
        };
        Some(
            Self::start_with(&binary, db, pooling, also_on, settings).unwrap_or_else(|error| {
                panic!("lockward test harness: starting pgbouncer: {error}")
            }),
        )
    }

    fn start_with(
        binary: &Path,
        db: &TestDb,
        pooling: Pooling,
        also_on: Option<std::net::Ipv4Addr>,
        settings: &str,
    ) -> Result<Self, String> {
        let server = db.server();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("lockward-pgbouncer-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port = super::cluster::free_port()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let password = server
            .password
            .as_ref()
            .map(|p| format!(" password={p}"))
            .unwrap_or_default();
        let mode = match pooling {
            Pooling::Transaction => "transaction",
            Pooling::TransactionRoundRobin => "transaction\nserver_round_robin = 1",
            Pooling::Session => "session",
        };
        let ini = format!(
            "[databases]\n\
             * = host={host} port={server_port} user={user}{password}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1{also}\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {dir}/userlist.txt\n\
             pool_mode = {mode}\n\
             max_client_conn = 200\n\
             default_pool_size = 20\n\
             ignore_startup_parameters = extra_float_digits\n\
             pidfile = {dir}/pgbouncer.pid\n\
             logfile = {dir}/pgbouncer.log\n\
             {settings}\n",
            also = also_on.map(|addr| format!(", {addr}")).unwrap_or_default(),
            host = server.host,
            server_port = server.port,
            user = server.user,
            dir = dir.display(),
        );
        write(&dir.join("pgbouncer.ini"), &ini)?;
        write(
            &dir.join("userlist.txt"),
            &format!("\"{}\" \"\"\n", server.user),
        )?;
        let owner = super::cluster::postgres_account()?;
        if let Some((uid, gid)) = owner {
            for path in [&dir, &dir.join("pgbouncer.ini"), &dir.join("userlist.txt")] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid))
                    .map_err(|e| format!("chown {}: {e}", path.display()))?;
            }
        }
        let mut command = if owner.is_some() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(binary);
            command
        } else {
            Command::new(binary)
        };
        let child = command
            .arg(dir.join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let mut bouncer = Self {
            dir,
            addr,
            database: db.name().to_owned(),
            user: server.user.clone(),
            child,
        };
        bouncer.spawn_watchdog();
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if Instant::now() > deadline || bouncer.child.try_wait().ok().flatten().is_some() {
                return Err(format!(
                    "pgbouncer did not listen on {addr}; its log:\n{}",
                    bouncer.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if pooling == Pooling::TransactionRoundRobin {
            bouncer.fill_pool()?;
        }
        Ok(bouncer)
    }

    /// Opens [`POOL`] server connections at once (pgbouncer would add `min_pool_size`'s one by
    /// one over a second or so): as many clients each hold a transaction for a moment.
    fn fill_pool(&self) -> Result<(), String> {
        let url = self.url();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async move {
                let mut holds = Vec::new();
                for _ in 0..POOL {
                    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                        .await
                        .map_err(|e| crate::Error::from(e).to_string())?;
                    tokio::spawn(connection);
                    holds.push(tokio::spawn(async move {
                        client.simple_query("SELECT pg_sleep(0.2)").await.map(drop)
                    }));
                }
                for hold in holds {
                    hold.await
                        .map_err(|e| e.to_string())?
                        .map_err(|e| crate::Error::from(e).to_string())?;
                }
                Ok(())
            })
        })
        .join()
        .map_err(|_| "the pool-filling thread panicked".to_owned())?
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The test database's name and the user, for a URL through another of its addresses.
    pub fn database_and_user(&self) -> (&str, &str) {
        (&self.database, &self.user)
    }

    /// A `postgres://` URL for the test database through this pgbouncer.
    pub fn url(&self) -> String {
        format!(
            "postgres://{}@{}:{}/{}",
            self.user,
            self.addr.ip(),
            self.addr.port(),
            self.database
        )
    }

    /// pgbouncer's own log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }

    /// pgbouncer's pid, from its pidfile (as root, the child is `runuser`).
    fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.join("pgbouncer.pid"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    }

    /// A shell that waits for this process to end, then stops pgbouncer and removes its files.
    fn spawn_watchdog(&self) {
        super::after_this_process(&format!(
            "kill \"$(cat '{dir}/pgbouncer.pid' 2>/dev/null)\" 2>/dev/null; rm -rf '{dir}'",
            dir = self.dir.display(),
        ));
    }
}

impl Drop for Pgbouncer {
    fn drop(&mut self) {
        // SIGTERM: pgbouncer's immediate shutdown, which closes every connection.
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The pgbouncer binary: on `PATH`, else where Debian puts it.
fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join("pgbouncer"))
        .find(|candidate| candidate.is_file())
}

/// How many server connections the round-robin pool starts with.
const POOL: usize = 4;

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
