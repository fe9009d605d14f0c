use std::time::{Duration, SystemTime};

use tokio_postgres::Client;
use tokio_postgres::types::Type;

use crate::Identity;
use crate::timestamp::micros;

/// Fills the ledger (creating it if need be) with `project`'s workers' rows: for each
/// `(lock_key, hosts)`, `cycles`
/// consecutive `done` cycles of `period`, the last one ending at or before `end` (cycles are
/// aligned to the wall clock, as a worker's), led by `hosts` in turn. Each row has a fencing
/// token from the ledger's sequence, an identity naming its host as `application_name`, a start
/// 5 ms after its boundary and an end a tenth of the period after that.
///
/// One `INSERT ... SELECT FROM generate_series` per lock, so 50 locks × 1,440 cycles take well
/// under a second.
///
/// # Panics
///
/// When a lock has no hosts, the period is not a whole number of milliseconds, or PostgreSQL
/// refuses the rows (a cycle already has a row, ...): this is a test helper.
///
/// # Cancel safety
///
/// Not cancel safe: cancelled between two locks' inserts, the ledger holds only some of them.
pub async fn seed_ledger(
    client: &Client,
    project: &str,
    locks: &[(String, Vec<String>)],
    period: Duration,
    cycles: usize,
    end: SystemTime,
) {
    crate::ledger::ensure(client)
        .await
        .unwrap_or_else(|error| panic!("seed_ledger: cannot create the ledger: {error}"));
    let period_ms = crate::ledger::period_ms(period)
        .unwrap_or_else(|| panic!("seed_ledger: the period {period:?} is not whole milliseconds"));
    let period_us = period_ms * 1000;
    let last_end = micros(end).div_euclid(period_us) * period_us;
    let cycles = i64::try_from(cycles).expect("seed_ledger: a cycle count that fits an int8");
    let first_start = last_end - cycles * period_us;
    for (pid, (lock_key, hosts)) in (1_000..).zip(locks) {
        assert!(
            !hosts.is_empty(),
            "seed_ledger: lock {lock_key} has no hosts"
        );
        let names: Vec<String> = hosts
            .iter()
            .map(|host| {
                Identity::new(project, format!("LOCK_{lock_key}"), None, pid, host.clone())
                    .application_name()
                    .unwrap_or_else(|| format!("seed {pid}@{host}"))
            })
            .collect();
        let pid = i32::try_from(pid).expect("a small pid");
        client
            .query_typed(
                "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, \
                                              host, pid, started_at, finished_at, outcome, period_ms) \
                 SELECT $1, s.at, nextval('lockward_fencing_token'), \
                        $3[1 + s.i % cardinality($3)], $2[1 + s.i % cardinality($2)], $4, \
                        s.at + interval '5 milliseconds', \
                        s.at + interval '5 milliseconds' + make_interval(secs => $5 / 10000.0), \
                        'done', $5 \
                 FROM (SELECT i, to_timestamp(($6 + i * $5 * 1000) / 1000000.0) AS at \
                       FROM generate_series(0, $7 - 1) i) s",
                &[
                    (lock_key, Type::TEXT),
                    (hosts, Type::TEXT_ARRAY),
                    (&names, Type::TEXT_ARRAY),
                    (&pid, Type::INT4),
                    (&period_ms, Type::INT8),
                    (&first_start, Type::INT8),
                    (&cycles, Type::INT8),
                ],
            )
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "seed_ledger: inserting {cycles} cycles of {lock_key}: {}",
                    crate::error::describe(&error)
                )
            });
    }
}
