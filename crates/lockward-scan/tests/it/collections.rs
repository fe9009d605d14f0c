//! Ids held in collections and enums, constant expressions, JavaScript's unsafe integers and
//! configuration fields that are not ids (issue 9, item 3).

use lockward_registry::Registry;
use lockward_scan::{ScanReport, SiteForm, scan_source};

use crate::support::brief;

/// A registry with `entries` (TOML `[[lock]]` tables) and core's constants in `locks.py`.
fn registry(entries: &str) -> Registry {
    let text = format!(
        "[project]\nname = \"t\"\n[core]\nconstants = \"locks.py\"\n\
         block = {{ start = 7_000_000, end = 7_999_999 }}\n{entries}"
    );
    match lockward_registry::parse("lockward.toml", &text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => panic!("invalid registry: {findings:#?}"),
    }
}

/// `line name id` for each definition site.
fn definitions(report: &ScanReport) -> Vec<(usize, String, i64)> {
    report
        .sites
        .iter()
        .filter_map(|site| match &site.form {
            SiteForm::Definition { constant } => Some((site.line, constant.clone(), site.id)),
            _ => None,
        })
        .collect()
}

/// `line constant id` for each call or keyword site.
fn uses(report: &ScanReport) -> Vec<(usize, Option<String>, i64)> {
    report
        .sites
        .iter()
        .filter_map(|site| match &site.form {
            SiteForm::Call { constant, .. }
            | SiteForm::Keyword { constant, .. }
            | SiteForm::Wrapper { constant, .. } => Some((site.line, constant.clone(), site.id)),
            SiteForm::Definition { .. } | SiteForm::Named { .. } => None,
        })
        .collect()
}

fn defs(expected: &[(usize, &str, i64)]) -> Vec<(usize, String, i64)> {
    expected
        .iter()
        .map(|&(line, name, id)| (line, name.to_owned(), id))
        .collect()
}

fn scan(path: &str, text: &str) -> ScanReport {
    scan_source(&registry(""), path, text)
}

#[test]
fn a_python_dict_of_ids_under_a_matching_name_is_one_definition_per_entry() {
    let text = "\
ADVISORY_LOCKS = {
    \"reindex\": 7_000_100,
    'vacuum': 7_000_101,  # a comment
    \"derived\": 7_000_100 + 2,
}
";
    let report = scan("jobs.py", text);
    assert_eq!(
        definitions(&report),
        defs(&[
            (2, "ADVISORY_LOCKS[\"reindex\"]", 7_000_100),
            (3, "ADVISORY_LOCKS[\"vacuum\"]", 7_000_101),
            (4, "ADVISORY_LOCKS[\"derived\"]", 7_000_102),
        ])
    );
    assert_eq!(
        brief(&report.findings),
        [
            "jobs.py:2 unregistered-id",
            "jobs.py:3 unregistered-id",
            "jobs.py:4 unregistered-id"
        ]
    );
    assert_eq!(report.sites[0].column, 5, "at the entry's key");
}

#[test]
fn a_registered_member_checks_clean_and_its_uses_resolve_whatever_the_quotes() {
    let registry = registry(
        "[[lock]]\nid = 7_000_100\nconstant = 'ADVISORY_LOCKS[\"reindex\"]'\nworker = \"reindex\"\n\
         defined_in = [\"jobs.py\"]\n",
    );
    let text = "\
ADVISORY_LOCKS = {\"reindex\": 7_000_100}

def run(cur):
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (ADVISORY_LOCKS['reindex'],))
    cur.execute(\"SELECT pg_advisory_unlock(%s)\", (ADVISORY_LOCKS[\"reindex\"],))
";
    let report = scan_source(&registry, "jobs.py", text);
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    let member = Some("ADVISORY_LOCKS[\"reindex\"]".to_owned());
    assert_eq!(
        uses(&report),
        [(4, member.clone(), 7_000_100), (5, member, 7_000_100)]
    );
}

