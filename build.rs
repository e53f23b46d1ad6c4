//! Embeds the built operations console (`console/dist`, made by
//! `scripts/console build`) into the binary: every file with its content
//! type, a strong ETag (SHA-256 of its bytes) and, for text, a gzip copy.
//!
//! Without `console/dist` (a machine without Node, a `cargo build` before
//! the console was built) the list is empty and `/console/` answers a page
//! saying how to build it: the crate always builds.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = root.join("console").join("dist");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    // Watching a path that does not exist would rerun this (and rebuild the
    // crate) on every build: without a build, watch the folder it lands in.
    if dist.is_dir() {
        println!("cargo:rerun-if-changed={}", dist.display());
    } else if root.join("console").is_dir() {
        println!("cargo:rerun-if-changed={}", root.join("console").display());
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }

    let mut files = Vec::new();
    if dist.join("index.html").is_file() {
        collect(&dist, &dist, &mut files);
    }
    files.sort();

    let mut code = String::from("pub static ASSETS: &[Asset] = &[\n");
    for (index, relative) in files.iter().enumerate() {
        let path = dist.join(relative);
        println!("cargo:rerun-if-changed={}", path.display());
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let etag = hex(&Sha256::digest(&bytes)[..16]);
        let content_type = content_type(relative);
        let gzip = if compressible(content_type) && bytes.len() > 512 {
            let gz = out.join(format!("console-asset-{index}.gz"));
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            let compressed = encoder
                .write_all(&bytes)
                .and_then(|()| encoder.finish())
                .ok()
                .filter(|c| c.len() < bytes.len());
            match compressed.map(|c| std::fs::write(&gz, c)) {
                Some(Ok(())) => format!("Some(include_bytes!({:?}))", gz.display().to_string()),
                _ => "None".to_owned(),
            }
        } else {
            "None".to_owned()
        };
        let web_path = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        // A copy of what was read, so the binary holds one consistent build
        // even if `console/dist` is rebuilt while this crate compiles.
        let copy = out.join(format!("console-asset-{index}"));
        if std::fs::write(&copy, &bytes).is_err() {
            continue;
        }
        code.push_str(&format!(
            "    Asset {{ path: {web_path:?}, bytes: include_bytes!({:?}), gzip: {gzip}, etag: \"\\\"{etag}\\\"\", content_type: {content_type:?} }},\n",
            copy.display().to_string(),
        ));
    }
    code.push_str("];\n");
    if let Err(err) = std::fs::write(out.join("console_assets.rs"), code) {
        panic!("writing console_assets.rs: {err}");
    }
}

fn collect(base: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, files);
        } else if let Ok(relative) = path.strip_prefix(base) {
            files.push(relative.to_path_buf());
        }
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        "webmanifest" => "application/manifest+json",
        _ => "application/octet-stream",
    }
}

fn compressible(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || content_type.starts_with("application/json")
        || content_type == "image/svg+xml"
        || content_type == "application/manifest+json"
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
