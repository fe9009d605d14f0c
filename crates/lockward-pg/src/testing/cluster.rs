use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use super::prerequisite::is_root;
use super::server::Server;

/// A throwaway PostgreSQL cluster of the test's own, on 127.0.0.1 and a free port, that a fault
/// test may restart or stop. Stopped and removed on drop (and, should the test process die, by
/// a watchdog shell that outlives it).
#[derive(Debug)]
pub struct Cluster {
    paths: Paths,
    server: Server,
}

/// Where a cluster lives and which binaries run it.
#[derive(Debug, Clone)]
struct Paths {
    base: PathBuf,
    bindir: PathBuf,
}

impl Cluster {
    /// Starts a new cluster (initdb + pg_ctl; a few seconds).
    ///
    /// Panics with the failing command's output when the cluster cannot be started.
    ///
    /// # Cancel safety
    ///
    /// The work runs on a blocking thread; cancelling the future does not stop it, and the cluster
    /// it started is then left to the watchdog.
    pub async fn start() -> Self {
        Self::start_with(Vec::new(), None).await
    }

    /// Starts a new cluster that also listens on `addr`, an address of this host (one end of a
    /// [`Partition`](super::Partition)'s veth pair), and trusts clients on its subnets.
    ///
    /// # Cancel safety
    ///
    /// As [`Cluster::start`].
    pub async fn start_also_on(addr: IpAddr) -> Self {
        Self::start_with(Vec::new(), Some(addr)).await
    }

    /// Starts a new cluster that accepts TLS with the given PEM certificate and key (and still
    /// accepts plain connections: the client's `sslmode` decides).
    ///
    /// # Cancel safety
    ///
    /// As [`Cluster::start`].
    pub async fn start_tls(cert_pem: &str, key_pem: &str) -> Self {
        let files = vec![
            ("server.crt".to_owned(), cert_pem.to_owned()),
            ("server.key".to_owned(), key_pem.to_owned()),
        ];
        Self::start_with(files, None).await
    }

    async fn start_with(tls: Vec<(String, String)>, also: Option<IpAddr>) -> Self {
        tokio::task::spawn_blocking(move || Self::start_blocking(&tls, also))
            .await
            .expect("cluster start thread")
            .unwrap_or_else(|error| panic!("lockward test harness: starting a cluster: {error}"))
    }

    /// Starts the harness's shared cluster and leaves it to the watchdog.
    pub(crate) fn start_shared() -> Result<Server, String> {
        let cluster = Self::start_blocking(&[], None)?;
        let server = cluster.server.clone();
        // Leaked on purpose: it serves every test of this process; the watchdog stops it.
        std::mem::forget(cluster);
        Ok(server)
    }

