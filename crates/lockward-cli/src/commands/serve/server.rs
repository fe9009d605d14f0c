//! The accept loop: hyper's HTTP/1.1 and HTTP/2 connections under limits a dashboard anyone may reach needs.
//!
//! `axum::serve` read headers without a timeout and accepted connections without a limit: with
//! `ulimit -n 256`, 300 half-open sockets from 127.0.0.1 made normal requests time out, and while
//! one client held half a request `serve` did not exit on SIGTERM. Here:
//! - a request's headers must arrive within [`HEADER_READ_TIMEOUT`] (hyper's own timer);
//! - a connection lives at most [`CONNECTION_AGE`], then is closed after its request in flight
//!   (the page reconnects by itself);
//! - at most [`connection_limit`] connections are open, never running the process out of file
//!   descriptors; a new one that finds every place taken closes the oldest (under a flood of
//!   half-sent requests a real request still gets in at once);
//! - on shutdown no connection is accepted, each is asked to close after its request in flight,
//!   and after [`SHUTDOWN_GRACE`] the rest are dropped.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::{AbortHandle, JoinSet};

/// How long a client may take to send a request's headers.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one connection is kept, however busy.
pub(crate) const CONNECTION_AGE: Duration = Duration::from_secs(60);

/// How long shutdown waits for requests in flight.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// At most this many connections at once: a quarter of the file descriptors the process may
/// open (the database pool, the log and the listener need some too), from 16 to 1024.
pub(crate) fn connection_limit() -> usize {
    let open_files = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1024);
    usize::try_from(open_files / 4)
        .unwrap_or(1024)
        .clamp(16, 1024)
}

/// Serves `app` on `listener` until `shutdown` resolves, then closes within the grace.
pub(crate) async fn serve(
    listener: TcpListener,
    app: axum::Router,
    shutdown: impl Future<Output = ()>,
) {
    let limit = Arc::new(Semaphore::new(connection_limit()));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    // Oldest first: the connection to close when a new one finds every place taken.
    let mut open: VecDeque<AbortHandle> = VecDeque::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // not the server's end. A pause, so that a full table is not spun on.
                    tracing::debug!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        open.retain(|handle| !handle.is_finished());
        // Every place taken: the oldest connection goes, rather than the new one waiting
        // behind clients that send half a request and then nothing (they would each hold their
        // place for the header timeout, one batch after another).
        if limit.available_permits() == 0
            && let Some(oldest) = open.pop_front()
        {
            oldest.abort();
        }
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = Arc::clone(&limit).acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stopping = stopping.clone();
        let handle = connections.spawn(async move {
            let _permit = permit;
            // HTTP/1.1, and HTTP/2 for a client that speaks it from the start (prior knowledge:
            // its `:authority` is the Host the access rules read).
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_concurrent_streams(32)
                .keep_alive_interval(Some(HEADER_READ_TIMEOUT))
                .keep_alive_timeout(HEADER_READ_TIMEOUT);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = stopping.wait_for(|stop| *stop) => {}
                () = tokio::time::sleep(CONNECTION_AGE) => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
        });
        open.push_back(handle);
    }
    stop.send_replace(true);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE + Duration::from_secs(1), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.abort_all();
    }
}
