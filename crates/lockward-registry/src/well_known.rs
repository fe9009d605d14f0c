//! The catalogue of well-known advisory lock keys (`data/well-known-keys.toml`): the keys
//! migration tools and job libraries take, fixed ones and ones derived from the database's name,
//! schema or table, each with the source it was read from; and the formulas of libraries that
//! lock by name ([`name_key`]).
//!
//! The data file says where each key comes from and holds test vectors computed by each tool's
//! own code; this module computes the keys (the formulas are written here, one function each,
//! and the tests check every vector of the file against them).

use std::sync::OnceLock;

use sha2::Digest as _;

use crate::id::{AdvisoryKey, Keys};

/// The catalogue's text, as shipped.
pub(crate) const CATALOGUE: &str = include_str!("../data/well-known-keys.toml");

/// A tool that takes advisory locks of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// A short stable id (`goose`, `rails`).
    pub id: String,
    /// How a holder of its key is named (`goose migrations (v3.26.0+)`).
    pub holder: String,
    /// Where the key comes from: `owner/repo@commit path:line`.
    pub source: String,
    /// `session` or `xact`: the lock function the tool uses by default.
    pub scope: String,
    /// The key.
    pub key: ToolKey,
}

/// How a tool's key is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKey {
    /// One bigint key, the same in every database.
    Fixed(i64),
    /// Bigint keys computed from the database (see [`Tool::keys_in`]).
    Formula(Formula),
    /// Every bigint key from `start` up: a tool that locks rows by their id (Que's jobs).
    From(i64),
}

/// A per-database formula of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formula {
    /// Rails: `2053462845 * crc32(current_database())`.
    RailsMigrator,
    /// sqlx's migrator: `0x3d32ad9e * crc32(current_database())`.
    SqlxMigrator,
    /// golang-migrate from v4.15: `crc32(schema \0 table \0 database) * 1486364155 mod 2^32`.
    GolangMigrate,
    /// golang-migrate v4.1 to v4.14: `crc32(schema \0 database) * 1486364155 mod 2^32`.
    GolangMigrateSchemaDb,
    /// golang-migrate up to v4.0: `crc32(database) * 1486364155 mod 2^32`.
    GolangMigrateDb,
    /// Flyway: `77431708279161 + hashCode("\"schema\".\"table\"")`.
    Flyway,
    /// pg-boss 10: the first 8 bytes of `sha224(database || '.pgboss.' || schema || suffix)`.
    PgBossV10,
    /// pg-boss 9: the first 8 bytes of `md5(database || '.pgboss.' || schema)`.
    PgBossV9,
    /// Ecto's `:erlang.phash2({:ecto, prefix, repo})`: Erlang's term hash of the repo module,
    /// which neither the database nor lockward knows; listed, not computed.
    EctoPhash2,
}

/// The inputs of the per-database formulas: what `current_database()` and `current_schema()`
/// answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Database<'a> {
    /// `current_database()`.
    pub name: &'a str,
    /// `current_schema()` (`public` when the search path names none).
    pub schema: &'a str,
}

/// The suffixes pg-boss 10 appends for its queue maintenance locks (beside the empty one of its
/// migrations); the per-table ones are left out.
const PG_BOSS_SUFFIXES: &[&str] = &[
    "",
    "create-queue",
    "delete-queue",
    "queue-stats",
    "queue-stats-insert",
];

impl Tool {
    /// The bigint keys the tool takes in `database`: its fixed key, or what its formula gives
    /// for the database with the tool's default schema and table (golang-migrate: both
    /// spellings of the database's name it uses, with and without the URL's leading `/`). A
    /// range tool and a formula lockward cannot compute give none.
    pub fn keys_in(&self, database: Option<Database<'_>>) -> Vec<i64> {
        match self.key {
            ToolKey::Fixed(key) => vec![key],
            ToolKey::From(_) => Vec::new(),
            ToolKey::Formula(formula) => database.map_or_else(Vec::new, |db| formula.keys(db)),
        }
    }

    /// The keys it owns, for the static checks: the fixed key; none for the others (they depend
    /// on a database, or are a range).
    pub fn fixed(&self) -> Option<Keys> {
        match self.key {
            ToolKey::Fixed(key) => Some(Keys::Bigint(key)),
            _ => None,
        }
    }
}

