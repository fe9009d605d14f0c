//! `lockward completions`: the scripts load in the real shells and offer every command.

use std::path::Path;
use std::process::Command;

use crate::TestProject;

/// The commands `lockward --help` lists (`help` included), read from its `Commands:` section:
/// what the completions and the manual must offer, taken from the help people read rather than
/// from the generators under test.
pub(crate) fn commands_in_help() -> Vec<String> {
    let help = TestProject::harbor().run(&["--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let section = help
        .stdout
        .split_once("Commands:\n")
        .unwrap_or_else(|| panic!("no Commands: in --help: {}", help.stdout))
        .1;
    let commands: Vec<String> = section
        .lines()
        .take_while(|line| !line.trim().is_empty())
        // A description that wraps continues on a line indented deeper than the names.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .map(|line| line.split_whitespace().next().expect("a name").to_owned())
        .collect();
    assert!(
        commands.len() >= 10,
        "too few commands in --help: {commands:?}"
    );
    commands
}

/// The script `lockward completions SHELL` prints, written to a file in `project`.
fn script(project: &TestProject, shell: &str) -> std::path::PathBuf {
    let run = project.run(&["completions", shell]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let path = project.path().join(format!("completion.{shell}"));
    std::fs::write(&path, &run.stdout).expect("write the script");
    path
}

/// Whether `program` runs here; when it does not, the test is skipped with the reason (a
/// failure under `LOCKWARD_REQUIRE_ALL_TESTS=1`).
fn installed(program: &str, package: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        lockward_pg::testing::require_or_skip(&format!(
            "`{program}` is not installed (Debian package {package})"
        ));
    }
    found
}

/// Runs `script` in `shell -c`, returning stdout; fails the test when the shell does.
fn shell(shell: &str, script: &str, dir: &Path) -> String {
    let output = Command::new(shell)
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {shell}: {error}"));
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert!(
        output.status.success(),
        "{shell} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stderr.is_empty(), "{shell} complained:\n{stderr}");
    stdout
}

/// What bash's completion of `lockward WORDS…` (the last word being completed) offers, through
/// the function `complete -p lockward` names after sourcing the script.
fn bash_completes(file: &Path, words: &[&str]) -> Vec<String> {
    let words_array: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let line = words.join(" ");
    let program = format!(
        r#"source '{file}'
spec=$(complete -p lockward) || exit 3
function=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
[ -n "$function" ] || {{ echo "no -F function in: $spec" >&2; exit 4; }}
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
"$function" lockward "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        file = file.display(),
        words = words_array.join(" "),
    );
    shell("bash", &program, file.parent().expect("a directory"))
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_bash_script_registers_a_completion_for_lockward_in_a_real_bash() {
    if !installed("bash", "bash") {
        return;
    }
    let project = TestProject::harbor();
    let file = script(&project, "bash");
    let spec = shell(
        "bash",
        &format!("source '{}' && complete -p lockward", file.display()),
        project.path(),
    );
    assert!(spec.starts_with("complete "), "{spec}");
    assert!(spec.contains(" -F "), "{spec}");
    assert!(spec.trim_end().ends_with(" lockward"), "{spec}");
}

#[test]
fn bash_completes_every_command_the_help_lists_and_not_the_internal_one() {
    if !installed("bash", "bash") {
        return;
    }
    let project = TestProject::harbor();
    let file = script(&project, "bash");
    let offered = bash_completes(&file, &["lockward", ""]);
    for command in commands_in_help() {
        assert!(offered.contains(&command), "{command} not in {offered:?}");
    }
    assert!(
        !offered.iter().any(|word| word.starts_with("__")),
        "the hidden command is offered: {offered:?}"
    );
}

#[test]
fn bash_completes_the_formats_check_prints_after_its_format_option() {
    if !installed("bash", "bash") {
        return;
    }
    let project = TestProject::harbor();
    let file = script(&project, "bash");
    let mut offered = bash_completes(&file, &["lockward", "check", "--format", ""]);
    offered.sort();
    assert_eq!(offered, ["github", "human", "json", "sarif"]);
}

#[test]
fn the_zsh_script_parses_in_a_real_zsh_and_names_every_command() {
    if !installed("zsh", "zsh") {
        return;
    }
    let project = TestProject::harbor();
    let file = script(&project, "zsh");
    shell(
        "zsh",
        &format!("zsh -n '{}'", file.display()),
        project.path(),
    );
    let text = std::fs::read_to_string(&file).expect("read the script");
    assert!(text.starts_with("#compdef lockward"), "{text}");
    for command in commands_in_help() {
        assert!(
            text.contains(&format!("'{command}:")),
            "zsh's script does not offer {command}"
        );
    }
}

#[test]
fn fish_completes_every_command_the_help_lists_from_the_fish_script() {
    if !installed("fish", "fish") {
        return;
    }
    let project = TestProject::harbor();
    let file = script(&project, "fish");
    shell(
        "fish",
        &format!("fish --no-execute '{}'", file.display()),
        project.path(),
    );
    let offered = shell(
        "fish",
        &format!(
            "source '{}'; complete --do-complete 'lockward '",
            file.display()
        ),
        project.path(),
    );
    let offered: Vec<&str> = offered
        .lines()
        .map(|line| line.split('\t').next().expect("a candidate"))
        .collect();
    for command in commands_in_help() {
        assert!(
            offered.contains(&command.as_str()),
            "{command} not in {offered:?}"
        );
    }
}

#[test]
fn completions_out_writes_each_shells_script_under_the_name_it_loads() {
    let project = TestProject::harbor();
    let run = project.run(&["completions", "--out", "generated/completions"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dir = project.path().join("generated/completions");
    for (name, shell) in [
        ("lockward", "bash"),
        ("_lockward", "zsh"),
        ("lockward.fish", "fish"),
    ] {
        let written = std::fs::read_to_string(dir.join(name)).expect("the script is written");
        assert_eq!(
            written,
            project.run(&["completions", shell]).stdout,
            "{name}"
        );
        assert!(
            run.stdout
                .contains(&format!("generated/completions/{name}\n")),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn completions_without_a_shell_or_out_is_bad_usage() {
    let run = TestProject::harbor().run(&["completions"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("<SHELL>"), "{}", run.stderr);
}

#[test]
fn completions_out_into_a_file_says_which_path_it_cannot_use() {
    let project = TestProject::harbor();
    let run = project.run(&["completions", "--out", "lockward.toml"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .starts_with("error: lockward.toml: cannot create the directory"),
        "{}",
        run.stderr
    );
}
