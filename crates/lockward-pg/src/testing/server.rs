use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls};

use super::cluster::Cluster;

/// Where the shared test server is and how to log in.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: Option<String>,
}

impl Server {
    pub(crate) fn url(&self, database: &str) -> String {
        let auth = match &self.password {
            Some(password) => format!("{}:{}", self.user, password),
            None => self.user.clone(),
        };
        format!("postgres://{auth}@{}:{}/{database}", self.host, self.port)
    }

    fn from_url(url: &str) -> Self {
        let config = Config::from_str(url).unwrap_or_else(|error| {
            panic!("lockward test harness: bad database URL {url:?}: {error}")
        });
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(host)) => host.clone(),
            _ => panic!("lockward test harness: the database URL {url:?} must name a TCP host"),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        Self {
            host,
            port,
            user: config.get_user().unwrap_or("postgres").to_owned(),
            password: config
                .get_password()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        }
    }

    /// The server's socket address, for a [`super::Proxy`] in front of it.
    pub(crate) fn addr(&self) -> SocketAddr {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .unwrap_or_else(|| panic!("lockward test harness: cannot resolve {}", self.host))
    }
}

/// The shared server, found (or started) once per test process.
pub(crate) fn shared() -> &'static Server {
    static SHARED: OnceLock<Server> = OnceLock::new();
    SHARED.get_or_init(|| {
        for variable in ["LOCKWARD_TEST_DATABASE_URL", "DATABASE_URL"] {
            if let Ok(url) = std::env::var(variable)
                && !url.is_empty()
            {
                return Server::from_url(&url);
            }
        }
        let local: SocketAddr = ([127, 0, 0, 1], 5432).into();
        if TcpStream::connect_timeout(&local, Duration::from_secs(1)).is_ok() {
            return Server {
                host: "127.0.0.1".to_owned(),
                port: 5432,
                user: "postgres".to_owned(),
                password: None,
            };
        }
        match Cluster::start_shared() {
            Ok(server) => server,
            Err(error) => panic!(
                "lockward test harness: no PostgreSQL to test against. Tried \
                 LOCKWARD_TEST_DATABASE_URL and DATABASE_URL (unset), 127.0.0.1:5432 (no answer), \
                 and a throwaway cluster from `pg_config --bindir` ({error}). Set \
                 LOCKWARD_TEST_DATABASE_URL=postgres://USER@HOST:PORT/postgres or install \
                 PostgreSQL's server binaries."
            ),
        }
    })
}

/// A fresh database for one test, dropped (`WITH (FORCE)`) when this value is dropped.
///
/// ```no_run
/// # async fn example() {
/// let db = lockward_pg::testing::TestDb::new().await;
/// let client = db.connect().await;
/// client.execute("CREATE TABLE t (x int)", &[]).await.unwrap();
/// # }
/// ```
#[derive(Debug)]
pub struct TestDb {
    server: Server,
    name: String,
}

impl TestDb {
    /// Creates a uniquely named database on the shared test server.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: cancelled after `CREATE DATABASE` was sent, the database may be left
    /// behind (its name starts with `lockward_test_`).
    pub async fn new() -> Self {
        Self::create_on(shared().clone()).await
    }

    /// Creates a uniquely named database on `cluster`.
    ///
    /// # Cancel safety
    ///
    /// As [`TestDb::new`].
    pub async fn on(cluster: &Cluster) -> Self {
        Self::create_on(cluster.server().clone()).await
    }

    async fn create_on(server: Server) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "lockward_test_{}_{}_{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let admin = connect_to(&server, "postgres").await;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "lockward test harness: CREATE DATABASE {name}: {}",
                    crate::Error::from(error)
                )
            });
        Self { server, name }
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A `postgres://` URL for the database.
    pub fn url(&self) -> String {
        self.server.url(&self.name)
    }

    /// A URL for the database that goes through `addr` (a [`super::Proxy`]) instead.
    pub fn url_via(&self, addr: SocketAddr) -> String {
        let server = Server {
            host: addr.ip().to_string(),
            port: addr.port(),
            ..self.server.clone()
        };
        server.url(&self.name)
    }

    pub(crate) fn server(&self) -> &Server {
        &self.server
    }

    /// The server's socket address.
    pub fn server_addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// A plain connection to the database (no TLS), its connection task spawned on the current
    /// runtime.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a cancelled connect leaves nothing behind.
    pub async fn connect(&self) -> Client {
        connect_to(&self.server, &self.name).await
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let url = self.server.url("postgres");
        let name = self.name.clone();
        // Drop cannot await, and may run on a runtime thread: drop the database from a thread
        // with its own runtime. A stopped server (a fault test's cluster) is not an error.
        let dropper = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async move {
                    if let Ok((client, connection)) = tokio_postgres::connect(&url, NoTls).await {
                        let task = tokio::spawn(connection);
                        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                        if let Err(error) = client.batch_execute(&sql).await {
                            eprintln!(
                                "lockward test harness: {sql}: {}",
                                crate::Error::from(error)
                            );
                        }
                        drop(client);
                        let _ = task.await;
                    }
                });
            }
        });
        let _ = dropper.join();
    }
}

/// Connects to `database`; a failure says why, naming the server without its password.
async fn connect_to(server: &Server, database: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(&server.url(database), NoTls)
        .await
        .unwrap_or_else(|error| {
            panic!(
                "lockward test harness: connecting to {}@{}:{}/{database}: {}",
                server.user,
                server.host,
                server.port,
                crate::Error::from(error)
            )
        });
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}
