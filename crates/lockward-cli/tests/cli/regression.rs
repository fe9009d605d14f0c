//! One test per reported bug, named after what broke (the way ripgrep keeps `tests/regression.rs`).
//! Each one reproduces the report as it was filed and fails without its fix.

// ---------------------------------------------------------------------------------------------
// Crashes, terminal output and wording.

// ---------------------------------------------------------------------------------------------
// `take`, `retire` and other branches' reservations.

/// The files a killed run can leave: temporary files and the journal, anywhere in the project.
fn lockward_leftovers(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().expect("file type").is_dir() {
            found.extend(lockward_leftovers(&entry.path()));
        } else if name.starts_with('.') && name.contains("lockward-") {
            found.push(entry.path().display().to_string());
        }
    }
    found
}

/// 200 `take`s SIGKILLed 1–10 ms in left registry entries without their constant or page and
/// `.NAME.lockward-PID.tmp` files nothing removed. Each run here is killed at a random moment
/// between 1 ms and the time a whole `take` takes on this machine (at least 10 ms), so the kills
/// land in every phase, the writes included, however slow the build. The figure:
/// `LOCKWARD_KILLED_TAKES=200 cargo test -p lockward-cli --test cli take_killed`; the default
/// keeps the test short.
#[cfg(unix)]
#[test]
fn take_killed_at_any_moment_leaves_nothing_half_done_after_the_next_command() {
    use std::hash::BuildHasher as _;
    let runs: usize = std::env::var("LOCKWARD_KILLED_TAKES")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(40);
    let project = crate::TestProject::harbor();
    let started = std::time::Instant::now();
    let whole = project.run(&["take", "ADVISORY_LOCK_WHOLE", "--worker", "not killed"]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let window = started.elapsed().as_micros().max(10_000);
    let window = u64::try_from(window + window / 5).expect("a take takes less than an age");
    let random = std::collections::hash_map::RandomState::new();
    for run in 0..runs {
        let constant = format!("ADVISORY_LOCK_KILLED_{run}");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args(["take", &constant, "--worker", "killed midway"])
            .current_dir(project.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn lockward");
        let delay = 1_000 + random.hash_one(run) % (window - 999);
        std::thread::sleep(std::time::Duration::from_micros(delay));
        let _ = child.kill();
        child.wait().expect("wait");
    }

    let list = project.run(&["list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(lockward_leftovers(project.path()), Vec::<String>::new());
    let check = project.run(&["check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

/// Temporary files were opened with create+truncate at `.NAME.lockward-PID.tmp`: a symlink
/// planted there made `take` write the registry into the file it points to.
#[cfg(target_os = "linux")]
#[test]
fn take_does_not_write_through_a_symlink_planted_at_a_temporary_name() {
    let project = crate::TestProject::harbor();
    let outside = tempfile::tempdir().expect("temp dir");
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "not lockward's\n").expect("write");
    // The names the old code used, for every pid the next processes can get (Linux hands pids
    // out in increasing order from the last one given).
    let last_pid: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap_or_else(std::process::id);
    for dir_and_name in [
        "lockward.toml",
        "crates/harbor-core/src/locks.rs",
        "docs/advisory-locks.md",
    ] {
        let (dir, name) = dir_and_name.rsplit_once('/').unwrap_or(("", dir_and_name));
        for pid in last_pid + 1..last_pid + 2_000 {
            std::os::unix::fs::symlink(
                &victim,
                project
                    .path()
                    .join(dir)
                    .join(format!(".{name}.lockward-{pid}.tmp")),
            )
            .expect("symlink");
        }
    }

    let run = project.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "not lockward's\n"
    );
    assert!(!project.path().join("lockward.toml").is_symlink());
    assert!(
        project
            .read("lockward.toml")
            .contains("ADVISORY_LOCK_DUNNING")
    );
    assert_eq!(project.run(&["check"]).code, 0);
}

/// `ADVISORY_LOCK_WIP = 1_001_007` written in the constants file but not registered: `take`
/// handed out 1_001_007 again, in Rust and in Go.
#[test]
fn take_skips_an_id_the_constants_file_defines_without_a_registry_entry() {
    let harbor = crate::TestProject::harbor();
    harbor.edit(
        "crates/harbor-core/src/locks.rs",
        "/// nightly export",
        "/// work in progress, not registered yet\npub const ADVISORY_LOCK_WIP: i64 = 1_001_007;\n\n/// nightly export",
    );
    let run = harbor.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_008\n");

    let go = crate::TestProject::copy_of(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/languages"),
    );
    go.edit(
        "lockward.toml",
        "constants = \"locks.py\"",
        "constants = \"locks.go\"",
    );
    go.edit(
        "locks.go",
        "ADVISORY_LOCK_INVOICE_ROLLUP int64 = 1_001_001\n",
        "ADVISORY_LOCK_INVOICE_ROLLUP int64 = 1_001_001\n\tADVISORY_LOCK_WIP int64 = 1_001_002\n",
    );
    let run = go.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_003\n");
}

/// Runs `git ARGS` in `project`, which must succeed.
fn git_in(project: &crate::TestProject, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(project.path())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Harbor in a git repository on `main`, with branch `feature/dunning` that took 1_001_007 for
/// `ADVISORY_LOCK_DUNNING`.
fn harbor_with_a_branch() -> crate::TestProject {
    let project = crate::TestProject::harbor();
    git_in(&project, &["init", "-q", "-b", "main"]);
    git_in(&project, &["add", "-A"]);
    git_in(&project, &["commit", "-q", "-m", "harbor"]);
    git_in(&project, &["checkout", "-q", "-b", "feature/dunning"]);
    let run = project.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);
    assert_eq!(run.stdout, "1_001_007\n", "{}", run.stderr);
    git_in(
        &project,
        &["commit", "-q", "-am", "take 1_001_007 for dunning"],
    );
    git_in(&project, &["checkout", "-q", "main"]);
    project
}

/// Run in a repository git calls "dubious ownership" (another user's), `take` handed out the
/// id another branch holds with only a `git-unavailable` warning, although git is installed.
/// Run as root, the test makes the repository another user's, as reported; as anyone, git also
/// fails on a repository format it does not know, the same failure without a second user.
#[test]
fn take_refuses_when_git_cannot_read_the_other_branches() {
    #[cfg(unix)]
    if rustix::process::geteuid().is_root() {
        let project = harbor_with_a_branch();
        chown_tree(project.path(), 65_534);
        let home = tempfile::tempdir().expect("temp dir");
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args(["take", "ADVISORY_LOCK_EXPORT", "--worker", "export"])
            .current_dir(project.path())
            .env("HOME", home.path())
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .expect("run lockward");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("error: cannot take an id: git cannot read this repository")
                && stderr.contains("detected dubious ownership"),
            "{stderr}"
        );
    }

    let project = harbor_with_a_branch();
    git_in(&project, &["config", "core.repositoryformatversion", "99"]);
    let before = project.read("lockward.toml");

    let run = project.run(&["take", "ADVISORY_LOCK_EXPORT", "--worker", "export"]);

    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("error: cannot take an id: git cannot read this repository")
            && run
                .stderr
                .contains("Expected git repo version <= 1, found 99"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read("lockward.toml"), before);
    let (_, codes) = check_codes(&project);
    assert!(codes.contains(&"git-failed".to_owned()), "{codes:?}");
    assert!(!codes.contains(&"git-unavailable".to_owned()), "{codes:?}");
}

/// Gives `dir` and everything in it to user `uid`.
#[cfg(unix)]
fn chown_tree(dir: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), None).expect("chown");
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("dir entry");
        if entry.file_type().expect("file type").is_dir() {
            chown_tree(&entry.path(), uid);
        } else {
            std::os::unix::fs::lchown(entry.path(), Some(uid), None).expect("chown");
        }
    }
}

/// The codes of `check --format json`'s findings, and its exit status.
fn check_codes(project: &crate::TestProject) -> (i32, Vec<String>) {
    let check = project.run(&["check", "--format", "json"]);
    let codes = check.json()["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| finding["code"].as_str().expect("code").to_owned())
        .collect();
    (check.code, codes)
}

/// Two branches took one id for different constants: `check` passed on both of them and
/// reported `branch-collision` only from a third branch.
#[test]
fn branch_collision_is_reported_on_both_branches_that_took_the_id() {
    let project = harbor_with_a_branch();
    // Main takes 1_001_007 too, before it could see the other branch (not fetched yet).
    git_in(&project, &["tag", "unfetched", "feature/dunning"]);
    git_in(&project, &["branch", "-q", "-D", "feature/dunning"]);
    let run = project.run(&["take", "ADVISORY_LOCK_EXPORT", "--worker", "export"]);
    assert_eq!(run.stdout, "1_001_007\n", "{}", run.stderr);
    git_in(
        &project,
        &["commit", "-q", "-am", "take 1_001_007 for export"],
    );
    git_in(&project, &["branch", "feature/dunning", "unfetched"]);

    let (code, codes) = check_codes(&project);
    assert_eq!(code, 1, "{codes:?}");
    assert!(codes.contains(&"branch-collision".to_owned()), "{codes:?}");
    let human = project.run(&["check"]);
    assert!(
        human.stdout.contains(
            "id 1_001_007 is taken by two branches for different constants: \
             ADVISORY_LOCK_EXPORT on branch main (this work tree) and ADVISORY_LOCK_DUNNING on \
             branch feature/dunning"
        ),
        "{}",
        human.stdout
    );

    git_in(&project, &["checkout", "-q", "feature/dunning"]);
    let (code, codes) = check_codes(&project);
    assert_eq!(code, 1, "{codes:?}");
    assert!(codes.contains(&"branch-collision".to_owned()), "{codes:?}");

    // A constant renamed on one branch is not a collision: the id was there where they forked.
    git_in(&project, &["checkout", "-q", "main"]);
    git_in(&project, &["branch", "-q", "-D", "feature/dunning"]);
    git_in(&project, &["checkout", "-q", "-b", "feature/rename"]);
    for file in [
        "lockward.toml",
        "crates/harbor-core/src/locks.rs",
        "docs/advisory-locks.md",
    ] {
        project.edit(file, "ADVISORY_LOCK_EXPORT", "ADVISORY_LOCK_NIGHTLY_CSV");
    }
    git_in(&project, &["commit", "-q", "-am", "rename"]);
    git_in(&project, &["checkout", "-q", "main"]);
    let (code, codes) = check_codes(&project);
    assert_eq!(code, 0, "{codes:?}");
}

/// `take` wrote keywords as constants (`fn`, `class`, `None`, `True`, `func`): files that do not
/// compile.
#[test]
fn take_refuses_a_reserved_word_of_the_constants_files_language() {
    let cases = [
        ("locks.py", "None", "Python"),
        ("locks.py", "True", "Python"),
        ("locks.py", "class", "Python"),
        ("locks.rs", "fn", "Rust"),
        ("locks.rs", "Self", "Rust"),
        ("locks.go", "func", "Go"),
        ("locks.ts", "class", "TypeScript"),
        ("locks.cjs", "function", "JavaScript"),
        ("locks.rb", "BEGIN", "Ruby"),
        ("Locks.java", "class", "Java"),
        ("Locks.kt", "fun", "Kotlin"),
    ];
    for (file, name, language) in cases {
        let project = crate::TestProject::copy_of(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/languages"),
        );
        project.edit(
            "lockward.toml",
            "constants = \"locks.py\"",
            &format!("constants = \"{file}\""),
        );
        let before = project.read(file);

        let run = project.run(&["take", name, "--worker", "keyword"]);

        assert_eq!(run.code, 2, "{file} {name}: {}", run.stdout);
        assert_eq!(
            run.stderr,
            format!(
                "error: {file}: `{name}` is a reserved word in {language}, so the constant would \
                 not compile; choose another name\n"
            )
        );
        assert_eq!(project.read(file), before);
    }
}

/// `take É` said "use letters, digits and `_`": `É` is a letter, and names are ASCII only.
#[test]
fn take_says_a_constant_name_is_ascii_letters_digits_and_underscores() {
    let project = crate::TestProject::harbor();
    let run = project.run(&["take", "ADVISORY_LOCK_É", "--worker", "accent"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: `ADVISORY_LOCK_É` is not an identifier: use ASCII letters, digits and `_`, not \
         starting with a digit\n"
    );
    let help = project.run(&["take", "--help"]);
    assert!(
        help.stdout.contains("ASCII letters, digits and `_`"),
        "{}",
        help.stdout
    );
}

/// `check` accepted `constants = "locks.h"`, which `take` then refused.
#[test]
fn check_reports_a_constants_file_take_cannot_write() {
    let project = crate::TestProject::harbor();
    project.edit(
        "lockward.toml",
        "constants = \"crates/harbor-core/src/locks.rs\"",
        "constants = \"include/locks.h\"",
    );

    let check = project.run(&["check"]);

    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stdout.contains(
            "error[unsupported-constants-language]: core's constants file `include/locks.h` is \
             not in a language lockward writes constants in\n  --> lockward.toml:10:13\n"
        ),
        "{}",
        check.stdout
    );
    let take = project.run(&["take", "ADVISORY_LOCK_X", "--worker", "x"]);
    assert_eq!(take.code, 2);
    assert!(
        take.stderr.contains("unsupported-constants-language"),
        "{}",
        take.stderr
    );
}

/// `take --plugin no_such_plugin` handed an id over to a plugin nothing declares.
#[test]
fn take_refuses_a_plugin_no_manifest_or_handover_names() {
    let project = crate::TestProject::harbor();
    let before = project.read("lockward.toml");

    let run = project.run(&[
        "take",
        "SHIPPING_LOCK",
        "--worker",
        "w",
        "--plugin",
        "no_such_plugin",
    ]);

    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "error: no plugin manifest names plugin `no_such_plugin`, and no handover does (the \
         project's plugins: billing, shipping); check the name, or write the plugin's manifest \
         first (name = \"no_such_plugin\", advisory_lock_ids = [], where `[plugins] manifests` \
         finds it), then take the id\n"
    );
    assert_eq!(project.read("lockward.toml"), before);
    let known = project.run(&[
        "take",
        "SHIPPING_LOCK",
        "--worker",
        "w",
        "--plugin",
        "shipping",
    ]);
    assert_eq!(known.code, 0, "{}", known.stderr);
}

// ---------------------------------------------------------------------------------------------
// The registry, plugin manifests and the runtime's identity.
