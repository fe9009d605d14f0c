//! `lockward check`.

use crate::TestProject;

#[test]
fn the_example_project_passes_check_with_its_legacy_warning() {
    let project = TestProject::harbor();
    let run = project.run(&["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr, "",
        "stderr is not a terminal here: no progress line, no logs"
    );
    assert!(
        run.stdout.contains("warning[constant-outside-block]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("check: no errors, 1 warning, 1 note ("),
        "{}",
        run.stdout
    );
}

#[test]
fn check_json_has_the_documented_shape() {
    let project = TestProject::harbor();
    project.edit("lockward.toml", "worker = \"invoice rollup\"\n", "");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let finding = &report["findings"][0];
    assert_eq!(finding["code"], "missing-worker");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["path"], "lockward.toml");
    assert_eq!(
        (finding["line"].as_u64(), finding["column"].as_u64()),
        (Some(22), Some(12))
    );
    assert!(
        finding["message"]
            .as_str()
            .is_some_and(|m| m.contains("1_001_001"))
    );
    assert_eq!(report["summary"]["errors"], 1);
}

#[test]
fn registry_errors_are_rendered_rustc_style_and_exit_1() {
    let project = TestProject::harbor();
    project.edit("lockward.toml", "defined_in = [", "defined-in = [");
    let run = project.run(&["check"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_stale_page_fails_check_and_render_fixes_it() {
    let project = TestProject::harbor();
    project.edit(
        "docs/advisory-locks.md",
        "- Core constants: 4",
        "- Core constants: 3",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1);
    let finding = &run.json()["findings"][0];
    assert_eq!(finding["code"], "stale-page");
    assert_eq!(finding["path"], "docs/advisory-locks.md");
    assert_eq!(finding["line"], 10);
    assert_eq!(project.run(&["render"]).code, 0);
    assert_eq!(project.run(&["check"]).code, 0);
}

#[test]
fn sarif_output_is_sarif_2_1_0_with_every_rule_described() {
    let project = TestProject::harbor();
    let run = project.run(&["check", "--format", "sarif"]);
    assert_eq!(run.code, 0);
    let sarif = run.json();
    assert_eq!(sarif["version"], "2.1.0");
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    assert!(rules.iter().all(|rule| {
        rule["shortDescription"]["text"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    }));
    let result = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|result| result["ruleId"] == "constant-outside-block")
        .expect("the legacy id's warning");
    assert_eq!(result["ruleId"], "constant-outside-block");
    assert_eq!(result["level"], "warning");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        55
    );
}

#[test]
fn github_output_is_workflow_annotations() {
    let project = TestProject::harbor();
    let run = project.run(&["check", "--format", "github"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains("::warning file=lockward.toml,line=55,col=6,title=constant-outside-block::"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_registry_is_found_by_walking_up_or_given_with_registry() {
    let project = TestProject::harbor();
    let nested = project.path().join("services/api");
    assert_eq!(project.run_in(&nested, &["check"]).code, 0);
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let run = project.run_in(elsewhere.path(), &["check"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no lockward.toml"), "{}", run.stderr);
    let registry = project.path().join("lockward.toml");
    let run = project.run_in(
        elsewhere.path(),
        &["check", "--registry", registry.to_str().expect("UTF-8")],
    );
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn an_unparseable_registry_is_an_error_not_a_panic() {
    let project = TestProject::harbor();
    project.write("lockward.toml", "[project\nname = ");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.json()["findings"][0]["code"], "toml-syntax");
    let run = project.run(&["list"]);
    assert_eq!(run.code, 2, "list needs a valid registry: {run:?}");
    assert!(run.stderr.contains("lockward.toml:1:9"), "{}", run.stderr);
    std::fs::write(
        project.path().join("lockward.toml"),
        b"[project]\nname = \"\xFF\"\n",
    )
    .expect("write");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("not UTF-8") || run.stdout.contains("not UTF-8"),
        "{run:?}"
    );
}

#[test]
fn bad_usage_exits_2() {
    let project = TestProject::harbor();
    assert_eq!(project.run(&["check", "--format", "yaml"]).code, 2);
    assert_eq!(project.run(&["list", "--format", "sarif"]).code, 2);
    assert_eq!(project.run(&["no-such-command"]).code, 2);
}

/// The pre-commit hook refused an unrelated commit because of an untracked scratch file: it
/// checked the work tree. `check --staged` checks what git's index holds.
#[test]
fn check_staged_judges_what_is_being_committed_not_the_work_tree() {
    let project = TestProject::harbor();
    project.commit_all();
    // An untracked scratch file with an id nobody registered.
    project.write(
        "scratch.py",
        "ADVISORY_LOCK_SCRATCH = 4242\npg_advisory_lock(ADVISORY_LOCK_SCRATCH)\n",
    );
    assert_eq!(
        project.run(&["check"]).code,
        1,
        "the work tree has the scratch file"
    );
    let staged = project.run(&["check", "--staged"]);
    assert_eq!(staged.code, 0, "{}{}", staged.stdout, staged.stderr);
    // A bad change staged fails, even once the work tree has it undone.
    project.edit("crates/harbor-core/src/locks.rs", "1_001_001", "1_001_555");
    project.git(&["add", "crates/harbor-core/src/locks.rs"]);
    project.edit("crates/harbor-core/src/locks.rs", "1_001_555", "1_001_001");
    std::fs::remove_file(project.path().join("scratch.py")).unwrap();
    assert_eq!(project.run(&["check"]).code, 0, "the work tree is fine");
    let staged = project.run(&["check", "--staged", "--format", "json"]);
    assert_eq!(staged.code, 1, "{}{}", staged.stdout, staged.stderr);
    assert!(
        staged
            .stdout
            .contains("\"path\": \"crates/harbor-core/src/locks.rs\""),
        "findings name the project's own paths: {}",
        staged.stdout
    );
}

#[test]
fn check_staged_outside_git_says_it_needs_the_index() {
    let project = TestProject::harbor();
    let run = project.run(&["check", "--staged"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--staged checks what git's index holds"),
        "{}",
        run.stderr
    );
}

/// A second project's registry with one lock, `reports`, at `relative` inside `project` (its
/// own directory: its files are not harbor's code).
fn reports_registry(project: &TestProject, relative: &str, id: &str, key: &str) {
    project.write(
        relative,
        &format!(
            "[project]\nname = \"reports\"\n\n[core]\nconstants = \"locks.py\"\n\
             block = {{ start = 2_000_001, end = 2_000_999 }}\n\n\
             [[lock]]\nid = {id}\nconstant = \"ADVISORY_LOCK_REPORT\"\nworker = \"report builder\"\n{key}"
        ),
    );
}

/// Two registries on one database gave out one id (issue 19): `check --with` and `[[share]]`
/// fail on it at this registry's entry, naming the other project and where its entry is; a key
/// in the other key form (the family's id as an exact key) is another lock and passes.
#[test]
fn check_with_another_registry_fails_on_a_key_both_own_in_the_same_form() {
    let project = TestProject::harbor();
    reports_registry(&project, "other/lockward.toml", "1_001_001", "");
    let run = project.run(&["check", "--with", "other/lockward.toml", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let shared: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == "shared-key")
        .collect();
    assert_eq!(shared.len(), 1, "{report:#}");
    assert_eq!(shared[0]["path"], "lockward.toml");
    assert_eq!(shared[0]["line"], 21, "at harbor's entry: {:#}", shared[0]);
    assert_eq!(
        shared[0]["message"],
        "id 1_001_001 (ADVISORY_LOCK_INVOICE_ROLLUP) is project reports's too (1_001_001 \
         (ADVISORY_LOCK_REPORT)): both own bigint key 1001001, so their workers skip each \
         other's cycles"
    );
    assert_eq!(shared[0]["labels"][0]["path"], "other/lockward.toml");
    assert_eq!(shared[0]["labels"][0]["line"], 9);

    // The same by `[[share]]`, in the human report.
    project.edit(
        "lockward.toml",
        "[scan]\n",
        "[[share]]\nregistry = \"other/lockward.toml\"\n\n[scan]\n",
    );
    let run = project.run(&["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("error[shared-key]"), "{}", run.stdout);
    assert!(
        run.stdout.contains("other/lockward.toml:9:"),
        "{}",
        run.stdout
    );

    // The family 1_001_004 as a pair family, the other's 1_001_004 an exact bigint: different
    // key spaces, no collision.
    reports_registry(&project, "other/lockward.toml", "1_001_004", "");
    let run = project.run(&["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Both families: one key space.
    reports_registry(
        &project,
        "other/lockward.toml",
        "1_001_004",
        "key = \"family\"\n",
    );
    let run = project.run(&["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("both own family 1001004"),
        "{}",
        run.stdout
    );
}

/// A shared registry that cannot be read is an error, never a silent pass: its keys are unknown.
#[test]
fn a_shared_registry_that_cannot_be_read_or_is_invalid_is_an_error() {
    let project = TestProject::harbor();
    project.edit(
        "lockward.toml",
        "[scan]\n",
        "[[share]]\nregistry = \"../nowhere/lockward.toml\"\n\n[scan]\n",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|finding| finding["code"] == "shared-registry-unreadable")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(finding["path"], "lockward.toml");
    assert_eq!(finding["line"], 18, "at the [[share]] path: {finding:#}");
    project.write("broken.toml", "[project]\nname = \"x\"\n");
    let run = project.run(&["check", "--with", "broken.toml", "--format", "json"]);
    let report = run.json();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|finding| {
                finding["code"] == "shared-registry-unreadable"
                    && finding["path"] == "broken.toml"
                    && finding["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("breaks its rules"))
            }),
        "{report:#}"
    );
}

/// A registry id that is a migration tool's fixed key fails `check` (issue 19, the catalogue of
/// well-known keys); with Que in the Gemfile, ids Que's job ids will reach are warned about.
#[test]
fn an_id_that_is_a_well_known_key_fails_and_que_warns_about_small_ids() {
    let project = TestProject::harbor();
    project.edit("lockward.toml", "id = 1_001_006", "id = 72_707_369");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let findings = report["findings"].as_array().unwrap();
    let known: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|finding| finding["code"] == "well-known-key")
        .collect();
    assert_eq!(known.len(), 1, "{report:#}");
    assert!(
        known[0]["message"].as_str().is_some_and(
            |m| m.starts_with("id 72_707_369 is the advisory lock key of Prisma Migrate")
        ),
        "{:#}",
        known[0]
    );
    assert!(!findings.iter().any(|f| f["code"] == "que-job-ids"));

    project.write(
        "Gemfile",
        "source 'https://rubygems.org'\ngem 'que', '~> 2.3'\n",
    );
    let run = project.run(&["check", "--format", "json"]);
    let report = run.json();
    let que: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == "que-job-ids")
        .collect();
    // Every exact id below 2^31 that is not retired: the family and the retired id are not.
    assert!(que.len() >= 4, "{report:#}");
    assert!(que.iter().all(|f| f["severity"] == "warning"));
    assert!(
        que.iter().all(|f| f["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Gemfile uses Que"))),
        "{que:#?}"
    );
    assert!(
        !que.iter().any(|f| f["source_line"]
            .as_str()
            .is_some_and(|line| line.contains("1_001_004") || line.contains("1_001_003"))),
        "{que:#?}"
    );
}

/// The well-known keys guide's catalogue table lists every tool of the shipped catalogue, with its
/// holder name and, for a fixed key, the key.
#[test]
fn the_guide_lists_the_catalogue_of_well_known_keys() {
    let readme =
        std::fs::read_to_string(crate::repo_root().join("docs/well-known-keys.md")).unwrap();
    for tool in lockward_registry::well_known::tools() {
        let row = readme
            .lines()
            .find(|line| line.starts_with(&format!("| `{}` | {} |", tool.id, tool.holder)))
            .unwrap_or_else(|| panic!("the guide has no row for {}", tool.id));
        if let lockward_registry::well_known::ToolKey::Fixed(key) = tool.key {
            assert!(row.contains(&format!("`{key}`")), "{row}");
        }
        let repository = tool.source.split('@').next().expect("a repository");
        assert!(row.contains(repository), "{row}");
    }
}
