//! The files a user copies: the CI templates in `docs/ci` and the pre-commit hook definition
//! (`.pre-commit-hooks.yaml`). Each one parses as YAML, has the structure its platform needs, and
//! every `lockward` command line in it is accepted by the real binary on the example project, its
//! output being what the next step reads (SARIF valid against the schema, annotations, ...).

use yaml_rust2::{Yaml, YamlLoader};

use crate::TestProject;

/// The workflow that uploads SARIF to GitHub code scanning.
const CODE_SCANNING: &str = "docs/ci/github-code-scanning.yml";
/// The workflow that annotates a pull request.
const ANNOTATIONS: &str = "docs/ci/github-annotations.yml";
/// The GitLab CI job.
const GITLAB: &str = "docs/ci/gitlab-ci.yml";
/// The pre-commit hook definition.
const HOOKS: &str = ".pre-commit-hooks.yaml";

/// GitLab's top-level keywords: every other top-level key is a job.
const GITLAB_KEYWORDS: &[&str] = &[
    "default",
    "include",
    "stages",
    "variables",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];

/// The one YAML document in the repository file `relative`.
fn load(relative: &str) -> Yaml {
    let path = crate::repo_root().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut documents = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|error| panic!("{relative} is not YAML: {error}"));
    assert_eq!(documents.len(), 1, "{relative}: one YAML document");
    documents.remove(0)
}

/// The string at `node`, or a panic naming `what`.
fn text<'a>(node: &'a Yaml, what: &str) -> &'a str {
    node.as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {node:?}"))
}

/// The sequence at `node`, or a panic naming `what`.
fn list<'a>(node: &'a Yaml, what: &str) -> &'a [Yaml] {
    node.as_vec()
        .unwrap_or_else(|| panic!("{what} is not a sequence: {node:?}"))
}

/// A `lockward` command line of a template: its arguments and the file its stdout goes to.
#[derive(Debug, PartialEq)]
struct LockwardCommand {
    args: Vec<String>,
    stdout_to: Option<String>,
}

/// The `lockward` commands among shell `lines` (a `run:` block or a `script:` list), split into
/// words. A word with a quote or a `$` is refused: these templates keep their commands literal so
/// that the test runs exactly what the user's CI runs.
fn lockward_commands<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<LockwardCommand> {
    let mut commands = Vec::new();
    for line in lines.into_iter().flat_map(str::lines) {
        let mut words = line.split_whitespace();
        if words.next() != Some("lockward") {
            continue;
        }
        let mut args = Vec::new();
        let mut stdout_to = None;
        while let Some(word) = words.next() {
            assert!(
                !word.contains(['"', '\'', '$', '`']),
                "{line:?}: keep lockward commands literal"
            );
            match word {
                ">" => stdout_to = Some(words.next().expect("a file after >").to_owned()),
                "||" | "&&" | "|" | ";" => break,
                _ => args.push(word.to_owned()),
            }
        }
        commands.push(LockwardCommand { args, stdout_to });
    }
    commands
}

/// What is wrong with running `command` on the example project: nothing when the CLI accepts it,
/// the example passes, and its output is what the format promises.
fn problems_running(command: &LockwardCommand) -> Vec<String> {
    let project = TestProject::harbor();
    // Templates and hooks run in a git checkout (a hook's `check --staged` reads the index).
    project.commit_all();
    let args: Vec<&str> = command.args.iter().map(String::as_str).collect();
    let run = project.run(&args);
    if run.code != 0 {
        return vec![format!(
            "`lockward {}` exited {} on the example (2 is bad usage): {}",
            args.join(" "),
            run.code,
            run.stderr
        )];
    }
    let format = args
        .windows(2)
        .find(|pair| pair[0] == "--format")
        .map(|pair| pair[1]);
    match format {
        Some("sarif") => sarif_problems(&run.stdout),
        Some("github") => run
            .stdout
            .lines()
            .filter(|line| {
                !["::notice ", "::warning ", "::error "]
                    .iter()
                    .any(|p| line.starts_with(p))
            })
            .map(|line| format!("not a workflow annotation: {line:?}"))
            .collect(),
        _ => Vec::new(),
    }
}

/// Where `stdout` is not SARIF 2.1.0 by the schema the scan's own SARIF test uses.
fn sarif_problems(stdout: &str) -> Vec<String> {
    let sarif: serde_json::Value = match serde_json::from_str(stdout) {
        Ok(sarif) => sarif,
        Err(error) => return vec![format!("stdout is not JSON: {error}")],
    };
    crate::sarif_schema_errors(&sarif)
}