#[test]
fn a_dict_under_another_name_counts_only_when_a_lock_call_uses_it() {
    let used = "\
LOCKS = {\"reindex\": 7_000_100, \"vacuum\": 7_000_101}
TIMEOUTS = {\"reindex\": 30}

def run(cur):
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (LOCKS[\"reindex\"],))
";
    let report = scan("jobs.py", used);
    assert_eq!(
        definitions(&report),
        defs(&[
            (1, "LOCKS[\"reindex\"]", 7_000_100),
            (1, "LOCKS[\"vacuum\"]", 7_000_101)
        ]),
        "one entry reaches a lock key: the dict is one of ids, and the timeouts are not"
    );
    assert_eq!(
        brief(&report.findings),
        ["jobs.py:1 unregistered-id", "jobs.py:1 unregistered-id"]
    );
    let unused = "LOCKS = {\"reindex\": 7_000_100}\nTIMEOUTS = {\"advisory\": 30}\n";
    assert!(scan("jobs.py", unused).sites.is_empty());
}

#[test]
fn a_dict_in_a_comment_or_a_docstring_is_no_definition() {
    let text = "\
def f():
    \"\"\"Keeps ADVISORY_LOCKS = {\"reindex\": 7_000_100} in mind.\"\"\"
    # ADVISORY_LOCKS = {\"vacuum\": 7_000_101}
    return 1
";
    let report = scan("jobs.py", text);
    assert!(report.sites.is_empty(), "{:?}", report.sites);
    assert!(report.findings.is_empty());
}

#[test]
fn python_enums_count_values_and_auto() {
    let text = "\
import enum

class AdvisoryLocks(enum.IntEnum):
    REINDEX = 7_000_100
    VACUUM = enum.auto()
    EXPORT = auto()

    def describe(self):
        return self.name

class Colour(enum.Enum):
    RED = 1

class Counted(IntEnum):
    FIRST = auto()
    SECOND = auto()

def run(cur):
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (Counted.SECOND.value,))
";
    let report = scan("jobs.py", text);
    assert_eq!(
        definitions(&report),
        defs(&[
            (4, "AdvisoryLocks.REINDEX", 7_000_100),
            (5, "AdvisoryLocks.VACUUM", 7_000_101),
            (6, "AdvisoryLocks.EXPORT", 7_000_102),
            (15, "Counted.FIRST", 1),
            (16, "Counted.SECOND", 2),
        ]),
        "`Colour` has no lock use and no matching name"
    );
    assert_eq!(uses(&report), [(19, Some("Counted.SECOND".to_owned()), 2)]);
}

#[test]
fn enums_of_java_kotlin_typescript_and_rust_count_their_explicit_values() {
    let java = "\
enum AdvisoryLocks {
    @Deprecated REINDEX(7_000_100L, \"reindex\"),
    VACUUM(7_000_101L);
    private final long id;
    AdvisoryLocks(long id, String why) { this.id = id; }
}
";
    assert_eq!(
        definitions(&scan("Locks.java", java)),
        defs(&[
            (2, "AdvisoryLocks.REINDEX", 7_000_100),
            (3, "AdvisoryLocks.VACUUM", 7_000_101)
        ])
    );
    let kotlin = "enum class AdvisoryLocks(val id: Long) {\n    REINDEX(7_000_100L),\n    VACUUM(7_000_101L)\n}\n";
    assert_eq!(
        definitions(&scan("Locks.kt", kotlin)),
        defs(&[
            (2, "AdvisoryLocks.REINDEX", 7_000_100),
            (3, "AdvisoryLocks.VACUUM", 7_000_101)
        ])
    );
    let typescript =
        "export enum AdvisoryLocks {\n  Ordinal,\n  Reindex = 7_000_100,\n  Vacuum,\n}\n";
    assert_eq!(
        definitions(&scan("locks.ts", typescript)),
        defs(&[
            (3, "AdvisoryLocks.Reindex", 7_000_100),
            (4, "AdvisoryLocks.Vacuum", 7_000_101)
        ]),
        "an ordinal before any value is not an id"
    );
    let rust = "\
#[repr(i64)]
pub enum Locks {
    Reindex = 7_000_100,
    #[allow(dead_code)]
    Vacuum,
}

fn run() -> String {
    format!(\"SELECT pg_advisory_lock({})\", Locks::Vacuum as i64)
}
";
    let report = scan("locks.rs", rust);
    assert_eq!(
        definitions(&report),
        defs(&[
            (3, "Locks::Reindex", 7_000_100),
            (5, "Locks::Vacuum", 7_000_101)
        ]),
        "`Locks` matches no pattern, but a lock call uses one of its members"
    );
}

#[test]
fn ruby_hashes_javascript_objects_and_go_kotlin_java_maps_are_collections() {
    let ruby = "ADVISORY_LOCKS = {\n  reindex: 7_000_100,\n  :vacuum => 7_000_101,\n  \"export\" => 7_000_102,\n}.freeze\n";
    assert_eq!(
        definitions(&scan("locks.rb", ruby)),
        defs(&[
            (2, "ADVISORY_LOCKS[:reindex]", 7_000_100),
            (3, "ADVISORY_LOCKS[:vacuum]", 7_000_101),
            (4, "ADVISORY_LOCKS[\"export\"]", 7_000_102),
        ])
    );
    let js = "export const advisoryLocks = Object.freeze({\n  reindex: 7_000_100,\n  'vacuum': 7_000_101,\n  ...defaults,\n});\n";
    assert_eq!(
        definitions(&scan("locks.js", js)),
        defs(&[
            (2, "advisoryLocks[\"reindex\"]", 7_000_100),
            (3, "advisoryLocks[\"vacuum\"]", 7_000_101),
        ])
    );
    let go =
        "package locks\n\nvar AdvisoryLocks = map[string]int64{\n\t\"reindex\": 7_000_100,\n}\n";
    assert_eq!(
        definitions(&scan("locks.go", go)),
        defs(&[(4, "AdvisoryLocks[\"reindex\"]", 7_000_100)])
    );
    let kotlin = "val ADVISORY_LOCKS = mapOf(\n    \"reindex\" to 7_000_100L,\n)\n";
    assert_eq!(
        definitions(&scan("Locks.kt", kotlin)),
        defs(&[(2, "ADVISORY_LOCKS[\"reindex\"]", 7_000_100)])
    );
    let java = "static final Map<String, Long> ADVISORY_LOCKS = Map.of(\n    \"reindex\", 7_000_100L,\n    \"vacuum\", 7_000_101L);\n";
    assert_eq!(
        definitions(&scan("Locks.java", java)),
        defs(&[
            (2, "ADVISORY_LOCKS[\"reindex\"]", 7_000_100),
            (3, "ADVISORY_LOCKS[\"vacuum\"]", 7_000_101),
        ])
    );
}

#[test]
fn javascript_member_uses_resolve_through_dots_and_subscripts() {
    let registry = registry(
        "[[lock]]\nid = 7_000_100\nconstant = 'LOCKS[\"reindex\"]'\nworker = \"reindex\"\n\
         defined_in = [\"locks.ts\"]\n",
    );
    let text = "\
const LOCKS = { reindex: 7_000_100 };
await db.query('SELECT pg_advisory_lock($1)', [LOCKS.reindex]);
await db.query('SELECT pg_advisory_unlock($1)', [LOCKS['reindex']]);
";
    let report = scan_source(&registry, "locks.ts", text);
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    let member = Some("LOCKS[\"reindex\"]".to_owned());
    assert_eq!(
        uses(&report),
        [(2, member.clone(), 7_000_100), (3, member, 7_000_100)]
    );
}

#[test]
fn go_iota_blocks_count_per_spec_with_skips_and_repetition() {
    let text = "\
package locks

const (
\tAdvisoryLockBase int64 = iota + 7_000_100
\tAdvisoryLockNext
\t_
\tAdvisoryLockAfterSkip
\tAdvisoryLockA, AdvisoryLockB = 7_000_200, 7_000_300
)
";
    assert_eq!(
        definitions(&scan("locks.go", text)),
        defs(&[
            (4, "AdvisoryLockBase", 7_000_100),
            (5, "AdvisoryLockNext", 7_000_101),
            (7, "AdvisoryLockAfterSkip", 7_000_103),
            (8, "AdvisoryLockA", 7_000_200),
            (8, "AdvisoryLockB", 7_000_300),
        ])
    );
}

#[test]
fn typed_go_declarations_in_var_and_const_blocks_resolve_at_a_lock_call() {
    let text = "\
package jobs

var (
\tlockID, otherID int64 = 7_000_100, 7_000_101
)

const (
\treportLockID int64 = 7_000_102
)

func run(db *sql.DB) {
\tdb.Exec(\"SELECT pg_advisory_lock($1)\", otherID)
\tdb.Exec(\"SELECT pg_advisory_lock($1)\", reportLockID)
}
";
    let report = scan("jobs.go", text);
    assert_eq!(
        uses(&report),
        [
            (12, Some("otherID".to_owned()), 7_000_101),
            (13, Some("reportLockID".to_owned()), 7_000_102)
        ]
    );
    assert_eq!(report.dynamic_keys, 0);
}

#[test]
fn constant_expressions_evaluate_over_literals_and_other_constants() {
    let text = "\
BASE = 7_000_000
ADVISORY_LOCK_REINDEX = BASE + 100
ADVISORY_LOCK_WIDE = (0x4C << 32) | 7
ADVISORY_LOCK_SHIFTED = 1 << 40
ADVISORY_LOCK_NEGATIVE = -5
ADVISORY_LOCK_COMPUTED = compute(7)
ADVISORY_LOCK_TOO_BIG = 1 << 63
";
    assert_eq!(
        definitions(&scan("jobs.py", text)),
        defs(&[
            (2, "ADVISORY_LOCK_REINDEX", 7_000_100),
            (3, "ADVISORY_LOCK_WIDE", (0x4C << 32) | 7),
            (4, "ADVISORY_LOCK_SHIFTED", 1 << 40),
            (5, "ADVISORY_LOCK_NEGATIVE", -5),
        ]),
        "a call and an overflow are unresolved, not a wrong value"
    );
}

#[test]
fn javascript_bitwise_operators_work_on_32_bits_and_the_scan_says_so() {
    // In JavaScript `(0x4C << 32) | 7` is 79: the shift count is taken modulo 32.
    let text = "const ADVISORY_LOCK_WIDE = (0x4C << 32) | 7;\nconst ADVISORY_LOCK_BIG = (0x4Cn << 32n) | 7n;\n";
    assert_eq!(
        definitions(&scan("locks.js", text)),
        defs(&[
            (1, "ADVISORY_LOCK_WIDE", 79),
            (2, "ADVISORY_LOCK_BIG", (0x4C << 32) | 7)
        ])
    );
}

#[test]
fn a_javascript_number_beyond_2_53_is_an_error_with_the_value_that_runs_and_sql_text_is_exact() {
    let text = "\
export const ADVISORY_LOCK_HUGE = 9007199254740993;
export const ADVISORY_LOCK_BIGINT = 9007199254740993n;
await db.query('SELECT pg_advisory_lock(9007199254740995)');
";
    let report = scan("locks.ts", text);
    let unsafe_findings: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.code.as_str() == "unsafe-js-integer")
        .collect();
    // Issue 17: the SQL text's literal is PostgreSQL's to parse, exactly; it was flagged and
    // reported as the double's value.
    assert_eq!(
        unsafe_findings.iter().map(|f| f.line()).collect::<Vec<_>>(),
        [Some(1)],
        "the BigInt and the SQL text's literal are exact"
    );
    assert_eq!(
        unsafe_findings[0].message,
        "`9007199254740993` is beyond JavaScript's Number.MAX_SAFE_INTEGER (2^53 - 1): the code runs with 9007199254740992, not the id 9007199254740993 written here"
    );
    assert_eq!(
        unsafe_findings[0].severity,
        lockward_registry::Severity::Error
    );
    let ids: Vec<(usize, i64)> = report.sites.iter().map(|s| (s.line, s.id)).collect();
    assert_eq!(
        ids,
        [
            (1, 9_007_199_254_740_992),
            (2, 9_007_199_254_740_993),
            (3, 9_007_199_254_740_995)
        ],
        "each site is the lock the code takes"
    );
}

#[test]
fn a_field_of_a_config_struct_literal_is_not_an_id() {
    let text = "\
package jobs

func setup() {
\tcfg := river.Config{AdvisoryLockPrefix: 123_456, Workers: w}
\tother := &pgx.Options{
\t\tAdvisoryLockPrefix: 654_321,
\t}
}
";
    let report = scan("jobs.go", text);
    assert!(report.sites.is_empty(), "{:?}", report.sites);
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    let python = "client = Client(advisory_lock_prefix=123_456)\nclient = Client({\"x\": 1}, {advisoryLockPrefix: 5})\n";
    assert!(scan("jobs.py", python).sites.is_empty());
    // A configured keyword still counts inside a struct literal.
    let keyword = "package jobs\n\nvar j = Job{AdvisoryLockID: 7_000_100}\n";
    assert_eq!(uses(&scan("jobs.go", keyword)), [(3, None, 7_000_100)]);
}

#[test]
fn a_registered_member_counts_even_where_no_lock_call_names_it() {
    let registry = registry(
        "[[lock]]\nid = 7_000_100\nconstant = \"Locks.REINDEX\"\nworker = \"reindex\"\n\
         defined_in = [\"jobs.py\"]\n",
    );
    let text = "class Locks(IntEnum):\n    REINDEX = 7_000_100\n    VACUUM = 7_000_101\n";
    let report = scan_source(&registry, "jobs.py", text);
    assert_eq!(
        definitions(&report),
        defs(&[
            (2, "Locks.REINDEX", 7_000_100),
            (3, "Locks.VACUUM", 7_000_101)
        ])
    );
    assert_eq!(
        brief(&report.findings),
        ["jobs.py:3 unregistered-id"],
        "the registry names one member: the enum is one of ids"
    );
}

#[test]
fn expressions_resolve_across_files_and_a_cycle_across_files_stays_unresolved() {
    let project = crate::support::Project::harbor();
    project
        .write(
            "services/jobs/base.py",
            "ADVISORY_LOCK_JOBS_BASE = 7_000_000\nADVISORY_LOCK_P = ADVISORY_LOCK_Q + 1\n",
        )
        .write(
            "services/jobs/next.py",
            "ADVISORY_LOCK_JOBS_NEXT = ADVISORY_LOCK_JOBS_BASE + 5\n\
             ADVISORY_LOCK_JOBS_LAST = ADVISORY_LOCK_JOBS_NEXT << 1\n\
             ADVISORY_LOCK_Q = ADVISORY_LOCK_P - 1\n",
        );
    let report = project.scan();
    let found: Vec<(String, usize, i64)> = report
        .sites
        .iter()
        .filter(|site| site.path.starts_with("services/jobs/"))
        .map(|site| (site.path.clone(), site.line, site.id))
        .collect();
    assert_eq!(
        found,
        [
            ("services/jobs/next.py".to_owned(), 1, 7_000_005),
            ("services/jobs/next.py".to_owned(), 2, 14_000_010),
        ]
    );
    // The base the others are counted from, which no lock takes, is no id of its own.
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.code.as_str() == "not-a-lock-key"
                && f.path == "services/jobs/base.py"
                && f.line() == Some(1)),
        "{:#?}",
        report.findings
    );
}

#[test]
fn an_enum_member_named_like_a_pattern_constant_is_that_constant() {
    let registry = registry(
        "[[lock]]\nid = 7_000_100\nconstant = \"ADVISORY_LOCK_REINDEX\"\nworker = \"reindex\"\n\
         defined_in = [\"jobs.py\"]\n",
    );
    let text = "\
class Locks(IntEnum):
    ADVISORY_LOCK_REINDEX = 7_000_100

def run(cur):
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (Locks.ADVISORY_LOCK_REINDEX.value,))
";
    let report = scan_source(&registry, "jobs.py", text);
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(
        definitions(&report),
        defs(&[(2, "ADVISORY_LOCK_REINDEX", 7_000_100)])
    );
    assert_eq!(
        uses(&report),
        [(5, Some("ADVISORY_LOCK_REINDEX".to_owned()), 7_000_100)]
    );
}

#[test]
fn entries_that_hold_no_integer_are_not_definitions() {
    let text = "ADVISORY_LOCKS = {\"reindex\": {\"id\": 7_000_100}, \"name\": \"nightly\"}\n";
    let report = scan("jobs.py", text);
    assert!(report.sites.is_empty(), "{:?}", report.sites);
    // No member was read: the name is an `unresolved-constant` note, nothing worse.
    assert_eq!(brief(&report.findings), ["jobs.py:1 unresolved-constant"]);
}

#[test]
fn a_key_written_as_a_quoted_number_is_the_id_postgres_casts_it_to() {
    let text = "\
REPORT_LOCK_KEY = \"7000100\"
local_key = '7000101'
NOT_A_NUMBER_LOCK_KEY = \"7_000_102x\"

def run(cur):
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (local_key,))
";
    let report = scan("jobs.py", text);
    assert_eq!(
        definitions(&report),
        defs(&[(1, "REPORT_LOCK_KEY", 7_000_100)])
    );
    assert_eq!(
        uses(&report),
        [(6, Some("local_key".to_owned()), 7_000_101)]
    );
}

