//! Wrappers: a helper whose parameter reaches a lock key makes its calls lock sites, in every
//! language the scan reads; declared and default wrappers too; and the near misses stay quiet.

use lockward_scan::{ScanReport, SiteForm};

use crate::support::{Project, brief};

/// `path:line:column function id` for each site made by a wrapper call.
fn wrapper_sites(report: &ScanReport) -> Vec<String> {
    report
        .sites
        .iter()
        .filter_map(|site| match &site.form {
            SiteForm::Wrapper { function, .. } => Some(format!(
                "{}:{}:{} {function} {}",
                site.path, site.line, site.column, site.id
            )),
            _ => None,
        })
        .collect()
}

/// The harbor fixture with these files added.
fn project(files: &[(&str, &str)]) -> ScanReport {
    let project = Project::harbor();
    for (path, text) in files {
        project.write(path, text);
    }
    project.scan()
}

#[test]
fn python_a_helper_that_binds_its_parameter_to_the_sql_makes_its_calls_sites() {
    let report = project(&[
        (
            "services/db/locks.py",
            "def with_lock(conn, lock_id):\n    conn.execute(\"select pg_advisory_lock(%s)\", (lock_id,))\n",
        ),
        (
            "services/jobs/nightly.py",
            "from services.db.locks import with_lock\n\ndef run(conn):\n    with_lock(conn, 4242)\n    with_lock(conn, lock_id=ADVISORY_LOCK_INVOICE_ROLLUP)\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        [
            "services/jobs/nightly.py:4:5 with_lock 4242",
            "services/jobs/nightly.py:5:5 with_lock 1001001",
        ]
    );
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/nightly.py:4 unregistered-id"]
    );
    assert_eq!(
        report.dynamic_keys, 0,
        "the helper's own call is followed to its callers"
    );
}

