//! `lockward plugins`.

use crate::TestProject;

#[test]
fn the_example_plugins_are_admitted() {
    let project = TestProject::harbor();
    let run = project.run(&["plugins"]);
    assert_eq!(run.code, 0, "{run:?}");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_refused_plugin_is_reported_with_both_sides_and_exit_1() {
    let project = TestProject::harbor();
    project.write(
        "plugins/loyalty/plugin.toml",
        "[plugin]\nname = \"loyalty\"\nadvisory_lock_ids = [7_300_002, 1_001_500]\n",
    );
    let run = project.run(&["plugins", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let verdicts: Vec<(String, bool)> = report["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("?").to_owned(),
                p["admitted"].as_bool().unwrap_or(true),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("billing".to_owned(), true),
            ("loyalty".to_owned(), false),
            ("shipping".to_owned(), false)
        ],
        "loyalty and shipping share 7_300_002: both are refused"
    );
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(
        codes,
        [
            "plugin-id-shared",
            "plugin-id-in-core-block",
            "plugin-id-shared"
        ]
    );
    let human = project.run(&["plugins"]);
    assert!(
        human.stdout.contains("plugins/loyalty/plugin.toml:3:"),
        "{}",
        human.stdout
    );
    assert_eq!(project.run(&["check"]).code, 1, "check runs admission too");
}

#[test]
fn a_malformed_manifest_is_refused_without_stopping_the_others() {
    let project = TestProject::harbor();
    project.write(
        "plugins/broken/plugin.toml",
        "[plugin]\nadvisory_lock_ids = [\"x\"]\n",
    );
    let run = project.run(&["plugins", "--format", "json"]);
    assert_eq!(run.code, 1);
    let report = run.json();
    let admitted = report["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .filter(|p| p["admitted"] == true)
        .count();
    assert_eq!(admitted, 2);
    assert_eq!(report["findings"][0]["code"], "malformed-manifest");
}