impl Formula {
    /// The keys in `db` with the tool's defaults.
    fn keys(self, db: Database<'_>) -> Vec<i64> {
        let slashed = format!("/{}", db.name);
        let names = [db.name, slashed.as_str()];
        match self {
            Self::RailsMigrator => vec![rails_migrator(db.name)],
            Self::SqlxMigrator => vec![sqlx_migrator(db.name)],
            Self::GolangMigrate => names
                .iter()
                .map(|name| golang_migrate(&[db.schema, "schema_migrations", name]))
                .collect(),
            Self::GolangMigrateSchemaDb => names
                .iter()
                .map(|name| golang_migrate(&[db.schema, name]))
                .collect(),
            Self::GolangMigrateDb => names.iter().map(|name| golang_migrate(&[name])).collect(),
            Self::Flyway => vec![flyway(db.schema, "flyway_schema_history")],
            Self::PgBossV10 => PG_BOSS_SUFFIXES
                .iter()
                .map(|suffix| pg_boss_v10(db.name, "pgboss", suffix))
                .collect(),
            Self::PgBossV9 => vec![pg_boss_v9(db.name, "pgboss")],
            Self::EctoPhash2 => Vec::new(),
        }
    }

    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "rails-migrator" => Self::RailsMigrator,
            "sqlx-migrator" => Self::SqlxMigrator,
            "golang-migrate" => Self::GolangMigrate,
            "golang-migrate-schema-db" => Self::GolangMigrateSchemaDb,
            "golang-migrate-db" => Self::GolangMigrateDb,
            "flyway" => Self::Flyway,
            "pg-boss-v10" => Self::PgBossV10,
            "pg-boss-v9" => Self::PgBossV9,
            "ecto-phash2" => Self::EctoPhash2,
            _ => return None,
        })
    }
}

/// Every tool of the catalogue, in its order.
pub fn tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| parse_tools(CATALOGUE).unwrap_or_else(|why| unreachable(&why)))
}

/// The catalogue ships inside the binary and its tests parse it: a catalogue that does not
/// parse cannot be built.
#[cold]
fn unreachable(why: &str) -> Vec<Tool> {
    panic!("the shipped well-known key catalogue does not parse: {why}")
}

/// Every key the catalogue's tools take in one database, computed once (the formulas hash the
/// database's name): what the live view looks each held key up in.
#[derive(Debug, Clone, Default)]
pub struct KnownKeys {
    by_key: std::collections::HashMap<i64, Vec<&'static Tool>>,
}

impl KnownKeys {
    /// The tools' keys in `database` (only the fixed ones without a database).
    pub fn in_database(database: Option<Database<'_>>) -> Self {
        let mut by_key: std::collections::HashMap<i64, Vec<&'static Tool>> =
            std::collections::HashMap::new();
        for tool in tools() {
            for key in tool.keys_in(database) {
                let holders = by_key.entry(key).or_default();
                if !holders.iter().any(|held| held.id == tool.id) {
                    holders.push(tool);
                }
            }
        }
        Self { by_key }
    }

    /// The tools that take `key` (a two-int key: none; every tool of the catalogue takes
    /// bigints).
    pub fn holders(&self, key: AdvisoryKey) -> Vec<&'static Tool> {
        match key {
            AdvisoryKey::Bigint(key) => self.by_key.get(&key).cloned().unwrap_or_default(),
            AdvisoryKey::Pair(..) => Vec::new(),
        }
    }
}

/// The tool of the catalogue with this id (`rails`).
pub fn tool(id: &str) -> Option<&'static Tool> {
    tools().iter().find(|tool| tool.id == id)
}

/// The tool whose fixed bigint key `key` is, if any.
pub(crate) fn fixed_holder(key: i64) -> Option<&'static Tool> {
    tools().iter().find(|tool| tool.key == ToolKey::Fixed(key))
}

