//! The databases `live` and `serve` read: one `--database-url` (or `DATABASE_URL`), several
//! (the flag repeated), or a file of them (`--databases FILE`), for a company with one registry
//! and many PostgreSQL clusters (shards, regions). Each goes by its name,
//! [`lockward_pg::live::database_name`] (`host:port/database`).

use std::path::Path;

use crate::args::DatabaseArgs;
use crate::outcome::UsageError;

/// One database of the list: its name and its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    pub(crate) name: String,
    pub(crate) url: String,
}

/// The most databases one command reads: a file of more is a mistake (the wrong file), not a
/// fleet.
const MOST: usize = 1_000;

impl DatabaseArgs {
    /// The databases, `--database-url`s first, then the file's, each by its name; a URL that
    /// does not parse, or two that name one database, is a usage error that says where.
    pub(crate) fn resolve(&self) -> Result<Vec<Named>, UsageError> {
        // Where each URL came from, for its error: a file's line (a flag's URL is itself the
        // place, and its error says "database URL: ...").
        let mut urls: Vec<(Option<String>, String)> = self
            .database_url
            .iter()
            .map(|url| (None, url.clone()))
            .collect();
        if let Some(path) = &self.databases {
            urls.extend(read_file(path)?);
        }
        if urls.len() > MOST {
            return Err(UsageError(format!(
                "{} databases: at most {MOST} can be read at once",
                urls.len()
            )));
        }
        let mut named: Vec<Named> = Vec::with_capacity(urls.len());
        for (at, url) in urls {
            let place = |text: String| match &at {
                Some(at) => format!("{at}: {text}"),
                None => text,
            };
            let name = lockward_pg::live::database_name(&url)
                .map_err(|error| UsageError(place(error.to_string())))?;
            if named.iter().any(|other| other.name == name) {
                return Err(UsageError(place(format!(
                    "the database {name} is named twice (--database-url and --databases name                      each database once)"
                ))));
            }
            named.push(Named { name, url });
        }
        if named.is_empty() {
            return Err(UsageError(
                "no database to read: give --database-url (or DATABASE_URL), or a --databases \
                 file with a URL on a line"
                    .to_owned(),
            ));
        }
        Ok(named)
    }
}

/// The URLs of a `--databases` file, each with where it is (`FILE:LINE`).
fn read_file(path: &Path) -> Result<Vec<(Option<String>, String)>, UsageError> {
    // A list of URLs is small: a file of more than 1 MiB is not one.
    let bytes = lockward_registry::file::read_regular(path, 1 << 20).map_err(|error| {
        UsageError(format!(
            "--databases {}: cannot read it: {error}",
            path.display()
        ))
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| UsageError(format!("--databases {}: it is not UTF-8", path.display())))?;
    Ok(text
        .lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let url = line.trim();
            (!url.is_empty() && !url.starts_with('#')).then(|| {
                (
                    Some(format!("{}:{}", path.display(), index + 1)),
                    url.to_owned(),
                )
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::DatabaseArgs;

    fn args(urls: &[&str], file: Option<&str>) -> (DatabaseArgs, Option<tempfile::TempDir>) {
        let dir = file.map(|text| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("databases"), text).unwrap();
            dir
        });
        let args = DatabaseArgs {
            database_url: urls.iter().map(|url| (*url).to_owned()).collect(),
            databases: dir.as_ref().map(|dir| dir.path().join("databases")),
        };
        (args, dir)
    }

    #[test]
    fn urls_and_a_file_make_one_list_of_named_databases() {
        let (args, _dir) = args(
            &["postgres://app:secret@db-1:5432/orders"],
            Some("# the shards\npostgres://app@db-2/orders\n\n  postgres://db-3:6543/orders  \n"),
        );
        let names: Vec<String> = args
            .resolve()
            .unwrap()
            .into_iter()
            .map(|n| n.name)
            .collect();
        assert_eq!(
            names,
            ["db-1:5432/orders", "db-2:5432/orders", "db-3:6543/orders"]
        );
    }

    #[test]
    fn a_bad_line_says_its_file_and_line_and_a_database_named_twice_is_refused() {
        let (args, dir) = args(&[], Some("postgres://db-1/x\n\nnot a url at all\n"));
        let error = args.resolve().unwrap_err().0;
        let file = dir.unwrap().path().join("databases");
        assert!(
            error.starts_with(&format!("{}:3: ", file.display())),
            "{error}"
        );
        let (args, _dir) = args_twice();
        let error = args.resolve().unwrap_err().0;
        assert!(error.contains("db-1:5432/x is named twice"), "{error}");
    }

    fn args_twice() -> (DatabaseArgs, Option<tempfile::TempDir>) {
        args(&["postgres://a@db-1/x", "postgres://b@db-1:5432/x"], None)
    }

    #[test]
    fn an_empty_file_and_no_url_is_no_database() {
        let (args, _dir) = args(&[], Some("# nothing yet\n"));
        assert!(
            args.resolve()
                .unwrap_err()
                .0
                .starts_with("no database to read")
        );
    }
}
