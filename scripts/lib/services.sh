# shellcheck shell=bash
# Part of scripts/lib.sh, which sources it: the brokers, pinned Python tools, and a fresh `acp serve`.

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
    ACP_ADMIN_TOKEN="$("$acp" keys create --name "$name-admin" --operator 2>/dev/null)"
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