/// The tools `[[tool]]` entries describe.
fn parse_tools(text: &str) -> Result<Vec<Tool>, String> {
    let document = toml_edit::Document::parse(text).map_err(|error| error.to_string())?;
    let Some(array) = document
        .as_table()
        .get("tool")
        .and_then(toml_edit::Item::as_array_of_tables)
    else {
        return Err("no [[tool]] entries".to_owned());
    };
    array
        .iter()
        .map(|table| {
            let text = |key: &str| {
                table
                    .get(key)
                    .and_then(toml_edit::Item::as_str)
                    .map(str::to_owned)
            };
            let id = text("id").ok_or("a [[tool]] without an id")?;
            let key = if let Some(key) = table.get("key").and_then(toml_edit::Item::as_integer) {
                ToolKey::Fixed(key)
            } else if let Some(name) = text("formula") {
                ToolKey::Formula(
                    Formula::named(&name).ok_or(format!("{id}: unknown formula {name}"))?,
                )
            } else if let Some(start) = table
                .get("range")
                .and_then(toml_edit::Item::as_table_like)
                .and_then(|range| range.get("start"))
                .and_then(toml_edit::Item::as_integer)
            {
                ToolKey::From(start)
            } else {
                return Err(format!("{id}: no key, formula or range"));
            };
            Ok(Tool {
                holder: text("holder").ok_or(format!("{id}: no holder"))?,
                source: text("source").ok_or(format!("{id}: no source"))?,
                scope: text("scope").unwrap_or_else(|| "session".to_owned()),
                id,
                key,
            })
        })
        .collect()
}

/// The zlib / IEEE CRC-32 of `text`'s bytes.
fn crc32(text: &str) -> u32 {
    crc32fast::hash(text.as_bytes())
}

fn rails_migrator(database: &str) -> i64 {
    2_053_462_845 * i64::from(crc32(database))
}

fn sqlx_migrator(database: &str) -> i64 {
    0x3d32_ad9e * i64::from(crc32(database))
}

/// golang-migrate's `GenerateAdvisoryLockId`: the names joined with NUL, in uint32 arithmetic.
fn golang_migrate(names: &[&str]) -> i64 {
    i64::from(crc32(&names.join("\0")).wrapping_mul(1_486_364_155))
}

/// Java's `String.hashCode` (over UTF-16 code units, wrapping `int`).
fn java_hash_code(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// Flyway's `LOCK_MAGIC_NUM + table.toString().hashCode()`, the table quoted as PostgreSQL
/// quotes identifiers.
fn flyway(schema: &str, table: &str) -> i64 {
    let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    77_431_708_279_161
        + i64::from(java_hash_code(&format!(
            "{}.{}",
            quote(schema),
            quote(table)
        )))
}

/// The first 8 bytes of a digest, big-endian and signed: `('x' || hex)::bit(64)::bigint`.
fn first_eight(digest: &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

fn pg_boss_v10(database: &str, schema: &str, suffix: &str) -> i64 {
    first_eight(&sha2::Sha224::digest(format!(
        "{database}.pgboss.{schema}{suffix}"
    )))
}

fn pg_boss_v9(database: &str, schema: &str) -> i64 {
    first_eight(&md5::Md5::digest(format!("{database}.pgboss.{schema}")))
}

/// Library calls that take a lock's *name* and hash it into a key lockward computes: the
/// function as called, the only language it counts in, and the library's `[[hash]]` id. The
/// scan reads a string literal passed to one as that library's key.
pub const NAMED_LOCK_CALLS: &[(&str, lockward_lang::Language, &str)] = &[
    (
        "advisory_lock",
        lockward_lang::Language::Python,
        "django-pglocks",
    ),
    (
        "with_advisory_lock",
        lockward_lang::Language::Ruby,
        "with_advisory_lock",
    ),
    // The gem's form that raises when the lock is not taken.
    (
        "with_advisory_lock!",
        lockward_lang::Language::Ruby,
        "with_advisory_lock",
    ),
    (
        "PgAdvisoryLock",
        lockward_lang::Language::Rust,
        "sqlx-pgadvisorylock",
    ),
    (
        "pglock.advisory",
        lockward_lang::Language::Python,
        "django-pglock",
    ),
];

/// The library whose call `function` (as [`NAMED_LOCK_CALLS`] names it) in `language` is.
pub fn named_lock_library(
    function: &str,
    language: lockward_lang::Language,
) -> Option<&'static str> {
    NAMED_LOCK_CALLS
        .iter()
        .find(|&&(name, only, _)| name == function && only == language)
        .map(|&(_, _, library)| library)
}

/// The libraries [`name_key`] computes keys for: what `[[lock]] hash = ...` may name.
pub const NAME_HASHES: &[&str] = &[
    "django-pglocks",
    "with_advisory_lock",
    "with_advisory_lock-v1",
    "sqlx-pgadvisorylock",
    "atlas-fnv32",
    "advisory-lock-npm",
    "django-pglock",
    "pg-advisory-lock-npm-v1",
    "good_job",
    "laravel-database-advisory-lock",
    "postgres-hashtext",
    "pg-advisory-lock-npm",
    "postgres-hashtextextended",
];

/// The key a library that locks by name takes for `name`, by the catalogue's `[[hash]]` id:
/// `None` for a library it does not know, or whose key PostgreSQL computes by a function
/// lockward does not (`hashtextextended`).
pub fn name_key(library: &str, name: &str) -> Option<AdvisoryKey> {
    #[allow(clippy::cast_possible_wrap)] // the bit patterns are what the libraries pass
    Some(match library {
        // Python's zlib.crc32 read as a signed int4.
        "django-pglocks" => AdvisoryKey::Bigint(i64::from(crc32(name) as i32)),
        "with_advisory_lock" => AdvisoryKey::Pair((crc32(name) & 0x7fff_ffff) as i32, 0),
        "with_advisory_lock-v1" => AdvisoryKey::Bigint(i64::from(crc32(name))),
        "sqlx-pgadvisorylock" => AdvisoryKey::Bigint(sqlx_name_key(name)),
        "atlas-fnv32" => AdvisoryKey::Bigint(i64::from(fnv1_32(name))),
        "advisory-lock-npm" => {
            let digest = sha2::Sha256::digest(name.as_bytes());
            let half = |at: usize| {
                i32::from_le_bytes([digest[at], digest[at + 1], digest[at + 2], digest[at + 3]])
            };
            AdvisoryKey::Pair(half(0), half(4))
        }
        "django-pglock" => {
            let digest = sha2::Sha256::digest(name.as_bytes());
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&digest[..8]);
            AdvisoryKey::Bigint(i64::from_le_bytes(bytes))
        }
        "pg-advisory-lock-npm-v1" => AdvisoryKey::Bigint(djb2_xor_64(name)),
        "good_job" => AdvisoryKey::Bigint(first_eight(&md5::Md5::digest(name.as_bytes()))),
        "laravel-database-advisory-lock" | "postgres-hashtext" => {
            AdvisoryKey::Bigint(i64::from(hashtext(name)))
        }
        // The root keyspace's seed; a namespace's lock is another seed, not a name of this.
        "pg-advisory-lock-npm" | "postgres-hashtextextended" => {
            AdvisoryKey::Bigint(hashtextextended(name, 0))
        }
        _ => return None,
    })
}

