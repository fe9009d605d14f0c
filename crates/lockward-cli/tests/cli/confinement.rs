//! Nothing lockward writes or reads for a project lies outside it (issue 18, items 1-4): every
//! path the registry names resolves inside the project after symlinks, or is refused with a
//! located error; a rewritten file keeps its owner, group and mode; what lockward reads is a
//! regular file of bounded size; a manifest a glob matches and that is not read is a finding.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::TestProject;

/// A directory outside the project, with a file that must never change.
struct Victim {
    dir: tempfile::TempDir,
}

impl Victim {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("victim dir");
        std::fs::write(dir.path().join("page.md"), "the victim's page\n").unwrap();
        std::fs::write(dir.path().join("locks.py"), "# the victim's locks\n").unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Every file under the victim's directory, with its contents.
    fn contents(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<(PathBuf, Vec<u8>)> = ignore::WalkBuilder::new(self.path())
            .standard_filters(false)
            .hidden(false)
            .build()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
            .map(|entry| {
                let bytes = std::fs::read(entry.path()).unwrap();
                (entry.into_path(), bytes)
            })
            .collect();
        files.sort();
        files
    }

    fn untouched(&self) -> bool {
        self.contents()
            == vec![
                (
                    self.path().join("locks.py"),
                    b"# the victim's locks\n".to_vec(),
                ),
                (self.path().join("page.md"), b"the victim's page\n".to_vec()),
            ]
    }
}

#[cfg(unix)]
#[test]
fn render_refuses_a_page_that_is_a_symlink_out_of_the_project() {
    let victim = Victim::new();
    let project = TestProject::harbor();
    let page = project.path().join("docs/advisory-locks.md");
    std::fs::remove_file(&page).unwrap();
    std::os::unix::fs::symlink(victim.path().join("page.md"), &page).unwrap();
    for args in [
        &["render"][..],
        &["take", "ADVISORY_LOCK_NEW", "--worker", "new"],
    ] {
        let run = project.run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(
                "`docs/advisory-locks.md` goes through the symlink docs/advisory-locks.md, which \
                 points outside the project"
            ),
            "{args:?}: {}",
            run.stderr
        );
        assert!(victim.untouched(), "{args:?} wrote outside the project");
    }
    // A link that stays inside is followed.
    std::fs::remove_file(&page).unwrap();
    std::os::unix::fs::symlink("generated.md", &page).unwrap();
    let run = project.run(&["render"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        project
            .read("docs/generated.md")
            .contains("ADVISORY_LOCK_INVOICE_ROLLUP")
    );
}

