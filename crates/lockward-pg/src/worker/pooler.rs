//! Poolers between the worker and the server: what the lock session can tell about them, and
//! session mode's refusal to lead through transaction pooling.
//!
//! Two kinds of evidence, both gathered with statements the session sends anyway:
//!
//! - **Transaction pooling** (session mode only). A session-level advisory lock belongs to one
//!   server backend; a transaction-pooling pooler runs each statement on whichever server
//!   connection is free, so the unlock may run on another host's connection and the lock stays
//!   with the pooler. At open the session reads `pg_backend_pid()` and a second, short-lived
//!   connection of the worker reads it too: two client connections served by one backend is
//!   impossible on a direct or session-pooled connection, and it is what pgbouncer's
//!   transaction pooling does with an idle server connection (it hands out the most recently
//!   used one). Then every statement of the cycle (try-lock, unlock, liveness probe) returns the
//!   pid it ran on, at no extra round trip, and a pid that differs from the one seen at open
//!   ends the session: the job is not run, or is cancelled.
//! - **A hop** (both modes). `inet_server_port()` is the port the *server* accepted this
//!   connection on. When it is not the port the worker connected to (or the server saw a Unix
//!   socket while the worker came over TCP), something is in between: a pooler, a proxy or a
//!   port mapping. The server-side keepalive the worker sets then guards the hop-to-server
//!   socket only, and the worker says so, with the settings the pooler needs.
//!
//! A pooler on the server's own port and host name is not seen as a hop; the pid checks still
//! refuse transaction pooling there.

use std::net::IpAddr;

use tokio_postgres::config::Host;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::{Mode, Pooler, Worker};
use crate::Error;
use crate::connect::Socket;

/// Runs `prefix` (the session's `SET`s, possibly empty) with the server's view of the session in
/// one round trip, logs which server-side bound is in force, and in session mode refuses to lead
/// unless the session is proven to be a server session of its own (see [`prove_direct`]) or the
/// worker was told that the pooler pools sessions ([`Pooler::Session`]). Returns the session's
/// backend pid in session mode.
pub(super) async fn inspect(
    worker: &Worker,
    client: &Client,
    prefix: &str,
    socket: Socket,
) -> Result<Option<i32>, Error> {
    let messages = client
        .simple_query(&format!(
            "{prefix} SELECT pg_backend_pid(), inet_server_port(), host(inet_client_addr()), \
             inet_client_port(), host(inet_server_addr())"
        ))
        .await?;
    let row = messages.iter().find_map(|message| match message {
        SimpleQueryMessage::Row(row) => Some(row),
        _ => None,
    });
    let column = |i: usize| row.and_then(|row| row.get(i));
    let pid = column(0).and_then(|pid| pid.parse::<i32>().ok());
    let server_port = column(1).and_then(|port| port.parse::<u16>().ok());
    let seen = ServerView {
        client: column(2)
            .and_then(|ip| ip.parse::<IpAddr>().ok())
            .zip(column(3).and_then(|port| port.parse::<u16>().ok())),
        server: column(4)
            .and_then(|ip| ip.parse::<IpAddr>().ok())
            .zip(server_port),
    };
    say_bound(worker, server_port);
    if worker.settings.mode == Mode::Transaction {
        return Ok(None);
    }
    let Some(pid) = pid else {
        return Err(unproven(
            "the server did not say which backend serves the lock session",
        ));
    };
    match worker.settings.pooler {
        Pooler::None => prove_direct(socket, seen, pid)?,
        Pooler::Session => {
            // Told that the pooler pools sessions: what can be seen of the contrary still
            // refuses. The first connection is idle now: a transaction pooler has its server
            // connection back, and may hand it to the second.
            let (second, _closed) = worker.target.connect().await?;
            let other = pid_of(&second.simple_query("SELECT pg_backend_pid()").await?);
            drop(second);
            if other == Some(pid) {
                return Err(shared(pid));
            }
        }
    }
    Ok(Some(pid))
}

/// The server's view of a session: the client's address and port, and its own (`None` over a
/// Unix socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ServerView {
    pub(super) client: Option<(IpAddr, u16)>,
    pub(super) server: Option<(IpAddr, u16)>,
}

