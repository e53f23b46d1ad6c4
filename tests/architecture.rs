//! The layers (docs/ARCHITECTURE.md) are crates: `acp-domain` <- `acp-store`,
//! `acp-temporal` <- `acp-service` <- the server (this package), and Cargo
//! refuses a path to a crate that is not a dependency. What Cargo cannot
//! say is checked here: which dependencies each crate may have (a line
//! added to a manifest would otherwise quietly undo a layer), and, inside
//! the server's `src/`, that a module uses its own layer and those below
//! it, never one above.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of the server crate and its layer, lowest first.
const LAYERS: [(&str, u8); 10] = [
    // The HTTP metrics and the text page: a leaf.
    ("metrics", 0),
    // Drivers: HTTP (its error shape too), brokers, and the Temporal worker
    // (its activities call the use cases; the workflows and the activities'
    // contract they call are acp-temporal's).
    ("api", 1),
    ("brokers", 1),
    ("worker", 1),
    // Wiring, and the background duties: their loops and which process
    // starts which (the table names the worker and the consumers).
    ("config", 2),
    ("duties", 2),
    ("app", 2),
    ("cli", 2),
    ("main", 2),
    ("lib", 2),
];

fn layer_of(module: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|(_, layer)| *layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate modules a source text names: `crate::x` and `use crate::{x, …}`.
fn named_modules(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap_or(&file);
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default()
            .trim_end_matches(".rs")
            .to_owned();
        let own = layer_of(&top).unwrap_or_else(|| {
            panic!("src/{top} has no layer: add it to LAYERS and docs/ARCHITECTURE.md")
        });
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
        for module in named_modules(&text) {
            let Some(theirs) = layer_of(&module) else {
                continue;
            };
            if theirs > own {
                upward
                    .entry(relative.display().to_string())
                    .or_default()
                    .push(module);
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules using a layer above their own (see docs/ARCHITECTURE.md): {upward:#?}"
    );
}

#[test]
fn the_reader_finds_both_forms_of_a_crate_path() {
    let text = "use crate::worker::spawn;\nuse crate::{api, app::Service};\nlet x = crate::metrics::HTTP_REQUESTS;";
    assert_eq!(named_modules(text), ["worker", "api", "app", "metrics"]);
}

/// Handlers speak HTTP and call the use cases; the other drivers (the
/// worker, the broker consumers, the background loops) are none of theirs.
#[test]
fn handlers_do_not_name_the_other_drivers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("api"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut naming: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{e}"));
        for module in named_modules(&text) {
            if ["worker", "brokers", "duties"].contains(&module.as_str()) {
                naming
                    .entry(
                        file.strip_prefix(&src)
                            .unwrap_or(file)
                            .display()
                            .to_string(),
                    )
                    .or_default()
                    .push(module);
            }
        }
    }
    assert!(
        naming.is_empty(),
        "handlers naming another driver: call a service (acp-service) instead: {naming:#?}"
    );
}

/// The packages named in a manifest's `[dependencies]` (not its dev- or
/// build-dependencies, which do not ship in the layer).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
        } else if inside && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().to_owned());
            }
        }
    }
    names
}

#[test]
fn the_manifest_reader_reads_only_the_dependencies() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\n# a note\nserde = \"1\"\nacp-domain = { path = \"../domain\" }\n\n[dev-dependencies]\ntokio = \"1\"\n";
    assert_eq!(dependencies(manifest), ["serde", "acp-domain"]);
}

/// What each crate must not depend on: a crate above its layer, or I/O
/// below the use cases where none belongs.
const FORBIDDEN: [(&str, &[&str]); 5] = [
    // The decisions: no crate of ours, no I/O.
    (
        "crates/domain",
        &[
            "acp-store",
            "acp-temporal",
            "acp-service",
            "sqlx",
            "tokio",
            "tonic",
            "reqwest",
            "axum",
            "hyper",
            "lapin",
            "async-nats",
            "temporalio-",
        ],
    ),
    (
        "crates/store",
        &["acp-temporal", "acp-service", "axum", "temporalio-"],
    ),
    // The Temporal adapter names activities by their contract; what they do
    // to the rows is a use case the worker calls.
    (
        "crates/temporal",
        &["acp-store", "acp-service", "sqlx", "axum"],
    ),
    // Use cases: no HTTP types.
    ("crates/service", &["axum", "utoipa-axum", "tower-http"]),
    // The server reaches PostgreSQL through the use cases only (tests may
    // name the store: it is a dev-dependency).
    (".", &["acp-store"]),
];

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offending: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (dir, forbidden) in FORBIDDEN {
        let path = root.join(dir).join("Cargo.toml");
        let manifest =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let names = dependencies(&manifest);
        assert!(
            !names.is_empty(),
            "{} names no dependencies",
            path.display()
        );
        for name in names {
            if forbidden.iter().any(|f| name.starts_with(f)) {
                offending.entry(dir).or_default().push(name);
            }
        }
    }
    assert!(
        offending.is_empty(),
        "dependencies across the layers (docs/ARCHITECTURE.md): {offending:#?}"
    );
}

/// The integration tests are one binary (`autotests = false`): a file under
/// `tests/` that `tests/suite.rs` does not declare would never compile or run.
#[test]
fn the_suite_declares_every_test_file() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = std::fs::read_to_string(tests.join("suite.rs")).unwrap_or_default();
    let declared: Vec<&str> = suite
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&tests).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let is_test = if path.is_dir() {
            path.join("main.rs").is_file() || path.join("mod.rs").is_file()
        } else {
            path.extension().is_some_and(|e| e == "rs") && name != "suite"
        };
        if is_test && !declared.contains(&name) {
            missing.push(name.to_owned());
        }
    }
    assert!(declared.len() > 30, "tests/suite.rs declares {declared:?}");
    assert!(
        missing.is_empty(),
        "not declared in tests/suite.rs: {missing:?}"
    );
}