#[test]
fn python_decorators_and_helpers_of_helpers_across_files_are_followed() {
    let report = project(&[
        (
            "services/db/locking.py",
            "def acquire(cur, key):\n    cur.execute(\"SELECT pg_try_advisory_lock(%s)\", (key,))\n",
        ),
        // No trigger word in these two files: the second pass finds them by the helpers' names.
        (
            "services/jobs/guard.py",
            "from services.db import locking\n\ndef exclusive(job_key):\n    def wrap(fn):\n        def run(cur, *args):\n            locking.acquire(cur, job_key)\n            return fn(cur, *args)\n        return run\n    return wrap\n",
        ),
        (
            "services/reports/monthly.py",
            "from services.jobs.guard import exclusive\n\n@exclusive(4242)\ndef build(cur):\n    pass\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/reports/monthly.py:3:2 exclusive 4242"]
    );
    assert_eq!(
        brief(&report.findings),
        ["services/reports/monthly.py:3 unregistered-id"]
    );
}

#[test]
fn a_call_with_a_key_built_at_run_time_is_a_dynamic_key_showing_the_whole_expression() {
    let report = project(&[(
        "services/db/locker.go",
        "package db\n\ntype Locker struct{ lockID int64 }\n\nfunc (l *Locker) Acquire(ctx context.Context, id int64) error {\n\t_, err := l.db.Exec(ctx, `\n\t\tSELECT pg_advisory_lock($1)`, id)\n\treturn err\n}\n\nfunc (l *Locker) Run(ctx context.Context) error {\n\treturn l.Acquire(ctx, l.lockID)\n}\n",
    )]);
    assert_eq!(
        brief(&report.findings),
        ["services/db/locker.go:12 dynamic-key"]
    );
    assert!(
        report.findings[0].message.contains("`l.lockID`"),
        "{}",
        report.findings[0].message
    );
}

#[test]
fn go_a_method_on_a_receiver_is_followed_to_calls_through_a_variable_of_its_type() {
    let report = project(&[
        (
            "services/locker/locker.go",
            "package locker\n\nfunc (l *Locker) Acquire(ctx context.Context, id int64) error {\n\t_, err := l.db.Exec(ctx, \"SELECT pg_advisory_lock($1)\", id)\n\treturn err\n}\n",
        ),
        (
            "services/jobs/sweep.go",
            "package jobs\n\nimport \"example.com/harbor/services/locker\"\n\nconst sweepLock int64 = 4242\n\nfunc Sweep(ctx context.Context, locker *locker.Locker) {\n\tlocker.Acquire(ctx, sweepLock)\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/jobs/sweep.go:8:9 Acquire 4242"]
    );
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/sweep.go:8 unregistered-id"]
    );
}

#[test]
fn ruby_keyword_parameters_and_module_methods_are_wrappers() {
    let report = project(&[
        (
            "app/lib/lock_helper.rb",
            "module LockHelper\n  def self.take_lock(conn, lock_id:)\n    conn.execute(\"SELECT pg_advisory_lock(#{lock_id})\")\n  end\nend\n",
        ),
        (
            "app/jobs/purge_job.rb",
            "class PurgeJob\n  def perform(conn)\n    LockHelper.take_lock(conn, lock_id: 4242)\n  end\nend\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["app/jobs/purge_job.rb:3:16 take_lock 4242"]
    );
}

#[test]
fn javascript_arrow_functions_and_class_methods_with_values_on_the_next_line() {
    let report = project(&[
        (
            "web/src/db/locks.ts",
            "export const withLock = async (client: Client, key: number) => {\n  await client.query({\n    text: \"SELECT pg_advisory_lock($1)\",\n    values: [key],\n  });\n};\n\nexport class Mutex {\n  async hold(key: number): Promise<void> {\n    await this.client.query(\"SELECT pg_try_advisory_lock($1)\", [key]);\n  }\n}\n",
        ),
        (
            "web/src/jobs/sync.ts",
            "import { withLock, Mutex } from \"../db/locks\";\n\nexport async function sync(client: Client, mutex: Mutex) {\n  await withLock(client, 4242);\n  await mutex.hold(4243);\n  hold(4244);\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        [
            "web/src/jobs/sync.ts:4:9 withLock 4242",
            "web/src/jobs/sync.ts:5:15 hold 4243",
        ],
        "a method counts only as a method call: `hold(4244)` is some other function"
    );
}

#[test]
fn java_and_kotlin_methods_are_wrappers_for_each_other() {
    let report = project(&[
        (
            "svc/src/main/java/com/harbor/LockService.java",
            "package com.harbor;\n\npublic class LockService {\n    public boolean tryLock(final long lockKey) throws SQLException {\n        try (PreparedStatement st = conn.prepareStatement(\"SELECT pg_try_advisory_lock(?)\")) {\n            st.setLong(1, lockKey);\n            return st.execute();\n        }\n    }\n\n    public void withLock(long key) {\n        jdbc.queryForList(\"SELECT pg_advisory_lock(?)\", key);\n    }\n}\n",
        ),
        (
            "svc/src/main/kotlin/com/harbor/Cleanup.kt",
            "package com.harbor\n\nclass Cleanup(private val lockService: LockService) {\n    fun run() {\n        lockService.withLock(4242L)\n    }\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["svc/src/main/kotlin/com/harbor/Cleanup.kt:5:21 withLock 4242"]
    );
}

#[test]
fn rust_functions_and_methods_binding_their_key_are_wrappers() {
    let report = project(&[(
        "crates/harbor-jobs/src/lib.rs",
        "pub async fn hold(conn: &mut PgConnection, key: i64) -> sqlx::Result<()> {\n    sqlx::query(\"SELECT pg_advisory_lock($1)\").bind(key).execute(conn).await?;\n    Ok(())\n}\n\npub async fn nightly(conn: &mut PgConnection) -> sqlx::Result<()> {\n    hold(conn, 4242).await\n}\n",
    )]);
    assert_eq!(
        wrapper_sites(&report),
        ["crates/harbor-jobs/src/lib.rs:7:5 hold 4242"]
    );
}

#[test]
fn declared_and_default_wrappers_need_no_source_and_no_trigger_word() {
    let project = Project::harbor();
    let registry = std::fs::read_to_string(project.path().join("lockward.toml")).expect("read");
    let registry = registry.replace(
        "[scan]\n",
        "[scan]\nwrappers = [{ name = \"Locker.Acquire\", position = 2 }, { name = \"hold\", keyword = \"lock_id\" }]\n",
    );
    project.write("lockward.toml", &registry);
    project.write(
        "services/jobs/sweep.go",
        "package jobs\n\nfunc Sweep(ctx context.Context) {\n\tLocker.Acquire(ctx, 4242)\n\tother.Acquire(ctx, 4243)\n\tpglock.NewLock(ctx, 4244, db)\n}\n",
    );
    project.write(
        "services/jobs/tasks.py",
        "from django_pglocks import advisory_lock\n\nwith advisory_lock(4245):\n    pass\nwith advisory_lock(\"reindex\"):\n    pass\nhold(conn, lock_id=4246)\n",
    );
    let report = project.scan();
    assert_eq!(
        wrapper_sites(&report),
        [
            "services/jobs/sweep.go:4:9 Acquire 4242",
            "services/jobs/sweep.go:6:9 NewLock 4244",
            "services/jobs/tasks.py:3:6 advisory_lock 4245",
            "services/jobs/tasks.py:7:1 hold 4246",
        ],
        "a dotted name requires its receiver; a string key is a name the library hashes, no wrapper site"
    );
    assert_eq!(
        brief(&report.findings),
        [
            "services/jobs/sweep.go:4 unregistered-id",
            "services/jobs/sweep.go:6 unregistered-id",
            "services/jobs/tasks.py:3 unregistered-id",
            "services/jobs/tasks.py:5 unregistered-id",
            "services/jobs/tasks.py:7 unregistered-id",
        ],
        "no note for the string key: its name is a lock like any id, unregistered"
    );
}

#[test]
fn near_misses_are_no_sites() {
    let report = project(&[
        (
            "services/db/locks.py",
            "def lock(conn, key):\n    conn.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n\ndef run(conn):\n    # lock(conn, 4242) in a comment\n    print(\"lock(conn, 4243)\")\n    lock(conn, ADVISORY_LOCK_INVOICE_ROLLUP)\n",
        ),
        // A same-named function elsewhere, in code that does not import the helper.
        (
            "services/cache/store.py",
            "def refresh(cache):\n    cache.lock(5)\n    lock(cache, 6)\n",
        ),
        // The same name in another language.
        (
            "web/src/cache.ts",
            "export function refresh(cache) {\n  lock(cache, 7);\n}\n",
        ),
        // A file of the same directory with a `lock` of its own.
        (
            "services/db/pool.py",
            "def lock(pool, slots):\n    pool.reserve(slots)\n\nlock(pool, 8)\n",
        ),
        // A default wrapper counts only in its library's language.
        (
            "services/jobs/sweep.go",
            "package jobs\n\nfunc sweep() {\n\tadvisory_lock(9)\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/db/locks.py:7:5 lock 1001001"]
    );
    assert_eq!(brief(&report.findings), Vec::<String>::new());
}

#[test]
fn go_sql_held_in_a_constant_is_bound_where_the_helper_passes_it() {
    let report = project(&[
        (
            "services/locker/locker.go",
            "package locker\n\nconst tryLockSQL = `\n\tSELECT pg_try_advisory_lock($1)\n`\n\nfunc (l *Locker) TryLock(ctx context.Context, id int64) (bool, error) {\n\tvar ok bool\n\terr := l.pool.QueryRow(ctx, tryLockSQL, id).Scan(&ok)\n\treturn ok, err\n}\n",
        ),
        (
            "services/jobs/compact.go",
            "package jobs\n\nconst compactLock int64 = 4242\n\nfunc Compact(ctx context.Context, locker *locker.Locker) {\n\tlocker.TryLock(ctx, compactLock)\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/jobs/compact.go:6:9 TryLock 4242"]
    );
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/compact.go:6 unregistered-id"],
        "the SQL's own call is followed to the helper's callers"
    );
}

#[test]
fn python_sql_in_a_module_constant_with_a_literal_bound_at_the_call_is_a_site_there() {
    let report = project(&[(
        "services/jobs/vacuum.py",
        "LOCK_SQL = \"SELECT pg_advisory_lock(%s)\"\n\ndef vacuum(cur):\n    cur.execute(LOCK_SQL, (4242,))\n",
    )]);
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/vacuum.py:4 unregistered-id"]
    );
}

#[test]
fn a_wrapper_no_code_calls_keeps_the_note_on_its_own_lock_call() {
    let report = project(&[(
        "services/db/api.py",
        "def hold(cur, key):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n",
    )]);
    assert_eq!(
        brief(&report.findings),
        ["services/db/api.py:2 dynamic-key"]
    );
    assert_eq!(report.dynamic_keys, 1, "never silently blind");
}

#[test]
fn one_source_in_memory_follows_its_own_wrappers() {
    let registry = crate::support::registry(&crate::support::data("fixtures/harbor"));
    let report = lockward_scan::scan_source(
        &registry,
        "services/jobs/one.rb",
        "def with_lock(conn, id)\n  conn.execute(\"SELECT pg_advisory_lock(#{id})\")\nend\n\nwith_lock(conn, 4242)\n",
    );
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/one.rb:5 unregistered-id"]
    );
}

#[test]
fn a_local_of_the_calling_function_resolves_even_when_other_functions_reuse_its_name() {
    let report = project(&[
        (
            "services/locker/lock.go",
            "package locker\n\ntype Lock struct{ id int64 }\n\nfunc NewLock(ctx context.Context, id int64, db *sql.DB) (Lock, error) {\n\treturn Lock{id: id}, nil\n}\n\nfunc (l *Lock) Lock(ctx context.Context) error {\n\tquery := \"SELECT pg_advisory_lock($1)\"\n\t_, err := l.conn.ExecContext(ctx, query, l.id)\n\treturn err\n}\n",
        ),
        (
            "services/locker/lock_test.go",
            "package locker\n\nfunc TestOne(t *testing.T) {\n\tid := int64(4242)\n\tNewLock(ctx, id, db)\n}\n\nfunc TestTwo(t *testing.T) {\n\tid := int64(4343)\n\tNewLock(ctx, id, db)\n}\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        [
            "services/locker/lock_test.go:5:2 NewLock 4242",
            "services/locker/lock_test.go:10:2 NewLock 4343",
        ]
    );
    assert_eq!(
        report.dynamic_keys, 0,
        "the method's `l.id` is the constructor's id"
    );
}

/// Found by `scripts/fuzz 30 scan_go`: a wrapper's own lock call leaves the file's items once a
/// caller is found, and an expression still to be evaluated over the tree held its definition's
/// place in them by index, so it pointed past the end (a panic) or at another item (its constant
/// silently unresolved).
#[test]
fn a_wrappers_lock_call_leaving_the_items_keeps_later_expressions_with_their_definitions() {
    let report = project(&[
        (
            "services/locker/locker.go",
            "package locker\n\nfunc (l *Locker) Acquire(ctx context.Context, lockNum int64) error {\n\t_, err := l.conn.Exec(ctx, \"SELECT pg_advisory_lock($1)\", lockNum)\n\treturn err\n}\n\nfunc run(ctx context.Context, l *Locker) error {\n\treturn l.Acquire(ctx, AdvisoryLockRollup)\n}\n\nconst AdvisoryLockRollup = AdvisoryLockBase + 1\n",
        ),
        (
            "services/locker/base.go",
            "package locker\n\nconst AdvisoryLockBase int64 = 7_000_100\n",
        ),
    ]);
    let rollup: Vec<(usize, i64)> = report
        .sites
        .iter()
        .filter(|site| site.path == "services/locker/locker.go")
        .map(|site| (site.line, site.id))
        .collect();
    assert_eq!(
        rollup,
        [(9, 7_000_101), (12, 7_000_101)],
        "{:#?}",
        report.sites
    );
    assert!(
        !brief(&report.findings)
            .iter()
            .any(|f| f.contains("unresolved-constant")),
        "{:?}",
        brief(&report.findings)
    );
}

/// Wrapper inference that stopped after one round still found a helper of a helper; a chain of
/// three helpers needs every round until nothing new is found.
#[test]
fn a_chain_of_three_helpers_is_followed_to_the_call_that_gives_the_key() {
    let report = project(&[
        (
            "services/db/locking.py",
            "def acquire(cur, key):\n    cur.execute(\"SELECT pg_try_advisory_lock(%s)\", (key,))\n",
        ),
        (
            "services/db/guarded.py",
            "from services.db import locking\n\ndef guarded(cur, guard_key):\n    return locking.acquire(cur, guard_key)\n",
        ),
        (
            "services/jobs/exclusive.py",
            "from services.db.guarded import guarded\n\ndef exclusive(cur, job_key):\n    return guarded(cur, job_key)\n",
        ),
        (
            "services/reports/monthly.py",
            "from services.jobs.exclusive import exclusive\n\ndef build(cur):\n    exclusive(cur, 4243)\n",
        ),
    ]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/reports/monthly.py:4:5 exclusive 4243"]
    );
    assert_eq!(
        brief(&report.findings),
        ["services/reports/monthly.py:4 unregistered-id"]
    );
}

#[test]
fn a_typed_async_arrow_is_no_function_named_async() {
    // `async (key: number): Promise<void> => {` was read as a method `async` with a return
    // type: a wrapper whose calls were every `async (..)` of the file (a dynamic-key note at
    // each), and a second pass that lexed every file of the tree holding the word.
    let report = project(&[(
        "web/src/jobs/reap.ts",
        "export const reap = (client: Client) =>\n  withTx(client, async (key: number): Promise<void> => {\n    await client.query(\"SELECT pg_advisory_lock($1)\", [key]);\n  });\n\nexport const saveAll = (ids: number[]) =>\n  Promise.all(ids.map(async (id: number) => {\n    await save(id);\n  }));\n",
    )]);
    let notes: Vec<String> = brief(&report.findings)
        .into_iter()
        .filter(|finding| finding.ends_with("dynamic-key"))
        .collect();
    assert_eq!(notes, ["web/src/jobs/reap.ts:3 dynamic-key"]);
}

#[test]
fn a_field_several_lock_calls_read_is_one_site_at_each_literal_that_writes_it() {
    let report = project(&[(
        "services/store/src/locks.rs",
        "struct Family {\n    id: i32,\n}\n\nimpl Family {\n    fn lock(&self, shard: i32) -> String {\n        format!(\"select pg_advisory_lock({}, {shard})\", self.id)\n    }\n\n    fn unlock(&self, shard: i32) -> String {\n        format!(\"select pg_advisory_unlock({}, {shard})\", self.id)\n    }\n}\n\nconst COPY: Family = Family { id: 7_063_111 };\nconst PRUNE: Family = Family { id: 7_063_112 };\n",
    )]);
    let sites: Vec<String> = report
        .sites
        .iter()
        .filter(|s| s.path == "services/store/src/locks.rs")
        .map(|s| format!("{}:{} {}", s.line, s.column, s.id))
        .collect();
    assert_eq!(sites, ["15:35 7063111", "16:36 7063112"]);
    assert_eq!(
        brief(&report.findings),
        [
            "services/store/src/locks.rs:15 unregistered-id",
            "services/store/src/locks.rs:16 unregistered-id",
        ]
    );
    assert_eq!(
        report.dynamic_keys, 0,
        "`self.id` is written by the literals"
    );
}

#[test]
fn a_field_no_literal_of_the_file_writes_stays_a_dynamic_key() {
    let report = project(&[(
        "services/worker/worker.go",
        "package worker\n\ntype Worker struct{ lockID int64 }\n\nfunc (w *Worker) Run(ctx context.Context) error {\n\t_, err := w.conn.ExecContext(ctx, \"SELECT pg_advisory_lock($1)\", w.lockID)\n\treturn err\n}\n\nvar other = Task{lockID: 7_063_113}\n",
    )]);
    assert_eq!(
        report.dynamic_keys, 1,
        "another type's literal writes no Worker"
    );
    assert!(report.sites.iter().all(|s| s.id != 7_063_113));
}

#[test]
fn sql_held_in_a_name_binds_only_where_the_name_is_passed() {
    let report = project(&[
        (
            "services/locker/lock.ts",
            "export const lockQuery = `SELECT pg_advisory_lock($1)`\n// A name not named for its lock is not looked for in other files (a pass over the tree).\nexport const q = `SELECT pg_advisory_unlock($1)`\n",
        ),
        (
            "services/locker/store.ts",
            "import { lockQuery } from './lock'\n\nexport class Store {\n  lockQuery(key: number, sql: string) {\n    return this.pool.lockQuery(key, sql)\n  }\n\n  run() {\n    return this.lockQuery(7_065_502, 'select 1')\n  }\n\n  lock(db: Db) {\n    return db.query(lockQuery, [7_065_501])\n  }\n\n  unlock(db: Db) {\n    return db.query(q, [7_065_503])\n  }\n}\n",
        ),
    ]);
    assert_eq!(
        brief(&report.findings),
        [
            "services/locker/lock.ts:3 dynamic-key",
            "services/locker/store.ts:13 unregistered-id"
        ],
        "a call of a method named like the name is no use of the SQL"
    );
}

#[test]
fn sql_held_in_a_functions_local_is_bound_by_no_other_file() {
    let report = project(&[
        (
            "services/locker/lock.ts",
            "export async function lock(db: Db, hash: number, timeout: number) {\n  const lockQuery = `\n    SELECT pg_advisory_xact_lock($1), set_config('lock_timeout', $2, true)\n  `\n  try {\n    await db.query(\n      {\n        text: lockQuery,\n        values: [hash, `${timeout}ms`],\n      },\n    )\n  } catch (e) {\n    throw mapError(e, lockQuery)\n  }\n}\n",
        ),
        (
            "services/locker/other.ts",
            "export function run() {\n  return log(lockQuery, 42)\n}\n",
        ),
    ]);
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.path != "services/locker/other.ts"),
        "{:?}",
        brief(&report.findings)
    );
}

#[test]
fn rust_a_helper_returning_nested_type_arguments_is_a_wrapper() {
    // `>>` closes two type arguments at once (lakekeeper's `PostgresAdvisoryLock::try_acquire`).
    let report = project(&[(
        "services/store/src/lock.rs",
        "impl PostgresAdvisoryLock {\n    pub async fn try_acquire(state: &State, key: i64) -> anyhow::Result<Option<Self>> {\n        let acquired: bool = sqlx::query_scalar(\"SELECT pg_try_advisory_lock($1)\")\n            .bind(key)\n            .fetch_one(&mut *conn)\n            .await?;\n        Ok(None)\n    }\n}\n\nasync fn reconcile(state: &State) {\n    let lock = PostgresAdvisoryLock::try_acquire(&state, 7_065_701).await;\n}\n",
    )]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/store/src/lock.rs:12:38 try_acquire 7065701"]
    );
}

#[test]
fn a_helper_calling_a_wrapper_with_a_literal_is_followed_where_its_calls_surely_run_it() {
    // A helper that takes no key and locks a fixed one through another (squat-collective/rat's
    // `postgres.Migrate(ctx, pool)` over `acquireMigrationLock`, learningequality/morango's
    // `_begin_transaction`): each call of it is a site. Named for locking, it is followed as
    // any helper is; named otherwise (`nightly`, `run`), only where the call surely runs it.
    let report = project(&[
        (
            "services/jobs/locking.py",
            "def with_lock(cur, key):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n\n\ndef nightly(cur):\n    with_lock(cur, 7_065_801)\n\n\ndef lock_reports(cur):\n    with_lock(cur, 7_065_802)\n\n\ndef weekly(cur):\n    nightly(cur)\n\n\nclass Job:\n    def rebuild(self, cur):\n        with_lock(cur, 7_065_803)\n\n    def again(self, cur):\n        self.rebuild(cur)\n",
        ),
        (
            "services/jobs/run.py",
            "from services.jobs.locking import nightly, lock_reports\n\n\ndef main(cur, job):\n    nightly(cur)\n    lock_reports(cur)\n    job.rebuild(cur)\n",
        ),
        (
            "services/other/tasks.py",
            "def start(cur, pool):\n    pool.nightly(cur)\n    nightly(cur)\n",
        ),
        // Another `weekly`, which the scan knows (it locks): `report.py`'s call of `weekly`
        // is no longer surely `locking.py`'s.
        (
            "services/legacy/locking.py",
            "def weekly(cur, key):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n",
        ),
        (
            "services/jobs/report.py",
            "# The weekly advisory report.\nfrom services.jobs.locking import weekly\n\n\ndef main(cur):\n    weekly(cur)\n",
        ),
    ]);
    let sites: Vec<String> = wrapper_sites(&report)
        .into_iter()
        .filter(|s| s.starts_with("services/"))
        .collect();
    assert_eq!(
        sites,
        [
            "services/jobs/locking.py:6:5 with_lock 7065801",
            "services/jobs/locking.py:10:5 with_lock 7065802",
            "services/jobs/locking.py:14:5 nightly 7065801",
            "services/jobs/locking.py:19:9 with_lock 7065803",
            "services/jobs/locking.py:22:14 rebuild 7065803",
            "services/jobs/run.py:5:5 nightly 7065801",
            "services/jobs/run.py:6:5 lock_reports 7065802",
        ],
        "a helper named for locking is followed to every call; `nightly` to its own file's and an importer's calls, a method `rebuild` to `self.rebuild` only; not `job.rebuild` on a receiver of unknown type, not `pool.nightly` nor a bare `nightly` of a file that does not import it, nor an importer's `weekly` when another file defines one"
    );
}

#[test]
fn a_tuple_key_spread_over_lines_with_a_trailing_comma_is_a_pair() {
    let report = project(&[(
        "services/jobs/mirror.py",
        "from django_pglocks import advisory_lock\n\n\ndef refresh(archive):\n    with advisory_lock(\n        (\n            7_065_901,\n            archive.id,\n        ),\n        wait=False,\n    ):\n        pass\n",
    )]);
    assert_eq!(
        wrapper_sites(&report),
        ["services/jobs/mirror.py:6:9 advisory_lock 7065901"]
    );
}