/// Proves that the lock session's statements reach one server backend and nothing else: the
/// server serves it on the very socket this worker opened.
///
/// Over TCP, the server's client address and port and its own address and port must be this
/// socket's local and peer ends: a pooler, a proxy or NAT in between makes the server see the
/// hop's socket instead, and two live connections never share all four. Over a Unix socket,
/// the server must see a Unix socket too, and the backend serving the session must be a child of
/// the process listening on the socket (`/proc/PID/stat`): the postmaster forks each backend,
/// a pooler serves its clients itself. Anything that cannot be shown is a refusal: a session
/// lock taken through transaction pooling lands on a server connection other clients share,
/// and a heuristic that passes by chance under load lets two hosts lead at once.
pub(super) fn prove_direct(socket: Socket, seen: ServerView, backend: i32) -> Result<(), Error> {
    let canonical = |(ip, port): (IpAddr, u16)| (ip.to_canonical(), port);
    match socket {
        Socket::Tcp { local, peer } => {
            let ours = (
                Some(canonical((local.ip(), local.port()))),
                Some(canonical((peer.ip(), peer.port()))),
            );
            let theirs = (seen.client.map(canonical), seen.server.map(canonical));
            if ours == theirs {
                return Ok(());
            }
            let shown = |end: Option<(IpAddr, u16)>| {
                end.map_or_else(
                    || "a Unix socket".to_owned(),
                    |(ip, port)| std::net::SocketAddr::new(ip, port).to_string(),
                )
            };
            Err(unproven(&format!(
                "this worker's socket runs from {local} to {peer}, but the server serves the \
                 lock session on a connection from {} to {}: something is in between (a \
                 pooler, a proxy, or address translation)",
                shown(theirs.0),
                shown(theirs.1),
            )))
        }
        Socket::Unix { listener } => {
            if let Some(client) = seen.client {
                return Err(unproven(&format!(
                    "this worker connected over a Unix socket, but the server serves the lock \
                     session on a TCP connection from {}: a pooler or proxy listens on that \
                     socket",
                    std::net::SocketAddr::new(client.0, client.1)
                )));
            }
            let parent = parent_of(backend);
            match (listener, parent) {
                (Some(listener), Some(parent)) if listener == parent => Ok(()),
                (Some(listener), Some(parent)) => Err(unproven(&format!(
                    "the process listening on the Unix socket (pid {listener}) is not the one \
                     that started the lock session's server backend (pid {backend}, started by \
                     pid {parent}): a pooler listens on that socket"
                ))),
                _ => Err(unproven(&format!(
                    "over a Unix socket the proof is that the socket's listener started the \
                     lock session's server backend, and this host cannot see backend {backend} \
                     or the listener (another pid namespace)"
                ))),
            }
        }
    }
}

/// The parent of process `pid`, from `/proc/PID/stat` (the field after the parenthesised name).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, fields) = stat.rsplit_once(") ")?;
    fields.split(' ').nth(1)?.parse().ok()
}

/// The pid in the first row of a `SELECT pg_backend_pid()`'s answer.
pub(super) fn pid_of(messages: &[SimpleQueryMessage]) -> Option<i32> {
    messages.iter().find_map(|message| match message {
        SimpleQueryMessage::Row(row) => row.get(0).and_then(|pid| pid.parse().ok()),
        _ => None,
    })
}

/// Two connections of this worker on one server backend.
fn shared(pid: i32) -> Error {
    Error::TransactionPooling(format!(
        "two connections of this worker were served by the same server backend (pid {pid}): a \
         pooler in transaction pooling (pgbouncer pool_mode = transaction) is in between, and a \
         session-level advisory lock cannot be held through it. {FIX}"
    ))
}

/// A statement of the session ran on another server backend than the one it opened on.
pub(super) fn moved(opened: i32, ran_on: i32) -> Error {
    Error::TransactionPooling(format!(
        "the lock session's statements do not land on one server session (opened on backend pid \
         {opened}, a statement ran on pid {ran_on}): a pooler in transaction pooling (pgbouncer \
         pool_mode = transaction) is in between, and a session-level advisory lock cannot be \
         held through it. {FIX}"
    ))
}

const FIX: &str = "Use transaction mode (`lockward run --transaction`, `Mode::Transaction` in the \
                   library), or connect to the server directly or through session pooling";

/// Session mode cannot show that its session is its own.
fn unproven(detail: &str) -> Error {
    Error::SessionUnproven(format!("{detail}. {UNPROVEN_FIX}"))
}

/// What to do when session mode cannot prove its session is its own.
const UNPROVEN_FIX: &str = "Use transaction mode (`lockward run --transaction`, \
     `Mode::Transaction` in the library), or connect to the server directly; if each connection \
     of this worker does reach a server session of its own (pgbouncer with pool_mode = session, \
     a TCP proxy, NAT), say so with `--pooler session` (`Pooler::Session` in the library)";

