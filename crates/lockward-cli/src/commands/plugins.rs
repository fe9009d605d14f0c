//! `lockward plugins`: the admission report for every manifest.

use lockward_registry::{Verdict, finding};
use serde_json::json;

use crate::args::{FormatArg, Global};
use crate::report::{self, Summary};
use crate::{Outcome, output};

pub(crate) fn run(global: &Global, format: &FormatArg) -> anyhow::Result<Outcome> {
    let json = format.json();
    let project = super::load(global)?;
    let mut report = project.registry.admit_all(project.manifests.clone());
    finding::sort(&mut report.findings);
    let refused = report
        .verdicts
        .iter()
        .any(|verdict| matches!(verdict, Verdict::Refused { .. }));
    if json {
        let plugins: Vec<_> = report
            .verdicts
            .iter()
            .map(|verdict| match verdict {
                Verdict::Admitted(plugin) => json!({
                    "name": plugin.name(),
                    "manifest": plugin.manifest(),
                    "admitted": true,
                    "ids": plugin.ids().iter().map(lockward_registry::Id::value).collect::<Vec<_>>(),
                }),
                Verdict::Refused { name, manifest } => json!({
                    "name": name,
                    "manifest": manifest,
                    "admitted": false,
                    "ids": [],
                }),
            })
            .collect();
        output::print_json(&json!({
            "plugins": plugins,
            "findings": report.findings,
            "summary": Summary::of(&report.findings),
        }))?;
    } else {
        let mut rows = vec![[
            "VERDICT".to_owned(),
            "PLUGIN".to_owned(),
            "MANIFEST".to_owned(),
            "IDS".to_owned(),
        ]];
        for verdict in &report.verdicts {
            rows.push(match verdict {
                Verdict::Admitted(plugin) => [
                    "admitted".to_owned(),
                    plugin.name().to_owned(),
                    plugin.manifest().to_owned(),
                    plugin
                        .ids()
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                ],
                Verdict::Refused { name, manifest } => [
                    "refused".to_owned(),
                    name.clone().unwrap_or_else(|| "?".to_owned()),
                    manifest.clone(),
                    "-".to_owned(),
                ],
            });
        }
        let mut text = if report.verdicts.is_empty() {
            "no plugin manifests match `[plugins] manifests`\n".to_owned()
        } else {
            crate::table::table(&rows)
        };
        text.push('\n');
        text.push_str(&report::human_all(&report.findings, "plugins"));
        output::print(&text)?;
    }
    Ok(if refused {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}
