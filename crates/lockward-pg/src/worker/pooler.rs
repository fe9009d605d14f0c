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

use tokio_postgres::config::Host;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::{Mode, Worker};
use crate::Error;

/// Runs `prefix` (the session's `SET`s, possibly empty) with `SELECT pg_backend_pid(),
/// inet_server_port()` in one round trip, logs which server-side bound is in force, and in
/// session mode refuses transaction pooling. Returns the session's backend pid in session mode.
pub(super) async fn inspect(
    worker: &Worker,
    client: &Client,
    prefix: &str,
) -> Result<Option<i32>, Error> {
    let messages = client
        .simple_query(&format!(
            "{prefix} SELECT pg_backend_pid(), inet_server_port()"
        ))
        .await?;
    let row = messages.iter().find_map(|message| match message {
        SimpleQueryMessage::Row(row) => Some(row),
        _ => None,
    });
    let pid = row
        .and_then(|row| row.get(0))
        .and_then(|pid| pid.parse::<i32>().ok());
    let server_port = row
        .and_then(|row| row.get(1))
        .and_then(|port| port.parse::<u16>().ok());
    say_bound(worker, server_port);
    if worker.settings.mode == Mode::Transaction {
        return Ok(None);
    }
    let Some(pid) = pid else {
        return Ok(None);
    };
    // The first connection is idle now: a transaction pooler has its server connection back.
    let (second, _closed) = worker.target.connect().await?;
    let other = pid_of(&second.simple_query("SELECT pg_backend_pid()").await?);
    drop(second);
    if other == Some(pid) {
        let error = shared(pid);
        tracing::error!(%error, "refusing to lead");
        return Err(error);
    }
    Ok(Some(pid))
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