/// sqlx's `PgAdvisoryLock::new`: HKDF-SHA256 with no salt and its info string, 8 bytes read
/// little-endian.
fn sqlx_name_key(name: &str) -> i64 {
    let mut okm = [0u8; 8];
    hkdf::Hkdf::<sha2::Sha256>::new(None, name.as_bytes())
        .expand(b"SQLx (Rust) Postgres advisory lock", &mut okm)
        .unwrap_or_else(|_| unreachable_length());
    i64::from_le_bytes(okm)
}

/// HKDF-SHA256 gives up to 8160 bytes; 8 are asked for.
#[cold]
fn unreachable_length() {
    panic!("HKDF-SHA256 refused an 8-byte output")
}

/// PostgreSQL's `hashtext(text)` of a text in a deterministic collation: `hash_bytes` of its
/// UTF-8 bytes (Bob Jenkins' lookup3, as `src/common/hashfn.c` has it on a little-endian
/// server), read as an `int4`. Checked against PostgreSQL 15 on fifty-one texts of every length
/// to forty bytes (the tests keep some). Written out: it is forty lines of integer arithmetic,
/// and no crate computes PostgreSQL's variant.
pub fn hashtext(text: &str) -> i32 {
    let (_, c) = hash_bytes(text.as_bytes(), 0);
    #[allow(clippy::cast_possible_wrap)] // an int4's bits
    let hash = c as i32;
    hash
}

/// PostgreSQL's `hashtextextended(text, seed)` in a deterministic collation:
/// `hash_bytes_extended` of the text's UTF-8 bytes, the seed folded in as a first block, `b` and
/// `c` of lookup3's final state read as an `int8`. Checked against PostgreSQL 15 (the tests keep
/// some of its values).
pub fn hashtextextended(text: &str, seed: i64) -> i64 {
    #[allow(clippy::cast_sign_loss)] // the seed's bits, as PostgreSQL takes them
    let (b, c) = hash_bytes(text.as_bytes(), seed as u64);
    #[allow(clippy::cast_possible_wrap)] // an int8's bits
    let hash = ((u64::from(b) << 32) | u64::from(c)) as i64;
    hash
}

