//! `lockward serve`: the read-only dashboard, its JSON API and `/metrics`.
//!
//! One HTTP/1.1 server (axum on tokio) answers from one database session, opened at the first
//! request that needs it and again after it breaks, read-only (`default_transaction_read_only`).
//! The page's files are compiled into the binary. It listens on loopback unless told otherwise:
//! another address needs `--public` and a token that every request must carry (see `access`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;

use crate::args::Global;
use crate::args::ServeArgs;
use crate::{Outcome, UsageError};
use state::Shared;

mod access;
mod answer;
mod database;
mod metrics;
mod registry;
mod routes;
mod server;
mod state;

pub(crate) use access::Token;

/// The environment variable a token can come from, instead of `--token-file`.
pub(crate) const TOKEN_ENV: &str = "LOCKWARD_SERVE_TOKEN";

pub(crate) fn run(global: &Global, args: &ServeArgs) -> anyhow::Result<Outcome> {
    let token = resolve_token(args)?;
    // Loaded before listening: an invalid registry is bad input (exit 2), as for `live`.
    let registry = registry::Cache::load(global, args.with.clone())?;
    let databases = args.databases.resolve()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|error| {
                UsageError(format!(
                    "--listen {}: cannot listen there: {error}",
                    args.listen
                ))
            })?;
        let opened = futures_util::future::join_all(
            databases
                .iter()
                .map(|named| database::Database::open(&named.name, &named.url)),
        )
        .await;
        let databases = opened
            .into_iter()
            .collect::<Result<Vec<_>, String>>()
            .map_err(UsageError)?;
        let bound = listener
            .local_addr()
            .context("cannot read the address listened on")?;
        let shared = Arc::new(Shared {
            registry,
            databases,
            interval_seconds: args.interval.get().as_secs_f64(),
            ledger_window: args.ledger_window,
        });
        let access = access::Access::new(token.as_ref().map(|(token, _)| token.clone()), bound);
        announce(bound, token.as_ref());
        let app = routes::router(shared, access);
        server::serve(listener, app, lockward_pg::shutdown_signal()).await;
        stderrln!("lockward serve: stopped");
        anyhow::Ok(())
    })?;
    Ok(Outcome::Clean)
}

/// Where the token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenSource {
    File,
    Environment,
    Made,
}

/// The token from `--token-file`, else the environment; with `--public` and neither, a new one.
fn resolve_token(args: &ServeArgs) -> anyhow::Result<Option<(Token, TokenSource)>> {
    if let Some(path) = &args.token_file {
        // A token is a line; a file of more than 4 KiB is not one (`/dev/zero` read until
        // memory ran out).
        let bytes = lockward_registry::file::read_regular(path, 4096).map_err(|error| {
            UsageError(format!(
                "--token-file {}: cannot read it: {error}",
                path.display()
            ))
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| UsageError(format!("--token-file {}: it is not UTF-8", path.display())))?;
        let token = Token::new(text.trim())
            .map_err(|reason| UsageError(format!("--token-file {}: {reason}", path.display())))?;
        return Ok(Some((token, TokenSource::File)));
    }
    if let Some(text) = std::env::var_os(TOKEN_ENV) {
        let text = text
            .into_string()
            .map_err(|_| UsageError(format!("{TOKEN_ENV} is not UTF-8")))?;
        let token = Token::new(text.trim())
            .map_err(|reason| UsageError(format!("{TOKEN_ENV}: {reason}")))?;
        return Ok(Some((token, TokenSource::Environment)));
    }
    if args.public {
        return Ok(Some((Token::random()?, TokenSource::Made)));
    }
    Ok(None)
}

/// Says on stderr where the dashboard is: with the token in the URL when `serve` made it (no
/// one else knows it), never a token the user gave. The `listening on` line comes last, so a
/// script that waits for it has read everything before it.
fn announce(bound: SocketAddr, token: Option<&(Token, TokenSource)>) {
    let url = format!("http://{bound}/");
    match token {
        None => {}
        Some((token, TokenSource::Made)) => stderrln!(
            "lockward serve: every request needs this token; open {url}?token={} (it sets a \
             cookie), or send `Authorization: Bearer {}`",
            token.expose(),
            token.expose()
        ),
        Some((_, source)) => stderrln!(
            "lockward serve: every request needs the token from {}; open {url}?token=TOKEN \
             (it sets a cookie), or send `Authorization: Bearer TOKEN`",
            if *source == TokenSource::File {
                "--token-file"
            } else {
                TOKEN_ENV
            }
        ),
    }
    stderrln!("lockward serve: listening on {url}");
}
