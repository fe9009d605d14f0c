//! lockward-pg against real PostgreSQL: election, loss, the ledger, collisions, TLS.

mod builder;
mod collision;
mod election;
mod errors;
mod faults;
mod history;
mod ledger;
mod live;
mod observed;
mod partition;
mod pooler;
mod process;
mod support;
mod tls;
mod transaction;
