//! `lockward list`.

use crate::TestProject;

#[test]
fn list_json_has_the_documented_shape() {
    let project = TestProject::harbor();
    let run = project.run(&["list", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let listing = run.json();
    assert_eq!(listing["project"], "harbor");
    assert_eq!(listing["next_free_id"], 1_001_007);
    assert_eq!(listing["core_constants"], 4);
    let first = &listing["locks"][0];
    assert_eq!(
        first,
        &serde_json::json!({
            "id": 1_001_001, "literal": "1_001_001", "kind": "constant",
            "constant": "ADVISORY_LOCK_INVOICE_ROLLUP", "owner": "core",
            "worker": "invoice rollup", "defined_in": ["crates/harbor-core/src/locks.rs"],
            "key": "exact", "source": "registry", "reason": null
        })
    );
    let ids: Vec<i64> = listing["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .map(|lock| lock["id"].as_i64().expect("id"))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "sorted by numeric id");
    insta::assert_json_snapshot!(listing);
}

#[test]
fn list_shows_a_table_for_people() {
    let project = TestProject::harbor();
    let run = project.run(&["list"]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let project = TestProject::harbor();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lockward"))
        .arg("list")
        .current_dir(project.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A lock taken by name (issue 19): `list` shows the id its library computes, with the name
/// and the library, and the table says it is named.
#[test]
fn list_shows_a_named_lock_at_the_key_its_library_computes() {
    let project = crate::TestProject::harbor();
    project.edit(
        "lockward.toml",
        "[[lock]]\nid = 1_001_006\n",
        "[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"search reindex by name\"\n\n[[lock]]\nid = 1_001_006\n",
    );
    let run = project.run(&["list", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    let named = json["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lock| lock["kind"] == "named")
        .unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(named["id"], -118_288_247, "{named}");
    assert_eq!(named["name"], "reindex");
    assert_eq!(named["hash"], "django-pglocks");
    assert_eq!(named["owner"], "core");
    assert_eq!(named["key"], "exact");
    let table = project.run(&["list"]);
    assert!(
        table.stdout.contains("named \"reindex\" (django-pglocks)"),
        "{}",
        table.stdout
    );
    // check passes: the page is stale, nothing else.
    let check = project.run(&["check", "--format", "json"]);
    let codes: Vec<String> = check.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(codes, ["stale-page"], "{}", check.stdout);
}
