//! `lockward man`: the manual page renders in `man` and names every command.

use std::process::Command;

use crate::TestProject;
use crate::completions::commands_in_help;

/// The commands that get a page: those `--help` lists, less `help` itself (`lockward help CMD`
/// is `lockward CMD --help`, which CMD's page is).
fn commands_with_pages() -> Vec<String> {
    commands_in_help()
        .into_iter()
        .filter(|command| command != "help")
        .collect()
}

#[test]
fn the_manual_page_names_every_command_in_its_roff_source() {
    let run = TestProject::harbor().run(&["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(".TH lockward 1"), "{}", run.stdout);
    for command in commands_with_pages() {
        // roff escapes the hyphen of the page's name.
        let reference = format!("lockward\\-{command}(1)");
        assert!(run.stdout.contains(&reference), "no {reference}");
    }
    assert!(
        !run.stdout.contains("__exec"),
        "the hidden command is listed"
    );
}

#[test]
fn man_renders_the_page_without_warnings_and_lists_every_command() {
    let has_man = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !has_man {
        lockward_pg::testing::require_or_skip("`man` is not installed (Debian package man-db)");
        return;
    }
    let project = TestProject::harbor();
    let page = project.run(&["man"]);
    assert_eq!(page.code, 0, "{}", page.stderr);
    project.write("lockward.1", &page.stdout);
    let output = Command::new("man")
        .args(["--warnings", "-l", "lockward.1"])
        .current_dir(project.path())
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("run man");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert!(output.status.success(), "man failed:\n{stderr}");
    assert!(stderr.is_empty(), "man warned:\n{stderr}");
    // Without a terminal, man prints plain text (no overstrike) to a pager that is `cat`.
    assert!(text.contains("NAME"), "{text}");
    assert!(text.contains("SUBCOMMANDS"), "{text}");
    for command in commands_with_pages() {
        let reference = format!("lockward-{command}(1)");
        assert!(text.contains(&reference), "no {reference} in:\n{text}");
    }
}

#[test]
fn man_out_writes_a_page_for_each_command_with_its_whole_help() {
    let project = TestProject::harbor();
    let run = project.run(&["man", "--out", "man/man1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dir = project.path().join("man/man1");
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .expect("the directory is made")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .collect();
    written.sort();
    let mut expected: Vec<String> = commands_with_pages()
        .iter()
        .map(|command| format!("lockward-{command}.1"))
        .chain(["lockward.1".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(written, expected);
    assert_eq!(run.stdout.lines().count(), expected.len(), "{}", run.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join("lockward.1")).expect("read"),
        project.run(&["man"]).stdout
    );
    // A command's page carries its long help, which its one-line summary in lockward(1) does not.
    let take = std::fs::read_to_string(dir.join("lockward-take.1")).expect("read");
    assert!(take.contains(".TH lockward-take 1"), "{take}");
    let source = format!("\"lockward {}", env!("CARGO_PKG_VERSION"));
    assert!(
        take.contains(&source),
        "the page does not say it is lockward's: {take}"
    );
    assert!(take.contains("gaps are never filled"), "{take}");
}