/// Bob Jenkins' lookup3 as `src/common/hashfn.c` has it on a little-endian server: `hash_bytes`
/// with seed 0, `hash_bytes_extended` with another; the final `b` and `c`.
fn hash_bytes(mut k: &[u8], seed: u64) -> (u32, u32) {
    // PostgreSQL takes the length as an int: a text longer than 2^32 bytes is no key anyone
    // writes in code.
    #[allow(clippy::cast_possible_truncation)]
    let init = 0x9e37_79b9u32
        .wrapping_add(k.len() as u32)
        .wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (init, init, init);
    let mix = |a: &mut u32, b: &mut u32, c: &mut u32| {
        mix_step(a, c, *b, 4);
        mix_step(b, a, *c, 6);
        mix_step(c, b, *a, 8);
        mix_step(a, c, *b, 16);
        mix_step(b, a, *c, 19);
        mix_step(c, b, *a, 4);
    };
    // A seed is a first block of the data, padded with four zero bytes.
    if seed != 0 {
        #[allow(clippy::cast_possible_truncation)] // its two halves
        {
            a = a.wrapping_add((seed >> 32) as u32);
            b = b.wrapping_add(seed as u32);
        }
        mix(&mut a, &mut b, &mut c);
    }
    let word = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    while k.len() >= 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    // The last eleven bytes or fewer; the lowest byte of `c` is the length's.
    let tail = |i: usize| k.get(i).map_or(0, |&byte| u32::from(byte));
    c = c.wrapping_add((tail(10) << 24) | (tail(9) << 16) | (tail(8) << 8));
    b = b.wrapping_add((tail(7) << 24) | (tail(6) << 16) | (tail(5) << 8) | tail(4));
    a = a.wrapping_add((tail(3) << 24) | (tail(2) << 16) | (tail(1) << 8) | tail(0));
    // final(a, b, c)
    for (x, y, k) in [
        (2, 1, 14),
        (0, 2, 11),
        (1, 0, 25),
        (2, 1, 16),
        (0, 2, 4),
        (1, 0, 14),
        (2, 1, 24),
    ] {
        let mut abc = [a, b, c];
        abc[x] = (abc[x] ^ abc[y]).wrapping_sub(abc[y].rotate_left(k));
        [a, b, c] = abc;
    }
    (b, c)
}

/// One line of lookup3's `mix`: `x -= y; x ^= rot(y, k); y += z`.
fn mix_step(x: &mut u32, y: &mut u32, z: u32, k: u32) {
    *x = x.wrapping_sub(*y) ^ y.rotate_left(k);
    *y = y.wrapping_add(z);
}

/// 32-bit FNV-1 (multiply, then xor), as Go's `fnv.New32`.
fn fnv1_32(name: &str) -> u32 {
    name.bytes().fold(2_166_136_261u32, |hash, byte| {
        hash.wrapping_mul(16_777_619) ^ u32::from(byte)
    })
}