/// Logs which bound on a silent leader's lock is in force: the server's own (direct), or the
/// pooler's (a hop), with what the pooler must set.
fn say_bound(worker: &Worker, server_port: Option<u16>) {
    let keepalive = worker.settings.keepalive;
    let bound = keepalive.bound();
    let config = &worker.target.config;
    let over_tcp = config
        .get_hosts()
        .iter()
        .all(|host| matches!(host, Host::Tcp(_)));
    let ports = config.get_ports();
    let reached = |port: u16| {
        if ports.is_empty() {
            port == 5432
        } else {
            ports.contains(&port)
        }
    };
    let hop = over_tcp && !server_port.is_some_and(reached);
    // Said at the first open and again only when it changes, not at every reconnect.
    if worker.said_path.lock().expect("said path").replace(hop) == Some(hop) {
        return;
    }
    if !hop {
        tracing::info!(
            bound = %humantime_secs(bound),
            "connected to the server directly: it drops a silent leader's session, and the lock, within the keepalive bound"
        );
        return;
    }
    let seen =
        server_port.map_or_else(|| "a Unix socket".to_owned(), |port| format!("port {port}"));
    tracing::warn!(
        server_saw = %seen,
        "a pooler or proxy is between this worker and the server (the server saw this session \
         arrive on {seen}, not on the port the worker connected to): the server-side keepalive \
         reaches only the pooler-to-server socket, so the server keeps a silent leader's lock for \
         as long as the pooler keeps its client (pgbouncer's default: about 2 hours). For the \
         server to drop a silent leader within {}, the pooler must watch its client sockets: in \
         pgbouncer.ini set tcp_keepalive = 1, tcp_keepidle = {}, tcp_keepintvl = {}, \
         tcp_keepcnt = {}, tcp_user_timeout = {}",
        humantime_secs(bound),
        keepalive.idle.as_secs(),
        keepalive.interval.as_secs(),
        keepalive.count,
        bound.as_millis(),
    );
}

/// `8s`: keepalive durations are whole seconds.
fn humantime_secs(duration: std::time::Duration) -> String {
    format!("{}s", duration.as_secs())
}

impl Worker {
    /// Opens the lock session once, as the first cycle would, and closes it: an error says why
    /// the worker could not lead now. In session mode behind a transaction-pooling pooler that
    /// is [`Error::TransactionPooling`], which no retry will change; anything else (an
    /// unreachable server, say) [`Worker::run`] retries at each cycle. `lockward run` calls it to
    /// refuse session mode behind transaction pooling before running anything.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a session opened and not yet returned is closed when dropped.
    pub async fn preflight(&self) -> Result<(), Error> {
        super::session::Session::open(self).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn tcp(local: &str, peer: &str) -> Socket {
        Socket::Tcp {
            local: local.parse().unwrap(),
            peer: peer.parse().unwrap(),
        }
    }

    fn seen(client: &str, server: &str) -> ServerView {
        let end = |text: &str| {
            let addr: SocketAddr = text.parse().unwrap();
            (addr.ip(), addr.port())
        };
        ServerView {
            client: Some(end(client)),
            server: Some(end(server)),
        }
    }

    #[test]
    fn the_server_serving_this_very_socket_is_proof_of_a_direct_session() {
        let socket = tcp("127.0.0.1:40001", "127.0.0.1:5432");
        assert!(prove_direct(socket, seen("127.0.0.1:40001", "127.0.0.1:5432"), 7).is_ok());
        // IPv4 seen through an IPv6 socket is the same address.
        let mapped = tcp("[::ffff:10.0.0.2]:40001", "[::ffff:10.0.0.9]:5432");
        assert!(prove_direct(mapped, seen("10.0.0.2:40001", "10.0.0.9:5432"), 7).is_ok());
    }

    #[test]
    fn a_hop_with_another_port_or_address_on_either_end_is_refused_with_both_views() {
        let socket = tcp("127.0.0.1:40001", "127.0.0.1:6432");
        for (client, server) in [
            // pgbouncer's own socket to the server.
            ("127.0.0.1:40002", "127.0.0.1:5432"),
            // The same local port by chance, another server port.
            ("127.0.0.1:40001", "127.0.0.1:5432"),
            // NAT: another address.
            ("10.0.0.2:40001", "127.0.0.1:6432"),
        ] {
            let refused = prove_direct(socket, seen(client, server), 7).unwrap_err();
            let message = refused.to_string();
            assert!(matches!(refused, Error::SessionUnproven(_)), "{message}");
            assert!(
                message.contains("127.0.0.1:40001") && message.contains(client),
                "{message}"
            );
        }
    }

    #[test]
    fn over_a_unix_socket_a_tcp_session_on_the_server_or_an_unknown_backend_is_refused() {
        let unix = Socket::Unix { listener: Some(1) };
        let refused = prove_direct(unix, seen("127.0.0.1:40001", "127.0.0.1:5432"), 7);
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("a pooler or proxy listens")
        );
        let nobody = ServerView {
            client: None,
            server: None,
        };
        // No such backend on this host: nothing proves it.
        assert!(prove_direct(unix, nobody, i32::MAX).is_err());
        // This test process's parent started it: the listener must be that parent.
        let me = i32::try_from(std::process::id()).unwrap();
        let parent = parent_of(me).unwrap();
        let ours = Socket::Unix {
            listener: Some(parent),
        };
        assert!(prove_direct(ours, nobody, me).is_ok());
    }
}
