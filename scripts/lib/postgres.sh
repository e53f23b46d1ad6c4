# shellcheck shell=bash
# Part of scripts/lib.sh, which sources it: PostgreSQL, local or a private cluster under tools/.

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
