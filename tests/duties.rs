//! The README's duty table and the subcommands' help are the table in
//! `src/duties/` (`acp::duties::TABLE`), not hand-written copies of it.

use crate::common;

use std::process::Command;

use common::*;

const BEGIN: &str = "<!-- duties:begin (acp duties --markdown) -->\n";
const END: &str = "<!-- duties:end -->";

fn readme_block() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let start = readme
        .find(BEGIN)
        .unwrap_or_else(|| panic!("README.md has no {BEGIN:?}"))
        + BEGIN.len();
    let end = readme[start..]
        .find(END)
        .unwrap_or_else(|| panic!("README.md has no {END:?}"));
    readme[start..start + end].to_owned()
}

fn acp(args: &[&str]) -> String {
    let output = Command::new(acp_bin())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run acp {args:?}: {e}"));
    assert!(output.status.success(), "acp {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap_or_default()
}

#[test]
fn the_readme_table_is_what_acp_duties_prints() {
    let printed = acp(&["duties", "--markdown"]);
    assert_eq!(printed, acp::duties::markdown());
    assert!(
        readme_block() == printed,
        "README.md's duty table is stale: replace the block between its duties markers with \
         the output of `cargo run -- duties --markdown`"
    );
}

#[test]
fn each_subcommand_help_names_the_duties_it_runs() {
    let api = acp(&["api", "--help"]);
    for duty in [
        "reconcile (leader-elected)",
        "alert_evaluation (leader-elected)",
        "change_sequencer (leader-elected)",
        "event_dispatch",
    ] {
        assert!(api.contains(duty), "{duty} missing from:\n{api}");
    }
    assert!(!api.contains("temporal_worker"), "{api}");
    let worker = acp(&["worker", "--help"]);
    assert!(
        worker.contains("event_dispatch (unless ACP_CONSUME_SOURCES=false)"),
        "{worker}"
    );
    assert!(!worker.contains("change_sequencer"), "{worker}");
    let serve = acp(&["serve", "--help"]);
    for entry in acp::duties::TABLE {
        assert!(
            serve.contains(entry.name),
            "{} missing from:\n{serve}",
            entry.name
        );
    }
}