/// pg-advisory-lock 1.x: `h = 5381; h = (h * 33) ^ unit` over UTF-16 code units, mod 2^64.
#[allow(clippy::cast_possible_wrap)] // two's complement, as the library does
fn djb2_xor_64(name: &str) -> i64 {
    name.encode_utf16().fold(5381u64, |hash, unit| {
        hash.wrapping_mul(33) ^ u64::from(unit)
    }) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Code, Finding};
    use crate::registry::Registry;

    /// The `[[tool]]` and `[[hash]]` vectors of the shipped file: (entry id, inputs, key).
    fn vectors(kind: &str) -> Vec<(String, toml_edit::InlineTable, toml_edit::Value)> {
        let document = toml_edit::Document::parse(CATALOGUE).expect("the catalogue parses");
        let mut out = Vec::new();
        for table in document[kind].as_array_of_tables().expect(kind) {
            let id = table["id"].as_str().expect("id").to_owned();
            let Some(vectors) = table.get("vectors").and_then(toml_edit::Item::as_array) else {
                continue;
            };
            for vector in vectors {
                let vector = vector
                    .as_inline_table()
                    .expect("a vector is an inline table");
                out.push((
                    id.clone(),
                    vector.clone(),
                    vector.get("key").expect("key").clone(),
                ));
            }
        }
        out
    }

    fn input<'a>(vector: &'a toml_edit::InlineTable, key: &str) -> &'a str {
        vector
            .get(key)
            .and_then(toml_edit::Value::as_str)
            .unwrap_or_else(|| panic!("{key} in {vector}"))
    }

    #[test]
    fn the_catalogue_parses_and_every_entry_names_its_source() {
        let tools = tools();
        assert!(tools.len() >= 15, "{tools:?}");
        for tool in tools {
            assert!(tool.source.contains('@'), "{}: {}", tool.id, tool.source);
        }
        let fixed = |id: &str| tools.iter().find(|t| t.id == id).map(|t| t.key);
        assert_eq!(fixed("prisma-migrate"), Some(ToolKey::Fixed(72_707_369)));
        assert_eq!(fixed("sqitch"), Some(ToolKey::Fixed(75_474_063)));
        assert_eq!(
            fixed("graphile-migrate"),
            Some(ToolKey::Fixed(4_727_445_306_447_283))
        );
        assert_eq!(
            fixed("goose-legacy"),
            Some(ToolKey::Fixed(5_887_940_537_704_921_958))
        );
        assert_eq!(fixed("que"), Some(ToolKey::From(1)));
    }

    /// `hashtext` as PostgreSQL 15 computed it (`SELECT hashtext($$..$$)`): every length of the
    /// tail (0 to 11 bytes after the 12-byte blocks), several blocks, UTF-8 beyond ASCII.
    #[test]
    fn hashtext_is_postgresqls() {
        for (text, expected) in [
            ("", -1_477_818_771),
            ("a", 1_075_015_857),
            ("ab", 1_718_550_461),
            ("abc", -785_388_649),
            ("alembic", -441_799_288),
            ("reindex", -1_710_224_015),
            ("nightly-export", 757_402_962),
            ("ünïcödé✓", -1_731_078_012),
            ("rv82qxvvhsp81i75guc_eyji", -382_320_591),
            ("i91nh-84_hsrpy5am3.7bb8pqnlsj4mrt7", 1_311_987_826),
            ("q9pb9zu-prmek7.7j8q:3kii.xtzphntegozu1g", -1_134_539_204),
            ("lcd8bnc139.vrh9lgozo1.ykops:57yn.qv17hnf", 626_752_854),
        ] {
            assert_eq!(hashtext(text), expected, "{text:?}");
        }
    }

    /// `hashtextextended` of texts of every length class and of seeds zero, positive and
    /// negative, against PostgreSQL 15 (`select hashtextextended(t, seed)`).
    #[test]
    fn hashtextextended_is_postgresqls() {
        for (text, zero, forty_two, minus_seven) in [
            (
                "",
                -6_939_563_903_564_495_251,
                6_158_832_220_375_811_857,
                7_897_695_672_827_216_937,
            ),
            (
                "a",
                3_591_986_179_850_072_241,
                6_942_402_718_208_252_407,
                -1_390_133_477_695_463_801,
            ),
            (
                "reindex",
                -411_866_032_294_064_783,
                -4_767_731_109_083_263_574,
                4_769_205_688_313_452_600,
            ),
            (
                "exactly12byt",
                -1_607_044_592_329_689_743,
                1_353_178_826_417_390_879,
                -4_425_267_654_432_945_438,
            ),
            (
                "automation-shadow-control-loop",
                3_632_026_939_866_375_789,
                -5_629_258_489_073_217_323,
                -3_476_827_984_566_149_101,
            ),
            (
                "ünïcödé✓ and a longer text of forty bytes!",
                5_037_751_657_073_622_194,
                283_537_482_773_571_913,
                1_600_375_581_130_915_908,
            ),
        ] {
            assert_eq!(hashtextextended(text, 0), zero, "{text:?}");
            assert_eq!(hashtextextended(text, 42), forty_two, "{text:?}");
            assert_eq!(hashtextextended(text, -7), minus_seven, "{text:?}");
        }
    }

    /// Fixed keys whose source says how they were made, made that way.
    #[test]
    fn fixed_keys_are_what_their_sources_say_they_are_made_of() {
        assert_eq!(
            i64::from(crc32("goose")),
            4_097_083_626,
            "goose >= 3.26: crc32 of goose"
        );
        assert_eq!(i64::from(fnv1_32("atlas_migrate_execute")), 2_686_470_616);
        assert_eq!(i64::from(fnv1_32("atlas_migrate_diff")), 361_947_982);
        assert_eq!(i64::from(fnv1_32("atlas_lint")), 526_800_194);
        // Flyway's magic number is "Flyway" in ASCII.
        assert_eq!(
            i64::from_be_bytes([0, 0, b'F', b'l', b'y', b'w', b'a', b'y']),
            77_431_708_279_161
        );
        // graphile-migrate: "GRAPHILE MIGRATE" on a phone keypad, the space as 0.
        let keypad = |c: char| match c {
            'A'..='C' => '2',
            'D'..='F' => '3',
            'G'..='I' => '4',
            'J'..='L' => '5',
            'M'..='O' => '6',
            'P'..='S' => '7',
            'T'..='V' => '8',
            'W'..='Z' => '9',
            _ => '0',
        };
        let digits: String = "GRAPHILE MIGRATE".chars().map(keypad).collect();
        assert_eq!(digits, "4727445306447283");
    }

    /// Every per-database vector of the catalogue (computed by the tools' own code) is what
    /// lockward's formula gives.
    #[test]
    fn every_formula_gives_the_keys_the_tools_own_code_computed() {
        let mut checked = 0;
        for (id, vector, key) in vectors("tool") {
            let key = key.as_integer().expect("a bigint key");
            let computed = match id.as_str() {
                "rails" => rails_migrator(input(&vector, "database")),
                "sqlx-migrate" => sqlx_migrator(input(&vector, "database")),
                "golang-migrate" => golang_migrate(&[
                    input(&vector, "schema"),
                    input(&vector, "table"),
                    input(&vector, "database"),
                ]),
                "golang-migrate-v4.1" => {
                    golang_migrate(&[input(&vector, "schema"), input(&vector, "database")])
                }
                "golang-migrate-v4.0" => golang_migrate(&[input(&vector, "database")]),
                "flyway" => flyway(input(&vector, "schema"), input(&vector, "table")),
                "pg-boss" => pg_boss_v10(
                    input(&vector, "database"),
                    input(&vector, "schema"),
                    input(&vector, "key_suffix"),
                ),
                "pg-boss-v9" => pg_boss_v9(input(&vector, "database"), input(&vector, "schema")),
                // Erlang's phash2: listed, not computed.
                "ecto-sql" => continue,
                other => panic!("a vector of {other}, which no formula computes"),
            };
            assert_eq!(computed, key, "{id} {vector}");
            checked += 1;
        }
        assert!(checked >= 20, "{checked} vectors");
    }

    /// Every name vector of a library lockward computes keys for.
    #[test]
    fn every_name_hash_gives_the_keys_the_libraries_own_code_computed() {
        let mut checked = 0;
        for (id, vector, key) in vectors("hash") {
            let name = input(&vector, "name");
            let expected = match &key {
                toml_edit::Value::Integer(k) => AdvisoryKey::Bigint(*k.value()),
                toml_edit::Value::Array(pair) => {
                    let half = |i: usize| {
                        i32::try_from(
                            pair.get(i)
                                .and_then(toml_edit::Value::as_integer)
                                .expect("int"),
                        )
                        .expect("int4")
                    };
                    AdvisoryKey::Pair(half(0), half(1))
                }
                other => panic!("{id}: a key {other}"),
            };
            if vector.get("prefix").is_some() {
                continue; // with_advisory_lock's prefix from the environment is not followed
            }
            match name_key(&id, name) {
                Some(computed) => {
                    assert_eq!(computed, expected, "{id} {name:?}");
                    checked += 1;
                }
                None => panic!("{id} has no formula"),
            }
        }
        assert!(checked >= 20, "{checked} vectors");
    }

    fn named(locks: &str) -> Result<Registry, Vec<Finding>> {
        crate::parse(
            "lockward.toml",
            &format!(
                "[project]\nname = \"h\"\n\n[core]\nconstants = \"c.py\"\n\
                 block = {{ start = 1_001_001, end = 1_001_999 }}\n{locks}"
            ),
        )
        .map(|loaded| loaded.registry)
    }

    /// `[[lock]] name = "reindex" hash = "django-pglocks"` registers a lock taken by name: its
    /// id is the library's key (a two-int key's first int, as a family), and the name's mistakes
    /// are reported.
    #[test]
    fn a_lock_taken_by_name_is_registered_at_the_key_its_library_computes() {
        let registry = named(
            "\n[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"search\"\n\
             \n[[lock]]\nname = \"reindex\"\nhash = \"with_advisory_lock\"\nworker = \"sync\"\n\
             \n[[lock]]\nid = -4_842_030_769_232_299_671\nname = \"reindex\"\nhash = \"sqlx-pgadvisorylock\"\nworker = \"x\"\n",
        )
        .expect("valid");
        let ids: Vec<(i64, &str, crate::KeyShape)> = registry
            .locks()
            .iter()
            .map(|lock| (lock.id().value(), lock.kind().as_str(), lock.key()))
            .collect();
        assert_eq!(
            ids,
            [
                (-4_842_030_769_232_299_671, "named", crate::KeyShape::Exact),
                (-118_288_247, "named", crate::KeyShape::Exact),
                (2_029_195_401, "named", crate::KeyShape::Family),
            ]
        );
        assert_eq!(registry.locks()[1].owner().as_deref(), Some("core"));
        let view = &registry.views()[1];
        assert_eq!(
            (view.name, view.hash),
            (Some("reindex"), Some("django-pglocks"))
        );

        for (locks, code, text) in [
            (
                "name = \"x\"\nhash = \"django-pglock\"\nworker = \"w\"\n",
                None,
                "",
            ),
            (
                "name = \"x\"\nhash = \"django-pglockz\"\nworker = \"w\"\n",
                Some(Code::UnknownNameHash),
                "did you mean `django-pglocks`",
            ),
            (
                "name = \"x\"\nworker = \"w\"\n",
                Some(Code::MissingField),
                "which library hashes",
            ),
            (
                "hash = \"good_job\"\nworker = \"w\"\n",
                Some(Code::MissingField),
                "without the `name`",
            ),
            (
                "id = 5\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"w\"\n",
                Some(Code::NameKeyMismatch),
                "which is -118288247",
            ),
            (
                "name = \"reindex\"\nhash = \"django-pglocks\"\nkey = \"family\"\nworker = \"w\"\n",
                Some(Code::NameKeyMismatch),
                "other key form",
            ),
            (
                "name = \"reindex\"\nhash = \"django-pglocks\"\n",
                Some(Code::MissingWorker),
                "",
            ),
            (
                "name = \"reindex\"\nhash = \"django-pglocks\"\nconstant = \"X\"\nworker = \"w\"\n",
                Some(Code::ConflictingKinds),
                "",
            ),
        ] {
            let result = named(&format!("\n[[lock]]\n{locks}"));
            match code {
                None => assert!(result.is_ok(), "{locks}: {result:?}"),
                Some(code) => {
                    let findings = result.expect_err(locks);
                    assert!(
                        findings.iter().any(|f| f.code == code
                            && (f.message.contains(text)
                                || f.help.as_deref().is_some_and(|h| h.contains(text)))),
                        "{locks}: {findings:#?}"
                    );
                }
            }
        }
        // Two names on one key (crc32("job-guszrictzu") == crc32("job-kpgfslzdni")) are one id.
        let findings = named(
            "\n[[lock]]\nname = \"job-guszrictzu\"\nhash = \"django-pglocks\"\nworker = \"a\"\n\
             \n[[lock]]\nname = \"job-kpgfslzdni\"\nhash = \"django-pglocks\"\nworker = \"b\"\n",
        )
        .expect_err("one key");
        assert!(
            findings.iter().any(|f| f.code == Code::DuplicateId),
            "{findings:#?}"
        );
    }

    #[test]
    fn the_tools_of_a_database_name_its_keys_in_both_forms_only_as_bigints() {
        let db = Database {
            name: "harbor_production",
            schema: "public",
        };
        let names = |key| -> Vec<&str> {
            KnownKeys::in_database(Some(db))
                .holders(key)
                .iter()
                .map(|tool| tool.id.as_str())
                .collect()
        };
        assert_eq!(names(AdvisoryKey::Bigint(72_707_369)), ["prisma-migrate"]);
        assert_eq!(
            names(AdvisoryKey::Bigint(1_741_034_727_981_075_870)),
            ["rails"]
        );
        assert_eq!(
            names(AdvisoryKey::Bigint(2_130_612_322)),
            ["golang-migrate"]
        );
        assert_eq!(
            names(AdvisoryKey::Bigint(2_507_097_552)),
            ["golang-migrate"]
        );
        assert!(names(AdvisoryKey::Pair(0, 72_707_369)).is_empty());
        assert!(names(AdvisoryKey::Bigint(1_001_001)).is_empty());
        // Without a database only the fixed keys are known.
        assert!(
            KnownKeys::in_database(None)
                .holders(AdvisoryKey::Bigint(1_741_034_727_981_075_870))
                .is_empty()
        );
    }
}