#[test]
fn a_constants_file_or_page_outside_the_project_is_a_located_finding() {
    let victim = Victim::new();
    let project = TestProject::harbor();
    let absolute = victim.path().join("locks.py").display().to_string();
    for (key, value, column) in [
        ("constants", "../victim/locks.py", 13),
        ("constants", absolute.as_str(), 13),
    ] {
        let registry = project.read("lockward.toml");
        let line = registry
            .lines()
            .position(|line| line.starts_with("constants = "))
            .expect("the constants line")
            + 1;
        project.edit(
            "lockward.toml",
            "constants = \"crates/harbor-core/src/locks.rs\"",
            &format!("constants = \"{value}\""),
        );
        let run = project.run(&["check", "--format", "json"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let findings = run.json();
        let finding = findings["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|finding| finding["code"] == "path-outside-project")
            .unwrap_or_else(|| panic!("{key} = {value}: {findings}"))
            .clone();
        assert_eq!(
            (finding["line"].as_u64(), finding["column"].as_u64()),
            (Some(line as u64), Some(column)),
            "{finding}"
        );
        let take = project.run(&["take", "ADVISORY_LOCK_NEW", "--worker", "new"]);
        assert_ne!(take.code, 0, "{}", take.stderr);
        assert!(victim.untouched(), "take wrote to {value}");
        std::fs::write(project.path().join("lockward.toml"), &registry).unwrap();
    }
}

#[test]
fn init_refuses_a_page_outside_the_project() {
    let victim = Victim::new();
    let project = TestProject::harbor();
    std::fs::remove_file(project.path().join("lockward.toml")).unwrap();
    let outside = format!(
        "../{}/p.md",
        victim.path().file_name().unwrap().to_string_lossy()
    );
    let run = project.run(&["init", "--page", &outside]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("climbs out of the project's directory"),
        "{}",
        run.stderr
    );
    assert!(
        !project.path().join("lockward.toml").exists(),
        "init wrote nothing"
    );
    assert!(victim.untouched());
}

#[cfg(unix)]
#[test]
fn take_keeps_each_rewritten_files_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    if !lockward_pg::testing::is_root() {
        lockward_pg::testing::require_or_skip(
            "giving files to another user needs root (take run as root in a user's checkout)",
        );
        return;
    }
    let project = TestProject::harbor();
    let files = [
        "lockward.toml",
        "crates/harbor-core/src/locks.rs",
        "docs/advisory-locks.md",
    ];
    for (n, file) in (0_u32..).zip(files) {
        let path = project.path().join(file);
        // `nobody` and a group of its own per file, and an unusual mode each.
        std::os::unix::fs::chown(&path, Some(65_534), Some(60_000 + n)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640 + n)).unwrap();
    }
    let run = project.run(&["take", "ADVISORY_LOCK_NEW", "--worker", "new"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (n, file) in (0_u32..).zip(files) {
        let metadata = std::fs::metadata(project.path().join(file)).unwrap();
        assert_eq!(
            (metadata.uid(), metadata.gid(), metadata.mode() & 0o7777),
            (65_534, 60_000 + n, 0o640 + n),
            "{file} after take"
        );
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_constants_file_is_refused_at_once_and_the_project_lock_let_go() {
    let project = TestProject::harbor();
    let constants = project.path().join("crates/harbor-core/src/locks.rs");
    std::fs::remove_file(&constants).unwrap();
    mkfifo(&constants);
    let started = Instant::now();
    let run = project.run(&["take", "ADVISORY_LOCK_NEW", "--worker", "new"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("it is a FIFO, not a regular file"),
        "{}",
        run.stderr
    );
    // Generous: it blocked for ever.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn serve_refuses_a_token_file_that_is_not_a_bounded_regular_file() {
    let project = TestProject::harbor();
    let big = project.path().join("token");
    std::fs::write(&big, "x".repeat(5000)).unwrap();
    for (file, says) in [
        (
            PathBuf::from("/dev/zero"),
            "it is a device, not a regular file",
        ),
        (big, "it is larger than the 4 KiB lockward reads"),
    ] {
        let run = project.run(&[
            "serve",
            "--token-file",
            &file.display().to_string(),
            "--database-url",
            "postgres://nobody@127.0.0.1:1/none",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
}

#[cfg(unix)]
#[test]
fn a_matched_manifest_that_is_a_fifo_or_sits_under_a_non_utf8_name_is_a_finding() {
    use std::os::unix::ffi::OsStrExt as _;
    let project = TestProject::harbor();
    std::fs::create_dir_all(project.path().join("plugins/fifo")).unwrap();
    mkfifo(&project.path().join("plugins/fifo/plugin.toml"));
    let odd = project
        .path()
        .join(std::ffi::OsStr::from_bytes(b"plugins/b\xffd"));
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(
        odd.join("plugin.toml"),
        "[plugin]\nname = \"oddly\"\nadvisory_lock_ids = [7_400_001]\n",
    )
    .unwrap();
    let run = project.run(&["plugins", "--format", "json"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("plugins/fifo/plugin.toml")
            && run.stdout.contains("it is a FIFO, not a regular file"),
        "{}",
        run.stdout
    );
    let plugins = project.run(&["plugins"]);
    assert!(
        plugins.stdout.contains("oddly")
            && plugins.stdout.contains("plugins/b\u{fffd}d/plugin.toml"),
        "{}",
        plugins.stdout
    );
}

/// Random symlinks (absolute, relative, climbing) and `..` paths planted under the project, in
/// the page's and the constants file's place and on the way to them: whatever `render` and
/// `take` do, nothing outside the project changes.
#[cfg(unix)]
#[test]
fn nothing_outside_the_project_changes_whatever_links_and_paths_are_planted() {
    let victim = Victim::new();
    let victim_name = victim
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // A fixed sequence of cases, from a seed (no dependency for a dozen draws).
    let mut seed: u64 = 0x5eed_1234_abcd_0001;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(seed >> 33).unwrap() % n
    };
    let victim_abs = victim.path().display().to_string();
    let targets = [
        format!("{victim_abs}/page.md"),
        format!("{victim_abs}/locks.py"),
        victim_abs.clone(),
        format!("../../{victim_name}/page.md"),
        format!("../../../{victim_name}"),
        "../../..".to_owned(),
        "/tmp".to_owned(),
    ];
    let places = [
        "docs/advisory-locks.md",
        "docs",
        "crates/harbor-core/src/locks.rs",
        "crates/harbor-core/src",
        "crates",
    ];
    let pages = [
        "docs/advisory-locks.md".to_owned(),
        format!("docs/../../{victim_name}/page.md"),
        "docs/sub/../advisory-locks.md".to_owned(),
        "crates/../docs/advisory-locks.md".to_owned(),
    ];
    for case in 0..24 {
        let project = TestProject::harbor();
        let place = places[next(places.len())];
        let target = &targets[next(targets.len())];
        let at = project.path().join(place);
        if at.is_dir() {
            std::fs::remove_dir_all(&at).unwrap();
        } else {
            let _ = std::fs::remove_file(&at);
        }
        std::os::unix::fs::symlink(target, &at).unwrap();
        let page = &pages[next(pages.len())];
        project.edit(
            "lockward.toml",
            "page = \"docs/advisory-locks.md\"",
            &format!("page = \"{page}\""),
        );
        for args in [
            &["render"][..],
            &["take", "ADVISORY_LOCK_NEW", "--worker", "new"],
            &["check"],
        ] {
            let run = project.run(args);
            assert!(
                victim.untouched(),
                "case {case}: {place} -> {target}, page {page}: `{}` changed a file outside the \
                 project (exit {}):\n{}",
                args.join(" "),
                run.code,
                run.stderr
            );
            assert!(
                !run.stderr.contains("panicked"),
                "case {case}: {}",
                run.stderr
            );
        }
    }
}