/// Runs every command and panics with every problem found.
fn assert_accepted(relative: &str, commands: &[LockwardCommand]) {
    assert!(!commands.is_empty(), "{relative} runs no lockward command");
    let problems: Vec<String> = commands.iter().flat_map(problems_running).collect();
    assert!(problems.is_empty(), "{relative}: {problems:#?}");
}

/// Checks that each install line installs this workspace's CLI, with its lockfile, from the
/// repository the workspace names: the one place the templates can go stale when it moves.
fn assert_installs_lockward<'a>(relative: &str, lines: impl IntoIterator<Item = &'a str>) {
    let installs: Vec<Vec<&str>> = lines
        .into_iter()
        .flat_map(str::lines)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|words| words.starts_with(&["cargo", "install"]))
        .collect();
    assert_eq!(installs.len(), 1, "{relative}: one install line");
    let words = &installs[0];
    assert!(words.contains(&"--locked"), "{relative}: {words:?}");
    let git = words
        .windows(2)
        .find(|pair| pair[0] == "--git")
        .map(|pair| pair[1]);
    assert_eq!(
        git,
        Some(env!("CARGO_PKG_REPOSITORY")),
        "{relative}: {words:?}"
    );
    assert_eq!(
        words.last(),
        Some(&env!("CARGO_PKG_NAME")),
        "{relative}: {words:?}"
    );
}

/// The `run:` text of every step of every job of a GitHub workflow, after checking the workflow's
/// shape: triggers, jobs on a runner, steps that each either use an action or run a command, the
/// first one checking out every branch.
fn github_steps(relative: &str, workflow: &Yaml) -> Vec<Yaml> {
    assert!(text(&workflow["name"], "name").starts_with("lockward"));
    assert!(
        workflow["on"].as_hash().is_some(),
        "{relative}: `on` lists the triggers"
    );
    let jobs = workflow["jobs"].as_hash().expect("jobs");
    assert!(!jobs.is_empty(), "{relative}: a job");
    let mut all = Vec::new();
    for job in jobs.values() {
        text(&job["runs-on"], "runs-on");
        let steps = list(&job["steps"], "steps");
        for step in steps {
            let uses = step["uses"].as_str();
            let run = step["run"].as_str();
            assert!(
                uses.is_some() != run.is_some(),
                "{relative}: a step either uses an action or runs a command: {step:?}"
            );
            if let Some(action) = uses {
                let (name, version) = action.split_once('@').expect("action@version");
                assert!(name.contains('/') && !version.is_empty(), "{action}");
            }
        }
        assert!(
            text(&steps[0]["uses"], "the first step").starts_with("actions/checkout@"),
            "{relative}: checks out first"
        );
        assert_eq!(
            steps[0]["with"]["fetch-depth"].as_i64(),
            Some(0),
            "{relative}: every branch, for their reservations"
        );
        all.extend(steps.iter().cloned());
    }
    all
}

fn run_lines(steps: &[Yaml]) -> Vec<&str> {
    steps
        .iter()
        .filter_map(|step| step["run"].as_str())
        .collect()
}

