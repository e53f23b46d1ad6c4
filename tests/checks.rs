//! The end-to-end checks that are not Rust tests, run as tests so that the
//! suite's one configuration (.config/nextest.toml) schedules them beside
//! the others: the TypeScript client's contract test, the console in
//! Chromium, the fuzzer. Each runs its script against the `acp` binary
//! this build made, with its own service, database and Temporal dev server
//! on free ports; the script's output is the test's.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::common::acp_bin;

/// A free port whose neighbour `+ 10` is free too: the scripts put a dev
/// server's HTTP API there.
fn free_port_pair() -> u16 {
    for _ in 0..100 {
        let Ok(first) = TcpListener::bind("127.0.0.1:0") else {
            continue;
        };
        let Ok(port) = first.local_addr().map(|a| a.port()) else {
            continue;
        };
        if port < u16::MAX - 10 && TcpListener::bind(("127.0.0.1", port + 10)).is_ok() {
            return port;
        }
    }
    panic!("no free pair of ports");
}

fn run_script(script: &str, args: &[&str], ports: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut command = Command::new("bash");
    command
        .arg(root.join("scripts").join(script))
        .args(args)
        .current_dir(root)
        .env("ACP_BINARY", acp_bin());
    for name in ports {
        command.env(name, free_port_pair().to_string());
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("bash scripts/{script}: {e}"));
    assert!(
        status.success(),
        "scripts/{script} {} failed ({status}): its output is above",
        args.join(" ")
    );
}

#[test]
fn ts_client() {
    run_script(
        "ts-client",
        &["check"],
        &["ACP_TS_TEMPORAL_PORT", "ACP_TS_PORT"],
    );
}

#[test]
fn console() {
    run_script(
        "console",
        &["check"],
        &[
            "ACP_CONSOLE_TEMPORAL_PORT",
            "ACP_CONSOLE_PORT",
            "ACP_CONSOLE_OPEN_PORT",
        ],
    );
}

#[test]
fn fuzz() {
    run_script("fuzz", &[], &["ACP_FUZZ_TEMPORAL_PORT", "ACP_FUZZ_PORT"]);
}
