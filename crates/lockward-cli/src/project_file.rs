//! Reading a file of the project: a regular file of bounded size, its text, or nothing when it is
//! not there.

use std::path::Path;

use anyhow::Context as _;

use crate::outcome::UsageError;

/// A file of the project (see [`lockward_registry::file::read_regular`]): a FIFO, a device or a
/// file of more than 64 MiB is refused, not waited on or read to the end.
pub(crate) fn read_project_file(path: &Path) -> std::io::Result<Vec<u8>> {
    lockward_registry::file::read_regular(path, lockward_registry::file::MAX_PROJECT_FILE)
}

/// The file's text, or `None` when it does not exist.
pub(crate) fn read_if_exists(path: &Path) -> anyhow::Result<Option<String>> {
    match read_project_file(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| UsageError(format!("{}: the file is not UTF-8", path.display())))?;
            Ok(Some(text))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}
