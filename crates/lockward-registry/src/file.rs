//! Reading the files a project names: regular files of bounded size, never anything that could
//! block or run the process out of memory.
//!
//! A constants file that is a FIFO had `take` wait for ever while holding the project lock, and
//! `serve --token-file /dev/zero` read until memory ran out. [`read_regular`] opens without
//! blocking (a FIFO with no writer would block `open` itself), refuses anything that is not a
//! regular file once opened (so a link swapped in between is judged by what was opened), and
//! reads at most the limit.

use std::io::Read as _;
use std::path::Path;

/// How much of a registry, constants file, page or manifest lockward reads: far above any real
/// one (a registry with 100,000 entries is about 10 MB).
pub const MAX_PROJECT_FILE: u64 = 64 * 1024 * 1024;

/// Reads the regular file at `path`, at most `limit` bytes. A FIFO, a device, a socket or a
/// directory is an error of kind `InvalidInput` that says what it is, and so is a file larger
/// than `limit`; a missing file is `NotFound`, as from [`std::fs::read`].
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
    }
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", kind(&metadata)),
        ));
    }
    if metadata.len() > limit {
        return Err(too_large(limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    // The file may grow after the `stat`: never more than the limit, all the same.
    (&file).take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

fn too_large(limit: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is larger than the {} lockward reads", size(limit)),
    )
}

/// `64 MiB`, `4 KiB`, `9 bytes`.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        _ if bytes >= KIB * KIB && bytes.is_multiple_of(KIB * KIB) => {
            format!("{} MiB", bytes / KIB / KIB)
        }
        _ if bytes >= KIB && bytes.is_multiple_of(KIB) => format!("{} KiB", bytes / KIB),
        _ => format!("{bytes} bytes"),
    }
}

/// What a file that is not a regular one is, for the message.
fn kind(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if metadata.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_and_a_larger_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap(), b"0123456789");
        let error = read_regular(&path, 9).unwrap_err();
        assert!(
            error.to_string().contains("larger than the 9 bytes"),
            "{error}"
        );
        assert_eq!(
            read_regular(&dir.path().join("missing"), 10)
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::NotFound
        );
        let error = read_regular(dir.path(), 10).unwrap_err();
        assert!(error.to_string().contains("a directory"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let error = read_regular(&fifo, 10).unwrap_err();
        assert!(error.to_string().contains("a FIFO"), "{error}");
        let error = read_regular(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(error.to_string().contains("a device"), "{error}");
    }
}