#[test]
fn the_code_scanning_workflow_uploads_the_sarif_its_check_writes() {
    let workflow = load(CODE_SCANNING);
    let steps = github_steps(CODE_SCANNING, &workflow);
    assert_installs_lockward(CODE_SCANNING, run_lines(&steps));
    let commands = lockward_commands(run_lines(&steps));
    assert_accepted(CODE_SCANNING, &commands);
    let sarif = commands
        .iter()
        .find(|command| command.args.ends_with(&["--format".into(), "sarif".into()]))
        .expect("a check writing SARIF");
    let upload = steps
        .iter()
        .find(|step| {
            step["uses"]
                .as_str()
                .is_some_and(|uses| uses.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("an upload-sarif step");
    assert_eq!(
        Some(text(&upload["with"]["sarif_file"], "sarif_file")),
        sarif.stdout_to.as_deref(),
        "the upload reads the file check writes"
    );
    assert!(
        text(&upload["if"], "the upload's condition").contains("failure()"),
        "findings (exit 1) are uploaded too"
    );
    let job = workflow["jobs"]
        .as_hash()
        .expect("jobs")
        .values()
        .next()
        .expect("a job");
    assert_eq!(
        text(&job["permissions"]["security-events"], "security-events"),
        "write",
        "upload-sarif needs to write security events"
    );
}

#[test]
fn the_annotations_workflow_runs_check_with_the_github_format() {
    let workflow = load(ANNOTATIONS);
    let steps = github_steps(ANNOTATIONS, &workflow);
    assert_installs_lockward(ANNOTATIONS, run_lines(&steps));
    let commands = lockward_commands(run_lines(&steps));
    assert_accepted(ANNOTATIONS, &commands);
    assert!(
        commands
            .iter()
            .any(|command| command.args == ["check", "--format", "github"]
                && command.stdout_to.is_none()),
        "annotations go to the job's stdout: {commands:?}"
    );
}

#[test]
fn the_gitlab_job_runs_check_in_its_script() {
    let pipeline = load(GITLAB);
    let jobs: Vec<&Yaml> = pipeline
        .as_hash()
        .expect("a mapping")
        .iter()
        .filter(|(key, _)| !GITLAB_KEYWORDS.contains(&text(key, "a top-level key")))
        .map(|(_, job)| job)
        .collect();
    assert_eq!(jobs.len(), 1, "one job");
    let job = jobs[0];
    text(&job["image"], "image");
    text(&job["stage"], "stage");
    let lines = |key: &str| -> Vec<&str> {
        list(&job[key], key)
            .iter()
            .map(|line| text(line, key))
            .collect()
    };
    assert_installs_lockward(GITLAB, lines("before_script"));
    let commands = lockward_commands(lines("script"));
    assert_accepted(GITLAB, &commands);
    assert_eq!(
        lines("script").last(),
        Some(&"lockward check"),
        "the job's status is the check's"
    );
    let artifacts: Vec<&str> = list(&job["artifacts"]["paths"], "artifacts")
        .iter()
        .map(|path| text(path, "an artifact"))
        .collect();
    assert!(
        commands
            .iter()
            .filter_map(|command| command.stdout_to.as_deref())
            .all(|written| artifacts.contains(&written)),
        "every report written is kept: {artifacts:?}"
    );
}

#[test]
fn the_pre_commit_hooks_run_a_check_the_cli_accepts_on_the_whole_tree() {
    let hooks = load(HOOKS);
    let hooks = list(&hooks, "the hooks");
    let languages: Vec<(&str, &str)> = hooks
        .iter()
        .map(|hook| (text(&hook["id"], "id"), text(&hook["language"], "language")))
        .collect();
    assert_eq!(
        languages,
        [
            ("lockward-check", "python"),
            ("lockward-check-system", "system")
        ],
        "one hook pre-commit installs (pip, pyproject.toml), one using the lockward on the PATH"
    );
    assert!(
        crate::repo_root().join("pyproject.toml").is_file(),
        "a python hook needs the repository to be pip-installable"
    );
    for hook in hooks {
        text(&hook["name"], "name");
        assert_eq!(
            hook["pass_filenames"].as_bool(),
            Some(false),
            "check reads the whole project (as the index holds it), not the files given: {hook:?}"
        );
        assert_eq!(hook["always_run"].as_bool(), Some(true), "{hook:?}");
        let entry = text(&hook["entry"], "entry");
        let args = hook["args"]
            .as_vec()
            .map(|args| {
                args.iter()
                    .map(|arg| text(arg, "an arg"))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let line = std::iter::once(entry)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" ");
        let commands = lockward_commands([line.as_str()]);
        assert_accepted(HOOKS, &commands);
    }
}

#[test]
fn a_command_the_cli_refuses_is_caught() {
    let commands = lockward_commands([
        "cargo install --locked lockward-cli\nlockward check --format yaml > out.yaml || true",
    ]);
    assert_eq!(
        commands,
        [LockwardCommand {
            args: vec!["check".into(), "--format".into(), "yaml".into()],
            stdout_to: Some("out.yaml".into()),
        }]
    );
    let problems = problems_running(&commands[0]);
    assert!(
        problems.len() == 1 && problems[0].contains("exited 2"),
        "{problems:?}"
    );
}

#[test]
fn output_that_is_not_what_the_format_promises_is_caught() {
    assert!(!sarif_problems(r#"{"version": "2.1.0", "runs": [{}]}"#).is_empty());
    assert!(sarif_problems("not json")[0].contains("not JSON"));
}
