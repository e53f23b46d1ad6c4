//! The layers of `src/` (docs/ARCHITECTURE.md): a module may use its own
//! layer and the ones below it, never one above. Read from the sources, so
//! a `use crate::api::…` in a store fails here, not in a review. Handlers
//! do not name the store at all: they call the use cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of the crate and its layer, lowest first.
const LAYERS: [(&str, u8); 17] = [
    // Decisions and shared leaves: no I/O.
    ("domain", 0),
    ("faults", 0),
    ("metrics", 0),
    // Adapters: PostgreSQL, Temporal, key checks.
    ("store", 1),
    ("temporal", 1),
    ("auth", 1),
    // Use cases.
    ("service", 2),
    // Drivers: HTTP (its error shape too), brokers, the background loops,
    // and the Temporal worker (its activities call the use cases; the
    // workflows and the activities' contract they call stay in `temporal`).
    ("api", 3),
    ("brokers", 3),
    ("alerting", 3),
    ("reconcile", 3),
    ("worker", 3),
    // Wiring.
    ("config", 4),
    ("app", 4),
    ("cli", 4),
    ("main", 4),
    ("lib", 4),
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
    let text = "use crate::store::RunStore;\nuse crate::{api, service::Runs};\nlet x = crate::metrics::RUNS;";
    assert_eq!(named_modules(text), ["store", "api", "service", "metrics"]);
}

/// The one file under `src/api` that names `crate::store`, by design and no
/// handler: `api/error.rs` gives the store's typed failures (`StoreError`,
/// which handlers only meet inside `service::Error`) their HTTP status.
const API_FILES_NAMING_THE_STORE: [&str; 1] = ["api/error.rs"];

/// Handlers reach PostgreSQL only through the use cases: what they pass and
/// get is the services' or the domain's, so no file under `src/api` but
/// the error shape names `crate::store` (docs/ARCHITECTURE.md).
#[test]
fn handlers_do_not_name_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("api"), &mut files);
    let mut naming: Vec<String> = files
        .iter()
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{e}"));
            named_modules(&text).iter().any(|m| m == "store")
        })
        .map(|file| {
            file.strip_prefix(&src)
                .unwrap_or(file)
                .display()
                .to_string()
        })
        .collect();
    naming.sort();
    assert_eq!(
        naming, API_FILES_NAMING_THE_STORE,
        "a handler names `crate::store`: call a service (src/service) and use its or the domain's types"
    );
}

/// The Temporal adapter speaks the SDK and protobuf: its workflows name
/// activities by their contract, and what an activity does to the rows is a
/// use case the worker calls (`service::execution`, `service::deliveries`).
/// So no file under `src/temporal` names `crate::store`.
#[test]
fn the_temporal_adapter_does_not_name_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("temporal"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    let naming: Vec<String> = files
        .iter()
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{e}"));
            named_modules(&text).iter().any(|m| m == "store")
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        naming.is_empty(),
        "the Temporal adapter names `crate::store`: move the rows' part into a use case (src/service) the worker calls: {naming:?}"
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