    fn start_blocking(tls: &[(String, String)], also: Option<IpAddr>) -> Result<Self, String> {
        let bindir = pg_bindir()?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let base = std::env::temp_dir().join(format!("lockward-pg-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        let cluster = Self {
            server: Server {
                host: "127.0.0.1".to_owned(),
                port: free_port()?,
                user: "postgres".to_owned(),
                password: None,
            },
            paths: Paths { base, bindir },
        };
        let paths = &cluster.paths;
        paths.spawn_watchdog();
        if let Some((uid, gid)) = postgres_account()? {
            std::os::unix::fs::chown(&paths.base, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", paths.base.display()))?;
        }
        let data = paths.data();
        paths.pg(
            "initdb",
            &[
                "-D",
                &data.to_string_lossy(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )?;
        let listen = also.map_or_else(
            || "127.0.0.1".to_owned(),
            |addr| format!("127.0.0.1,{addr}"),
        );
        let mut settings = format!(
            "\nlisten_addresses = '{listen}'\nport = {}\nunix_socket_directories = '{}'\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n",
            cluster.server.port,
            paths.base.display()
        );
        if also.is_some() {
            append(&data.join("pg_hba.conf"), "\nhost all all samenet trust\n")?;
        }
        for (name, pem) in tls {
            let path = data.join(name);
            std::fs::write(&path, pem).map_err(|e| format!("{}: {e}", path.display()))?;
            chown_like(&path, &data)?;
            set_mode(&path, 0o600)?;
        }
        if !tls.is_empty() {
            settings
                .push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
        }
        append(&data.join("postgresql.conf"), &settings)?;
        paths.pg_ctl(&["start", "-w", "-t", "60"])?;
        Ok(cluster)
    }

    /// A URL for `database` on this cluster.
    pub fn url(&self, database: &str) -> String {
        self.server.url(database)
    }

    /// The server's socket address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    pub(crate) fn server(&self) -> &Server {
        &self.server
    }

    /// Restarts the server (`pg_ctl restart -m fast`): every connection is closed, the port stays.
    ///
    /// # Cancel safety
    ///
    /// The restart runs on a blocking thread and completes even when the future is cancelled.
    pub async fn restart(&self) {
        self.ctl(&["restart", "-m", "fast", "-w", "-t", "60"]).await;
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`).
    ///
    /// # Cancel safety
    ///
    /// As [`Cluster::restart`].
    pub async fn stop(&self) {
        self.ctl(&["stop", "-m", "immediate", "-w"]).await;
    }

    /// Starts the server again after [`Cluster::stop`].
    ///
    /// # Cancel safety
    ///
    /// As [`Cluster::restart`].
    pub async fn start_again(&self) {
        self.ctl(&["start", "-w", "-t", "60"]).await;
    }

    async fn ctl(&self, args: &[&str]) {
        let paths = self.paths.clone();
        let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
        let outcome = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            paths.pg_ctl(&args)
        })
        .await
        .expect("pg_ctl thread");
        if let Err(error) = outcome {
            panic!("lockward test harness: {error}");
        }
    }
}

impl Paths {
    fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let data = self.data().to_string_lossy().into_owned();
        let log = self.base.join("server.log").to_string_lossy().into_owned();
        let mut all = vec!["-D", &data, "-l", &log];
        all.extend_from_slice(args);
        self.pg("pg_ctl", &all)
    }

    fn pg(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let mut command = as_postgres(&self.bindir.join(program));
        command
            .args(args)
            .stdin(Stdio::null())
            .current_dir(&self.base);
        let output = command.output().map_err(|e| format!("{program}: {e}"))?;
        if output.status.success() {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.base.join("server.log")).unwrap_or_default();
        Err(format!(
            "{program} {}: {}\n{}{}\nserver log:\n{log}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }

    /// A shell that waits for this process to end, then stops the cluster and removes its files.
    fn spawn_watchdog(&self) {
        let pg_ctl = self.bindir.join("pg_ctl");
        let stop = if is_root() {
            format!("runuser -u postgres -- '{}'", pg_ctl.display())
        } else {
            format!("'{}'", pg_ctl.display())
        };
        super::after_this_process(&format!(
            "{stop} -D '{data}' stop -m immediate >/dev/null 2>&1; rm -rf '{base}'",
            data = self.data().display(),
            base = self.base.display(),
        ));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.paths.pg_ctl(&["stop", "-m", "immediate", "-w"]);
        let _ = std::fs::remove_dir_all(&self.paths.base);
    }
}

fn pg_bindir() -> Result<PathBuf, String> {
    let output = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .map_err(|e| format!("pg_config --bindir: {e}"))?;
    if !output.status.success() {
        return Err(format!("pg_config --bindir: {}", output.status));
    }
    let bindir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !bindir.join("initdb").exists() {
        return Err(format!("no initdb in {}", bindir.display()));
    }
    Ok(bindir)
}

pub(super) fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| e.to_string())
}

/// The `postgres` account's uid and gid when running as root (PostgreSQL refuses to run as root).
pub(super) fn postgres_account() -> Result<Option<(u32, u32)>, String> {
    if !is_root() {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&"postgres") && fields.len() > 3)
        .and_then(|fields| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
        .map(Some)
        .ok_or_else(|| {
            "running as root, but there is no `postgres` OS user to run the server as".to_owned()
        })
}

fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn chown_like(path: &Path, like: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(like).map_err(|e| format!("{}: {e}", like.display()))?;
    if is_root() {
        std::os::unix::fs::chown(path, Some(meta.uid()), Some(meta.gid()))
            .map_err(|e| format!("chown {}: {e}", path.display()))?;
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    let mut current =
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let _ = write!(current, "{text}");
    std::fs::write(path, current).map_err(|e| format!("{}: {e}", path.display()))
}
