//! Who holds an advisory lock: `pg_locks` joined with `pg_stat_activity`.

use std::time::Duration;

use lockward_registry::AdvisoryKey;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use crate::Error;

/// A session holding an advisory lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The holding backend's process id (`pg_backend_pid()` on its side).
    pub pid: i32,
    /// Its `application_name` (empty when it set none).
    pub application_name: String,
    /// Its client address, when it connected over TCP.
    pub client_addr: Option<String>,
    /// How long the session has sent nothing, by the server's clock: the time since its last
    /// statement ended, while it is idle (in a transaction or not); `None` while it runs a
    /// statement, or when the role may not see it. A lockward worker's lock session probes its
    /// connection every probe interval, so a holder idle for several periods is one whose client
    /// went quiet.
    pub idle_for: Option<Duration>,
}

/// The sessions holding `key` in the current database (at most one for an exclusive lock).
///
/// # Cancel safety
///
/// Cancel safe: a read-only query.
pub async fn holders(client: &Client, key: AdvisoryKey) -> Result<Vec<Holder>, Error> {
    let (classid, objid, objsubid) = pg_locks_columns(key);
    // The unnamed statement, not a named one prepared per connection: see `crate::sql`.
    let rows = client
        .query_typed(
            "SELECT a.pid, coalesce(a.application_name, ''), host(a.client_addr), \
                    CASE WHEN a.state LIKE 'idle%' \
                         THEN extract(epoch FROM clock_timestamp() - a.state_change)::float8 END \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted \
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND l.classid::int8 = $1 AND l.objid::int8 = $2 AND l.objsubid = $3 \
             ORDER BY a.pid",
            &[
                (&classid, Type::INT8),
                (&objid, Type::INT8),
                (&objsubid, Type::INT2),
            ],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| Holder {
            pid: row.get(0),
            application_name: row.get(1),
            client_addr: row.get(2),
            idle_for: row
                .get::<_, Option<f64>>(3)
                .and_then(|seconds| Duration::try_from_secs_f64(seconds.max(0.0)).ok()),
        })
        .collect())
}

/// The `pg_locks` columns that show `key`: `classid`, `objid` (unsigned, as `int8`), `objsubid`.
pub(crate) fn pg_locks_columns(key: AdvisoryKey) -> (i64, i64, i16) {
    match key {
        AdvisoryKey::Bigint(k) => ((k >> 32) & 0xFFFF_FFFF, k & 0xFFFF_FFFF, 1),
        AdvisoryKey::Pair(a, b) => (
            i64::from(a.cast_unsigned()),
            i64::from(b.cast_unsigned()),
            2,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_round_trip_through_the_registry_decoder() {
        for key in [
            AdvisoryKey::Bigint(1_001_001),
            AdvisoryKey::Bigint(-5),
            AdvisoryKey::Bigint((7_i64 << 32) | 9),
            AdvisoryKey::Pair(1_001_004, 3),
            AdvisoryKey::Pair(-1, -2),
        ] {
            let (classid, objid, objsubid) = pg_locks_columns(key);
            let decoded = AdvisoryKey::from_pg_locks(
                u32::try_from(classid).unwrap(),
                u32::try_from(objid).unwrap(),
                objsubid,
            );
            assert_eq!(decoded, Some(key));
        }
    }
}