#[test]
fn a_setting_beside_a_lock_is_not_an_id_though_its_name_matches() {
    let text = "ADVISORY_LOCK_TIMEOUT = 30\nADVISORY_LOCK_ID_SALT = 1486364155\nADVISORY_LOCK_RETRY = 7_000_100\n";
    assert_eq!(
        definitions(&scan("jobs.py", text)),
        defs(&[(3, "ADVISORY_LOCK_RETRY", 7_000_100)]),
        "a timeout and a salt are settings; a retry job's lock is a lock"
    );
}

#[test]
fn a_name_assigned_a_member_is_that_member_unless_it_is_reassigned() {
    let text = "\
LOCKS = {\"reindex\": 7_000_100}

def run(cur, other):
    key = LOCKS[\"reindex\"]
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (key,))
    changed = LOCKS[\"reindex\"]
    changed = other.key()
    cur.execute(\"SELECT pg_advisory_lock(%s)\", (changed,))
";
    let report = scan("jobs.py", text);
    assert_eq!(
        uses(&report),
        [(5, Some("LOCKS[\"reindex\"]".to_owned()), 7_000_100)]
    );
    assert_eq!(report.dynamic_keys, 1, "the reassigned name is run-time");
}

#[test]
fn a_collection_subscripted_at_run_time_in_a_lock_key_is_one_of_ids() {
    // mediacloud's LOCK_TYPES: the key is chosen by the caller, the dict holds the families.
    let text = "\
LOCK_TYPES = {
    'test-a': 10,
    'MediaWords::Job::TM::MineTopic': 12,
}

def get_session_lock(db, lock_type, lock_id):
    lock_type_id = LOCK_TYPES[lock_type]
    db.query(\"select pg_advisory_lock(%(a)s, %(b)s)\", {'a': lock_type_id, 'b': lock_id})
";
    let report = scan("locks.py", text);
    assert_eq!(
        definitions(&report),
        defs(&[
            (2, "LOCK_TYPES[\"test-a\"]", 10),
            (3, "LOCK_TYPES[\"MediaWords::Job::TM::MineTopic\"]", 12)
        ])
    );
    assert_eq!(report.dynamic_keys, 1, "which family, the caller decides");
    let note = report
        .findings
        .iter()
        .find(|f| f.code.as_str() == "dynamic-key")
        .expect("a dynamic-key note");
    assert!(
        note.message.contains("LOCK_TYPES[lock_type]"),
        "{}",
        note.message
    );
}

/// `iota` under negation counts down: a mutation that dropped the sign went unnoticed.
#[test]
fn go_iota_under_negation_counts_down() {
    let text = "\
package locks

const (
\tAdvisoryLockDown int64 = -iota - 7_000_100
\tAdvisoryLockDownNext
\tAdvisoryLockDownLast
)
";
    assert_eq!(
        definitions(&scan("locks.go", text)),
        defs(&[
            (4, "AdvisoryLockDown", -7_000_100),
            (5, "AdvisoryLockDownNext", -7_000_101),
            (6, "AdvisoryLockDownLast", -7_000_102),
        ])
    );
}
